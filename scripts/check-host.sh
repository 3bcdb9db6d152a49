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
#   dkms      what DKMS 2.8 (Debian 11's 2.8.4, which ignores
#             BUILD_EXCLUSIVE_CONFIG) decides from dkms.conf for a list of
#             kernel releases and architectures: the same two bash regex
#             tests on BUILD_EXCLUSIVE_KERNEL and BUILD_EXCLUSIVE_ARCH;
#   docs      every Documentation/*.rst builds with docutils without a
#             warning (scripts/build-docs.sh, HTML in build/docs/);
#   refs      README.md exists and its code fences are closed; in README.md,
#             Documentation/*.rst, debian/README.Debian and tests/bench/README.md
#             every `make <target>` names a target of the Makefile and every
#             repository path in backquotes (or markdown link) exists;
#   kbuild    Kbuild's UE_HAVE_* header probes give, on every kernel headers
#             tree of the targets on this host, the features their versions
#             have (scripts/check-kbuild-probes.sh).
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

UE_TAP=host

if ue_install_packages "${PACKAGES[@]}"; then
	ue_ok "packages: ${PACKAGES[*]} installed"
else
	ue_notok "packages: cannot install $(ue_missing_packages "${PACKAGES[@]}" | tr '\n' ' ')(the checks that need them fail)"
fi

# -- versions ------------------------------------------------------------------
ue_relay "" "$UE_REPO/scripts/check-versions.sh" "$@"

# MODULE_VERSION comes from VERSION: Kbuild passes it as USER_EVENTS_VERSION
# (checked above), and the module must use exactly that.
mapfile -t mv_files < <(cd "$UE_REPO" &&
	grep -l -E '^[[:space:]]*MODULE_VERSION\([[:space:]]*USER_EVENTS_VERSION[[:space:]]*\)' -- *.c 2>/dev/null)
mapfile -t mv_all < <(cd "$UE_REPO" && grep -n -E '^[[:space:]]*MODULE_VERSION\(' -- *.c 2>/dev/null)
if ((${#mv_files[@]} == 1 && ${#mv_all[@]} == 1)); then
	ue_ok "versions: MODULE_VERSION(USER_EVENTS_VERSION) in ${mv_files[0]}"
else
	ue_notok "versions: want exactly one MODULE_VERSION(USER_EVENTS_VERSION) in *.c, found: ${mv_all[*]:-none}"
fi
(($#)) || echo "# host: no module given: MODULE_VERSION checked in the source only" >&2

# -- dkms.conf as DKMS 2.8 reads it ---------------------------------------------
# DKMS 2.8.4 (Debian 11) sets build_exclude when the release does not match
# BUILD_EXCLUSIVE_KERNEL or the architecture BUILD_EXCLUSIVE_ARCH, both with
# bash's =~, and knows no BUILD_EXCLUSIVE_CONFIG. So it builds for Debian 11's
# arm64 5.10 kernels, which lack CONFIG_KALLSYMS_ALL: the module derives the
# tracing core's variables there (scripts/arm64/refusal-test.sh 5.10, in
# make check-arm64).
# Each line: <release> <uname -m> <build|skip>.
dkms28_cases='
5.10.0-32-amd64 x86_64 build
5.10.0-46-rt-amd64 x86_64 build
5.10.0-46-cloud-amd64 x86_64 build
6.1.0-56-amd64 x86_64 build
6.1.0-56-rt-amd64 x86_64 build
6.1.0-56-cloud-amd64 x86_64 build
6.12.117+deb13-amd64 x86_64 build
6.12.117+deb12-rt-amd64 x86_64 build
6.12.117+deb13-cloud-amd64 x86_64 build
5.10.0-32-arm64 aarch64 build
6.1.0-0.deb11.31-arm64 aarch64 build
6.1.0-56-arm64 aarch64 build
6.12.117+deb13-arm64 aarch64 build
10.1.0-1-amd64 x86_64 build
4.19.0-27-amd64 x86_64 skip
5.9.16-1-amd64 x86_64 skip
5.4.0-150-generic x86_64 skip
6.1.0-56-686-pae i686 skip
6.1.0-56-armmp armv7l skip
'
# shellcheck disable=SC1091 # dkms.conf: shell assignments only
dkms28=$(set +u && . "$UE_REPO/dkms.conf" &&
	while read -r rel arch want; do
		[[ -n $rel ]] || continue
		got=build
		[[ $BUILD_EXCLUSIVE_KERNEL && ! $rel =~ $BUILD_EXCLUSIVE_KERNEL ]] && got=skip
		[[ $BUILD_EXCLUSIVE_ARCH && ! $arch =~ $BUILD_EXCLUSIVE_ARCH ]] && got=skip
		[[ $got == "$want" ]] || echo "$rel $arch: $got, want $want"
	done <<<"$dkms28_cases")
if [[ -z $dkms28 ]]; then
	ue_ok "dkms: DKMS 2.8 builds for 5.10 and later on x86_64 and aarch64 (Debian 11 arm64 included), skips the rest ($(grep -c . <<<"$dkms28_cases") releases)"
else
	ue_notok "dkms: DKMS 2.8's decisions differ: ${dkms28//$'\n'/; }"
fi

# -- docs ----------------------------------------------------------------------
ue_relay "" "$UE_REPO/scripts/build-docs.sh"

# -- references in the docs ------------------------------------------------------
if [[ -f $UE_REPO/README.md ]]; then
	fences=$(grep -c -E '^[[:space:]]{0,3}(```|~~~)' "$UE_REPO/README.md" || true)
	if ((fences % 2 == 0)); then
		ue_ok "refs: README.md exists, its $((fences / 2)) code fences are closed"
	else
		ue_notok "refs: README.md has an unclosed code fence ($fences fence lines)"
	fi
else
	ue_notok "refs: README.md missing"
fi

# The Makefile's targets (mk/*.mk included), from make's database.
targets=$(make -C "$UE_REPO" --no-print-directory -pRrq __check_host_none__ 2>/dev/null |
	awk -F: '/^# Not a target/ { skip = 1; next }
		/^[a-zA-Z0-9][a-zA-Z0-9_.-]*:([^=]|$)/ { if (!skip) print $1 }
		{ skip = 0 }' | sort -u)
if [[ -z $targets ]]; then
	ue_notok "refs: cannot list the Makefile's targets (make -p)"
fi

shopt -s nullglob
docs=("$UE_REPO"/README.md "$UE_REPO"/Documentation/*.rst
	"$UE_REPO"/debian/README.Debian "$UE_REPO"/tests/bench/README.md)
shopt -u nullglob
existing=()
for f in "${docs[@]}"; do
	[[ -f $f ]] && existing+=("$f")
done

if [[ -n $targets ]] && ((${#existing[@]})); then
	ue_relay "" env UE_TARGETS="$targets" /usr/bin/python3 "$UE_REPO/scripts/check-refs.py" \
		"$UE_REPO" "${existing[@]}"
fi

# Every module parameter is in README.md's table and user_events.rst
params=$(sed -n 's/.*module_param[a-z_]*(\([a-z_0-9]*\),.*/\1/p' "$UE_REPO"/*.c | sort -u)
undoc=()
for p in $params; do
	grep -q "^| \`$p\` |" "$UE_REPO/README.md" &&
		grep -q "^\`\`$p\`\` (" "$UE_REPO/Documentation/user_events.rst" ||
		undoc+=("$p")
done
if ((${#undoc[@]})); then
	ue_notok "refs: module parameters missing from README.md's table or Documentation/user_events.rst: ${undoc[*]}"
else
	ue_ok "refs: the $(wc -w <<<"$params") module parameters are documented in README.md and Documentation/user_events.rst"
fi
# ... and both name no parameter that does not exist
stale=()
for p in $(sed -n 's/^| `\([a-z_0-9]*\)` |.*/\1/p' "$UE_REPO/README.md" | grep -vx parameter) \
	$(sed -n 's/^``\([a-z_0-9]*\)`` (.*/\1/p' "$UE_REPO/Documentation/user_events.rst"); do
	grep -qx "$p" <<<"$params" || stale+=("$p")
done
if ((${#stale[@]})); then
	ue_notok "refs: README.md or Documentation/user_events.rst document parameters that do not exist: ${stale[*]}"
else
	ue_ok "refs: every parameter README.md and Documentation/user_events.rst document exists"
fi

# Kbuild's feature probes agree with the versions the features came in
ue_relay "" "$UE_REPO/scripts/check-kbuild-probes.sh"

# make help lists every target of the Makefile and mk/*.mk, and only those
if [[ -n $targets ]]; then
	helped=$(make -s -C "$UE_REPO" help | sed -n 's/^  make \([a-z][a-z0-9-]*\).*/\1/p' | sort -u)
	ours=$(sed -n 's/^\([a-z][a-z0-9-]*\):.*/\1/p' "$UE_REPO"/Makefile "$UE_REPO"/mk/*.mk |
		grep -vx 'all\|modules\|help' | sort -u)
	if [[ $helped == "$ours" ]]; then
		ue_ok "refs: make help lists the $(wc -l <<<"$ours") targets"
	else
		ue_notok "refs: make help and the targets differ: $(diff <(echo "$helped") <(echo "$ours") | grep '^[<>]' | tr '\n' ' ')"
	fi
	# ... and each of them is documented: named as "make <target>" in
	# README.md or Documentation/*.rst
	undoc=()
	for t in $helped; do
		grep -qE "make( [A-Z_][A-Z0-9_]*=[^ ]*)* $t([^a-z0-9-]|\$)" \
			"$UE_REPO"/README.md "$UE_REPO"/Documentation/*.rst || undoc+=("$t")
	done
	if ((${#undoc[@]})); then
		ue_notok "refs: make targets documented nowhere (README.md, Documentation/*.rst): ${undoc[*]}"
	else
		ue_ok "refs: the $(wc -w <<<"$helped") targets of make help are documented"
	fi
fi

echo "# host: $UE_PASS passed, $UE_FAIL failed"
((UE_FAIL == 0))
