#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check-cloud`: the selftests on Debian's cloud kernels, which have
# no 9p file system, so the guest runner's shared host root cannot reach
# them (scripts/guest/run.sh). Here the tests travel in the initramfs:
#
#   scripts/matrix/cloud.sh [<suite> <cloud image package>]...
#
# For each kernel (default: every "cloud" row of scripts/matrix/targets):
# fetch and extract it (scripts/matrix/kernel.sh), build the module in the
# release's chroot (scripts/build-module.sh --chroot), and build one
# initramfs holding the module, the selftests (built on the host, as for
# `make check`), scripts/guest/run-tests.sh, user-events-clear, and the host
# programs the runner and the tests run (bash, coreutils, find, grep, sed,
# kmod, dmesg, trace-cmd) with their shared libraries (ldd), busybox for
# the rest, and scripts/matrix/cloud-init as /init. No disk, no network,
# no share: the results come back on the serial console, between
# UE-CLOUD-BEGIN and UE-GUEST-END markers, into
# build/<release>/cloud/output.log.
#
# Left out, because they need programs too large for an initramfs (perf,
# bpftrace, bpftool with LLVM): bpf_test and perf_test; they are listed as
# not run. Counts, as in make check: "ok" passes; "ok ... # SKIP" is an
# expected skip (listed) where tests/selftests/expected-skips expects it on that
# kernel, else a failure; "not ok" and a kernel problem on the console
# (oops, WARN, lockdep...) fail, except an upstream test of
# tests/selftests/upstream-known-differences failing at its listed check (a
# known difference).
# The last line is "N passed, N failed". Needs root.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

((EUID == 0)) || ue_die "needs root (debootstrap, chroot)"
"$UE_REPO/scripts/setup.sh"
not_run=(bpf_test perf_test)
targets=()
if (($#)); then
	(($# % 2 == 0)) || ue_die "usage: $0 [<suite> <image package>]..."
	targets=("$@")
else
	while read -r suite pkg tset _; do
		[[ -n $suite && $suite != \#* && $tset == cloud ]] || continue
		targets+=("$suite" "$pkg")
	done <"$UE_REPO/scripts/matrix/targets"
fi
((${#targets[@]})) || ue_die "no cloud target"

# The selftests, built once on the host (the same as make check's).
harness=$("$UE_REPO/scripts/setup.sh" --harness-dir)
upstream=$("$UE_REPO/scripts/setup.sh" --upstream-dir)
tests=$UE_BUILD/cloud-selftests
rm -rf "$tests"
make -s -C "$UE_REPO/tests/selftests" "HARNESS_DIR=$harness" "UPSTREAM_DIR=$upstream" \
	"OUT=$tests" >"$UE_BUILD/cloud-selftests.log" 2>&1 ||
	ue_die "selftests build failed (log: $UE_BUILD/cloud-selftests.log)"

# The host programs the runner and the tests need, with their libraries.
tools=(bash env mktemp timeout od tee tr sort cat basename dirname sleep rm mkdir
	cut head tail wc find grep sed awk modinfo insmod rmmod modprobe kmod dmesg
	trace-cmd uname id stat ls seq xargs chmod ln cp mv date sh)
root_common() { # root_common <dir>: the programs part of the initramfs
	local dir=$1 t p l
	mkdir -p "$dir"/usr/{bin,sbin,lib,lib64} "$dir/etc"
	for l in bin sbin lib lib64; do ln -sfn "usr/$l" "$dir/$l"; done
	cp /bin/busybox "$dir/usr/bin/busybox"
	for t in "${tools[@]}"; do
		p=$(command -v "$t") || ue_die "host program $t missing"
		p=$(readlink -f "$p")
		cp -n "$p" "$dir/usr/bin/${p##*/}" 2>/dev/null || true
		[[ ${p##*/} == "$t" ]] || ln -sfn "${p##*/}" "$dir/usr/bin/$t"
		while read -r l; do
			[[ -f $l ]] || continue
			mkdir -p "$dir$(dirname "$l")"
			cp -Ln "$l" "$dir$l" 2>/dev/null || true
		done < <(ldd "$p" 2>/dev/null | grep -oE '/[^ ]+' || true)
	done
	# trace-cmd's plugins and the like are not needed; the rest: busybox.
	for t in $(/bin/busybox --list); do
		[[ -e $dir/usr/bin/$t || -e $dir/usr/sbin/$t ]] || ln -s busybox "$dir/usr/bin/$t"
	done
	echo "root:x:0:0:root:/root:/bin/bash" >"$dir/etc/passwd"
	echo "root:x:0:" >"$dir/etc/group"
}

kpat=$UE_KPAT

total_pass=0 total_fail=0 total_skip=0
summary=() failed=() skipped=() knowns=()
t0=$SECONDS
for ((i = 0; i < ${#targets[@]}; i += 2)); do
	suite=${targets[i]} pkg=${targets[i + 1]}
	pass=0 fail=0 skip=0
	mapfile -t k < <("$UE_REPO/scripts/matrix/kernel.sh" "$suite" "$pkg")
	((${#k[@]} == 3)) || ue_die "$suite $pkg: no kernel"
	rel=${k[0]} vmlinuz=${k[1]}
	printf '\n===== %s (%s %s) [%ds] =====\n' "$rel" "$suite" "$pkg" $((SECONDS - t0))
	out=$UE_BUILD/$rel/cloud
	rm -rf "$out"
	mkdir -p "$out"
	bst=0
	kos=$("$UE_REPO/scripts/build-module.sh" --chroot "$suite" "$rel") || bst=$?
	ko=$(grep -m1 '/user_events\.ko$' <<<"$kos" || true)
	if ((bst == 3)); then
		fail=$((fail + 1)) failed+=("$rel: module build printed warnings (W=1)")
	elif ((bst != 0)) || [[ -z $ko ]]; then
		fail=$((fail + 1)) failed+=("$rel: module build failed")
		summary+=("$rel: $pass passed, $fail failed, $skip expected skip(s)")
		total_fail=$((total_fail + fail))
		continue
	fi

	work=$out/initramfs
	root_common "$work"
	mkdir -p "$work/ue/tests" "$work/ue/scripts/guest"
	cp "$ko" "$work/ue/user_events.ko"
	cp -a "$tests"/. "$work/ue/tests/"
	for t in "${not_run[@]}"; do rm -f "$work/ue/tests/$t"; done
	cp "$UE_REPO/scripts/guest/run-tests.sh" "$work/ue/scripts/guest/"
	cp "$UE_REPO/scripts/user-events-clear" "$UE_REPO/scripts/lib.sh" "$work/ue/scripts/"
	install -m 755 "$UE_REPO/scripts/matrix/cloud-init" "$work/init"
	# Modules the tests load (fuse_stall_test.sh: modprobe fuse), when the
	# kernel has them as modules (Debian 12's 6.1 cloud), with their
	# dependencies, and depmod's index for them.
	mpbase=${k[2]%/lib/modules/"$rel"}
	while read -r verb path _; do
		[[ $verb == insmod ]] || continue
		dst=$work/lib/modules/$rel/${path#"${k[2]}"/}
		mkdir -p "${dst%/*}"
		cp "$path" "$dst"
	done < <(modprobe -d "$mpbase" -a -S "$rel" --show-depends fuse 2>/dev/null || true)
	if [[ -d $work/lib/modules/$rel ]]; then
		cp "${k[2]}"/modules.{builtin,builtin.modinfo,order} "$work/lib/modules/$rel/" 2>/dev/null || true
		depmod -b "$work" "$rel" || ue_die "$rel: depmod -b for the initramfs failed"
	fi
	(cd "$work" && find . -print0 | LC_ALL=C sort -z |
		cpio --null -o -H newc --owner=0:0 --quiet) | gzip -1 >"$out/initramfs.cpio.gz"
	echo "initramfs: $(du -h "$out/initramfs.cpio.gz" | cut -f1) ($out/initramfs.cpio.gz)"
	rm -rf "$work"

	# The ELF inside boots fastest (PVH); vmlinux.sh knows xz, zstd, gzip
	# and lzma payloads. Debian 12's 6.1 cloud kernel is LZ4: QEMU boots
	# the bzImage itself then (a few seconds slower).
	vmlinux=$("$UE_REPO/scripts/guest/vmlinux.sh" "$rel" "$vmlinuz" 2>/dev/null) || vmlinux=$vmlinuz
	token=$(tr -dc 'a-f0-9' </proc/sys/kernel/random/uuid | head -c 16)
	log=$out/console.log
	start=$SECONDS
	qst=0
	# shellcheck disable=SC2054 # commas belong to the option values
	timeout -k 10 "${UE_GUEST_TIMEOUT:-1200}" qemu-system-x86_64 \
		-accel "${UE_ACCEL:-tcg,thread=single}" -cpu max -m 2G -smp 2 \
		-nographic -no-reboot -nic none -kernel "$vmlinux" \
		-initrd "$out/initramfs.cpio.gz" \
		-append "console=ttyS0,115200 printk.time=1 panic_on_warn=1 oops=panic panic=-1 hung_task_panic=1 rdinit=/init uetoken=$token" \
		</dev/null 2>&1 | sed -u 's/\r//g; s/\x1b\[[0-9;?]*[A-Za-z]//g; s/\x1bc//g' >"$log" ||
		qst=$?
	secs=$((SECONDS - start))
	((qst == 0)) || echo "# qemu exited with status $qst (124: timeout)"
	sed -n "/^UE-CLOUD-BEGIN token=$token/,/^UE-GUEST-END token=$token/p" "$log" >"$out/output.log"
	cat "$out/output.log"
	if ! grep -q "^UE-GUEST-END token=$token status=" "$out/output.log"; then
		fail=$((fail + 1)) failed+=("$rel: guest run did not finish (console: $log)")
	fi
	mapfile -t klines < <(grep -a -E "\[ *[0-9]+\.[0-9]+\] .*$kpat" "$log" |
		grep -a -v -E '\] (Kernel )?[Cc]ommand line: ' | head -n 20 || true)
	if ((${#klines[@]})); then
		fail=$((fail + 1)) failed+=("$rel: kernel problem on the console: ${klines[0]}")
	fi
	# Counted as scripts/check.sh counts them (ue_count_tap): known
	# differences of upstream's tests, and skips only where
	# tests/selftests/expected-skips expects them on this kernel
	known=0
	while read -r kind line; do
		case $kind in
		P) pass=$((pass + 1)) ;;
		K) known=$((known + 1)) knowns+=("$rel: $line") ;;
		S) skip=$((skip + 1)) skipped+=("$rel: $line") ;;
		*) fail=$((fail + 1)) failed+=("$rel: $line") ;;
		esac
	done < <(UE_KNOWN_LIST=$UE_REPO/tests/selftests/upstream-known-differences \
		UE_SKIPS_LIST=$UE_REPO/tests/selftests/expected-skips ue_count_tap "$out/output.log" "$rel")
	summary+=("$rel: $pass passed, $fail failed, $skip expected skip(s), $known known difference(s) (guest ${secs}s; not run: ${not_run[*]})")
	total_pass=$((total_pass + pass)) total_fail=$((total_fail + fail)) total_skip=$((total_skip + skip))
done

printf '\n===== summary [%ds] =====\n' $((SECONDS - t0))
printf '%s\n' "${summary[@]}"
((${#failed[@]} == 0)) || { echo "failed:"; printf '  %s\n' "${failed[@]}"; }
((${#skipped[@]} == 0)) || { echo "expected skips (tests/selftests/expected-skips; not passed):"; printf '  %s\n' "${skipped[@]}"; }
((${#knowns[@]} == 0)) || { echo "known differences (neither passed nor failed):"; printf '  %s\n' "${knowns[@]}"; }
((${#knowns[@]} == 0)) || echo "${#knowns[@]} known difference(s), counted neither as passed nor as failed"
((total_skip == 0)) || echo "$total_skip expected skip(s), counted neither as passed nor as failed"
echo "$total_pass passed, $total_fail failed"
((total_fail == 0))
