#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/check-kbuild-probes.sh [HEADERS_DIR ...]
#
# Kbuild decides each UE_HAVE_* feature of user_events_compat.h by looking
# in the kernel's headers (a grep for the symbol or the signature), so that
# a distribution's backport is seen. A probe whose pattern stops matching
# (a header reorganised) would silently choose the older code path. This
# evaluates Kbuild's probes against each kernel headers tree given (the
# per-architecture directory, the one /lib/modules/REL/build points to;
# default: every tree this host has for the target kernels) and compares
# them with the upstream version each feature came in. A difference fails,
# unless it is a backport listed below.
#
# One TAP line per tree ("ok - kbuild: ..."); exit status 1 if one failed.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Feature, upstream version it came in (VERSION * 100 + PATCHLEVEL)
since=(
	UE_HAVE_KMAP_LOCAL:511 UE_HAVE_ENTRY_UPDATE_NO_PC:511
	UE_HAVE_NOTIFY_CHANGE_USERNS:512 UE_HAVE_DYN_CREATE_RAW:512
	UE_HAVE_VMA_LOOKUP:514 UE_HAVE_FL_DYNAMIC:515
	UE_HAVE_EXPORTED_ADD_EVENT_CALL:515 UE_HAVE_FAULT_IN_READABLE:516
	UE_HAVE_FOLL_NOFAULT:517 UE_HAVE_INSTRUMENT_COPY_BEFORE_AFTER:601
	UE_HAVE_ITER_UBUF:601 UE_HAVE_FILTER_RDYN_STRING:601
	UE_HAVE_FIELDS_LEN:601 UE_HAVE_VM_FLAGS_API:603 UE_HAVE_MNT_IDMAP:603
	UE_HAVE_ITER_IOV:604 UE_HAVE_PIN_REMOTE_WITHOUT_VMAS:605
	UE_HAVE_EVENTFS:606
)
# Backports known in target kernels: "tree-name-glob:feature"
backports=(
	'*-rt-*:UE_HAVE_ENTRY_UPDATE_NO_PC'	# PREEMPT_RT 5.10 has trace_ctx
	'*-rt-*:UE_HAVE_KMAP_LOCAL'	# and kmap_local_page() (highmem-internal.h)
)
# notify_change() took a user_namespace from 5.12 to 6.2 only
until_=(UE_HAVE_NOTIFY_CHANGE_USERNS:603)

# common_dir <arch headers dir>: the -common tree its Makefile includes,
# found beside it when the path is that of a chroot's own root
common_dir() {
	local c
	c=$(sed -n 's/^include \(.*\)\/Makefile$/\1/p' "$1/Makefile" | head -n 1)
	[[ -n $c && -d $c ]] || c=$1/../${c##*/}
	echo "$c"
}

# probes <arch headers dir>: the UE_HAVE_* flags Kbuild sets there
probes() {
	local build=$1 common mk
	common=$(common_dir "$build")
	mk=$(mktemp)
	cat >"$mk" <<-EOF
		srctree := $common
		objtree := $build
		src := $repo
		SRCARCH := x86
		VERSION := $(sed -n 's/^VERSION = //p' "$common/Makefile")
		PATCHLEVEL := $(sed -n 's/^PATCHLEVEL = //p' "$common/Makefile")
		include $repo/Kbuild
		all: ; @echo \$(patsubst -D%,%,\$(filter -DUE_HAVE_%,\$(ccflags-y)))
	EOF
	make -s -f "$mk" all
	rm -f "$mk"
}

# expected <kver> <tree>: the flags the upstream versions give
expected() {
	local kver=$1 tree=$2 f v b
	for f in "${since[@]}"; do
		v=${f#*:}
		f=${f%:*}
		for b in "${until_[@]}"; do
			[[ ${b%:*} == "$f" ]] && ((kver >= ${b#*:})) && continue 2
		done
		((kver >= v)) && echo "$f" && continue
		for b in "${backports[@]}"; do
			# shellcheck disable=SC2053 # the glob is meant
			[[ $tree == ${b%%:*} && ${b#*:} == "$f" ]] && echo "$f"
		done
	done
}

trees=("$@")
if ((!${#trees[@]})); then
	shopt -s nullglob
	trees=(/usr/src/linux-headers-*-{amd64,arm64,rt-amd64,cloud-amd64}
		/var/cache/user-events/chroot/*/usr/src/linux-headers-*-{amd64,rt-amd64}
		/var/cache/user-events/arm64/kernels/*/root/usr/src/linux-headers-*-arm64)
	shopt -u nullglob
fi

fail=0
for t in "${trees[@]}"; do
	[[ -f $t/Makefile ]] || continue
	name=${t##*/}
	got=$(probes "$t" | tr ' ' '\n' | grep . | sort)
	common=$(common_dir "$t")
	kver=$(($(sed -n 's/^VERSION = //p' "$common/Makefile") * 100 + $(sed -n 's/^PATCHLEVEL = //p' "$common/Makefile")))
	want=$(expected "$kver" "$name" | sort -u)
	if [[ $got == "$want" ]]; then
		echo "ok - kbuild: $name: the $(wc -w <<<"$got") features probed match their versions"
	else
		echo "not ok - kbuild: $name: probed and expected differ: $(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | tr '\n' ' ')"
		fail=1
	fi
done
exit $fail
