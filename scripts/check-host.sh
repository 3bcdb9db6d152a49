#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Checks that need no guest and take seconds (issue 7), run on the host:
#
#   versions  VERSION, dkms.conf PACKAGE_VERSION, the newest debian/changelog
#             entry and Kbuild agree (scripts/check-versions.sh); the module
#             takes MODULE_VERSION from VERSION (MODULE_VERSION(
#             USER_EVENTS_VERSION) in the source); and, for every module
#             given, `modinfo -F version` is VERSION;
#   docs      every Documentation/*.rst builds with docutils without a
#             warning (scripts/build-docs.sh, HTML in build/docs/);
#   refs      README.md exists and its code fences are closed; in README.md,
#             Documentation/*.rst, debian/README.Debian and bench/README.md
#             every `make <target>` names a target of the Makefile and every
#             repository path in backquotes (or markdown link) exists.
#
#   scripts/check-host.sh [user_events.ko ...]
#   scripts/check-host.sh --packages     print the packages it installs
#
# Installs what it needs when missing (python3-docutils for docutils,
# dpkg-dev for dpkg-parsechangelog, kmod for modinfo) with apt-get, like
# scripts/setup.sh. Takes no build lock: `make check` may call it while it
# holds one.
#
# Prints one TAP-style "ok - host: <what>" or "not ok - host: <what>" line
# per check on stdout (tool messages go to stderr) and
# "# host: N passed, N failed" last; exits non-zero iff a check failed.
# Environment: UE_BUILD_DIR replaces build/ (for build/docs/).
set -uo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PACKAGES=(python3-docutils dpkg-dev kmod)

case ${1:-} in
--packages)
	printf '%s\n' "${PACKAGES[@]}"
	exit 0
	;;
-*) ue_die "usage: $0 [user_events.ko ...] | --packages" ;;
esac

pass=0
fail=0
ok() { echo "ok - host: $*"; pass=$((pass + 1)); }
notok() { echo "not ok - host: $*"; fail=$((fail + 1)); }

# Pass on the ok / not ok lines of another script under "host: <prefix>";
# other lines go to stderr. Adds a failure when the script failed without
# saying so in a "not ok" line.
relay() { # relay <what> <command...>
	local what=$1 out line status=0 notoks=0
	shift
	out=$("$@") || status=$?
	while IFS= read -r line; do
		case $line in
		'not ok - '*) notok "${line#not ok - }"; notoks=$((notoks + 1)) ;;
		'ok - '*) ok "${line#ok - }" ;;
		'' | [0-9]*' passed, '[0-9]*' failed') ;;
		*) printf '%s\n' "$line" >&2 ;;
		esac
	done <<<"$out"
	if ((status != 0 && notoks == 0)); then
		notok "$what: ${1#"$UE_REPO"/} exited with status $status"
	fi
}

if ue_install_packages "${PACKAGES[@]}"; then
	ok "packages: ${PACKAGES[*]} installed"
else
	notok "packages: cannot install $(ue_missing_packages "${PACKAGES[@]}" | tr '\n' ' ')(the checks that need them fail)"
fi

# -- versions ------------------------------------------------------------------
relay versions "$UE_REPO/scripts/check-versions.sh" "$@"

# MODULE_VERSION comes from VERSION: Kbuild passes it as USER_EVENTS_VERSION
# (checked above), and the module must use exactly that.
mapfile -t mv_files < <(cd "$UE_REPO" &&
	grep -l -E '^[[:space:]]*MODULE_VERSION\([[:space:]]*USER_EVENTS_VERSION[[:space:]]*\)' -- *.c 2>/dev/null)
mapfile -t mv_all < <(cd "$UE_REPO" && grep -n -E '^[[:space:]]*MODULE_VERSION\(' -- *.c 2>/dev/null)
if ((${#mv_files[@]} == 1 && ${#mv_all[@]} == 1)); then
	ok "versions: MODULE_VERSION(USER_EVENTS_VERSION) in ${mv_files[0]}"
else
	notok "versions: want exactly one MODULE_VERSION(USER_EVENTS_VERSION) in *.c, found: ${mv_all[*]:-none}"
fi
(($#)) || echo "# host: no module given: MODULE_VERSION checked in the source only" >&2

# -- docs ----------------------------------------------------------------------
relay docs "$UE_REPO/scripts/build-docs.sh"

# -- references in the docs ------------------------------------------------------
if [[ -f $UE_REPO/README.md ]]; then
	fences=$(grep -c -E '^[[:space:]]{0,3}(```|~~~)' "$UE_REPO/README.md" || true)
	if ((fences % 2 == 0)); then
		ok "refs: README.md exists, its $((fences / 2)) code fences are closed"
	else
		notok "refs: README.md has an unclosed code fence ($fences fence lines)"
	fi
else
	notok "refs: README.md missing"
fi

# The Makefile's targets (mk/*.mk included), from make's database.
targets=$(make -C "$UE_REPO" --no-print-directory -pRrq __check_host_none__ 2>/dev/null |
	awk -F: '/^# Not a target/ { skip = 1; next }
		/^[a-zA-Z0-9][a-zA-Z0-9_.-]*:([^=]|$)/ { if (!skip) print $1 }
		{ skip = 0 }' | sort -u)
if [[ -z $targets ]]; then
	notok "refs: cannot list the Makefile's targets (make -p)"
fi

shopt -s nullglob
docs=("$UE_REPO"/README.md "$UE_REPO"/Documentation/*.rst
	"$UE_REPO"/debian/README.Debian "$UE_REPO"/bench/README.md)
shopt -u nullglob
existing=()
for f in "${docs[@]}"; do
	[[ -f $f ]] && existing+=("$f")
done

if [[ -n $targets ]] && ((${#existing[@]})); then
	relay refs env UE_TARGETS="$targets" /usr/bin/python3 - "$UE_REPO" "${existing[@]}" <<'EOF'
import glob, os, re, sys

repo, files = sys.argv[1], sys.argv[2:]
targets = set(os.environ["UE_TARGETS"].split())
# Top-level entries of the repository that a documented path may start with.
tops = {e for e in os.listdir(repo) if not e.startswith(".") and e != "build"}

span = re.compile(r"``(.+?)``|`([^`\n]+)`")
link = re.compile(r"\]\(([^)\s]+)\)")
# make [VAR=value ...] target (options such as -C end the match)
make = re.compile(r"(?:^|[\s;&|(])make((?:\s+[A-Za-z_][A-Za-z0-9_]*=\S*)*)\s+([a-z][a-z0-9-]*)\b(?![=/.])")
prompt = re.compile(r"^\s*(?:[$#]\s+)?(?:sudo\s+)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*make\s")

for path in files:
    rel = os.path.relpath(path, repo)
    text = open(path, encoding="utf-8").read()
    # Code: backquoted spans and lines that are make command lines.
    code = [a or b for a, b in span.findall(text)]
    code += [l for l in text.splitlines() if prompt.match(l)]

    named, bad = set(), set()
    for c in code:
        for m in make.finditer(c):
            named.add(m.group(2))
            if m.group(2) not in targets:
                bad.add(m.group(2))
    if bad:
        print(f"not ok - refs: {rel} names make targets that do not exist: {' '.join(sorted(bad))}")
    else:
        print(f"ok - refs: {rel}: the {len(named)} make targets it names exist")

    paths, missing = set(), set()
    for c in code:
        c = c.strip().rstrip(".,:;")
        if " " in c or any(ch in c for ch in "<>${}="):
            continue
        first = c.split("/", 1)[0]
        if "/" not in c or first not in tops:
            continue
        paths.add(c)
        if not glob.glob(os.path.join(repo, c)):
            missing.add(c)
    if path.endswith(".md"):
        for target in link.findall(text):
            if re.match(r"^[a-z]+:|^#", target):
                continue
            target = target.split("#", 1)[0]
            paths.add(target)
            if not os.path.exists(os.path.join(os.path.dirname(path), target)):
                missing.add(target)
    if missing:
        print(f"not ok - refs: {rel} names paths that do not exist: {' '.join(sorted(missing))}")
    else:
        print(f"ok - refs: {rel}: the {len(paths)} repository paths it names exist")
EOF
fi

echo "# host: $pass passed, $fail failed"
((fail == 0))
