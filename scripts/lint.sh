#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Style and static checks of the module, on the host:
#   - scripts/checkpatch.pl --strict (from the newest linux-source-6.12
#     tarball, extracted once into the cache) on every source file of the
#     module, the uapi header and the samples;
#   - sparse (make C=2) against each target kernel's headers;
#   - the files' one-way dependencies in that build
#     (scripts/check-deps.sh);
#   - functions of at most 60 lines (scripts/check-fnlen.sh).
# Prints one TAP line per check ("ok - lint: ..." / "not ok - lint: ...")
# with the findings below a failed one; exit status non-zero iff one failed.
#
#   scripts/lint.sh            (KVERS="rel ..." as for make check)
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

"$UE_REPO/scripts/setup.sh"
st=0

ok() { echo "ok - lint: $*"; }
notok() {
	echo "not ok - lint: $1"
	sed 's/^/#   /' <<<"$2" | head -n 60
	st=1
}

# checkpatch.pl and the data files it reads, once per tarball version
checkpatch_dir() {
	local tarball key dir tmp
	tarball=$(find /usr/src -maxdepth 1 -name 'linux-source-6.12*.tar.*' -printf '/usr/src/%f\n' |
		sort -V | tail -n 1)
	[[ -n $tarball ]] || ue_die "no /usr/src/linux-source-6.12*.tar.*"
	key=$(ue_files_key "$tarball")
	dir=$(ue_cache_dir)/checkpatch/$key
	if [[ ! -x $dir/checkpatch.pl ]]; then
		mkdir -p "${dir%/*}"
		tmp=$(mktemp -d "${dir}.tmp.XXXXXX")
		tar -xaf "$tarball" -C "$tmp" --wildcards --strip-components=2 \
			'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
			'*/scripts/const_structs.checkpatch' ||
			{ rm -rf "$tmp"; ue_die "cannot extract checkpatch.pl from $tarball"; }
		rm -rf "$dir"
		mv "$tmp" "$dir"
	fi
	printf '%s\n' "$dir"
}

cd "$UE_REPO"
cp_dir=$(checkpatch_dir)
mapfile -t files < <(ls ./*.c ./*.h ./*.S include/uapi/linux/*.h samples/*.c 2>/dev/null |
	grep -v '\.mod\.c$')
# It reads spelling.txt and const_structs.checkpatch from its own directory
out=$("$cp_dir/checkpatch.pl" --strict --no-tree --quiet --show-types \
	-f "${files[@]}" 2>&1) || true
if [[ -z $out ]]; then
	ok "checkpatch --strict on ${#files[@]} files"
else
	notok "checkpatch --strict on ${#files[@]} files" "$out"
fi

if out=$("$UE_REPO/scripts/check-fnlen.sh" 2>&1); then
	ok "functions of at most 60 lines"
else
	notok "functions of at most 60 lines" "$out"
fi

mapfile -t kernels < <("$UE_REPO/scripts/kernels.sh")
for rel in "${kernels[@]}"; do
	dir=$(mktemp -d)
	cp -p Kbuild VERSION ./*.c ./*.h ./*.S "$dir/"
	rm -f "$dir"/*.mod.c
	cp -pR include "$dir/include"
	if out=$(make -s -C "/lib/modules/$rel/build" M="$dir" C=2 W=1 modules 2>&1); then
		out=$(grep -v '^Skipping BTF generation' <<<"$out" || true)
		if [[ -z $out ]]; then
			ok "sparse (C=2) and W=1 on $rel"
		else
			notok "sparse (C=2) and W=1 on $rel" "$out"
		fi
		if out=$("$UE_REPO/scripts/check-deps.sh" "$dir" 2>&1); then
			ok "one-way file dependencies on $rel"
		else
			notok "one-way file dependencies on $rel" "$out"
		fi
	else
		notok "sparse (C=2) and W=1 on $rel: build failed" "$out"
	fi
	rm -rf "$dir"
done

exit "$st"
