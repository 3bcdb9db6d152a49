#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check`: build user_events.ko for each target kernel (W=1, no warnings
# allowed), build the selftests (ours, and upstream's four user_events
# selftest programs from the linux-source-6.12 package, unmodified, as
# upstream_*), boot each kernel in QEMU and run them all there against the
# module, then count the TAP results.
#
# Environment:
#   KVERS="rel ..."      kernels to test (default: scripts/kernels.sh)
#   V=1                  show the guest consoles live
#   UE_TEST_TIMEOUT      seconds per test program in the guest (300)
#   UE_GUEST_TIMEOUT     seconds per guest boot (900)
#   UE_EXPECT_TRACEFS    see scripts/guest/run-tests.sh
#   UE_MODULE_SRC        module source dir (default: the repo)
#   UE_SELFTESTS_SRC     selftests source dir (default: selftests/)
#   UE_BUILD_DIR         where builds and results go (default: build/)
#   UE_CHECK_PACKAGE=0   leave out the Debian package test (needs root)
#   UE_ARCH=arm64        `make check-arm64`: Debian's arm64 kernels
#                        (KVERS_ARM64, default scripts/arm64/kernels.sh),
#                        cross-built module and selftests, guests under
#                        qemu-system-aarch64 (run.sh --arch arm64); the host
#                        checks and the package test are the amd64 run's
#
# Counting: an "ok" line is a pass unless it carries "# SKIP" (a skip is a
# failure); a "not ok" line is a failure; the guest runner reports its own
# checks (insmod, rmmod, clean kernel log, crashed or hung tests) the same
# way; a module build that fails (no guest run then) or prints warnings (the
# tests still run), a selftest build failure and a failed guest run (hang,
# panic, WARN, lockdep...) each add one failure.
# The last line printed is "N passed, N failed"; the exit status is non-zero
# iff something failed.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

test_timeout=${UE_TEST_TIMEOUT:-300}
guest_timeout=${UE_GUEST_TIMEOUT:-900}
modsrc=${UE_MODULE_SRC:-$UE_REPO}
testsrc=${UE_SELFTESTS_SRC:-$UE_REPO/selftests}
testout=$UE_BUILD/selftests
arch=${UE_ARCH:-x86_64}
[[ $arch == x86_64 || $arch == arm64 ]] || ue_die "UE_ARCH: x86_64 or arm64, not $arch"
build_module=$UE_REPO/scripts/build-module.sh
if [[ $arch == arm64 ]]; then
	testout=$UE_BUILD/selftests-arm64
	build_module=$UE_REPO/scripts/arm64/build-module.sh
fi
t0=$SECONDS

elapsed() { printf '%dm%02ds' $(((SECONDS - t0) / 60)) $(((SECONDS - t0) % 60)); }
section() { printf '\n===== %s [%s] =====\n' "$*" "$(elapsed)"; }

ue_lock_build
section "setup"
"$UE_REPO/scripts/setup.sh"
harness=$("$UE_REPO/scripts/setup.sh" --harness-dir)
upstream=$("$UE_REPO/scripts/setup.sh" --upstream-dir)
if [[ $arch == arm64 ]]; then
	"$UE_REPO/scripts/arm64/setup.sh"
	mapfile -t kernels < <("$UE_REPO/scripts/arm64/kernels.sh")
else
	mapfile -t kernels < <("$UE_REPO/scripts/kernels.sh")
fi
((${#kernels[@]})) || ue_die "no kernels to test"
echo "kernels: ${kernels[*]}"
echo "kselftest harness: $harness"
echo "upstream selftests: $upstream"

total_pass=0
total_fail=0
total_known=0
known_list_seen=()
summary=()
failed_list=()

# -- selftests (userspace, built once) ---------------------------------------
section "selftests build"
selftest_fail=0
rm -rf "$testout"
mkdir -p "$testout"
shopt -s nullglob
srcs=("$testsrc"/*_test.c "$testsrc"/*_test.sh)
shopt -u nullglob
mk=()
if [[ -f $testsrc/Makefile ]]; then
	mk=(make -C "$testsrc" "HARNESS_DIR=$harness" "UPSTREAM_DIR=$upstream" "OUT=$testout")
	[[ $arch == arm64 ]] && mk+=(CC=aarch64-linux-gnu-gcc)
elif ((${#srcs[@]})); then
	echo "(no $testsrc/Makefile: using scripts/selftests-fallback.mk)"
	mk=(make -C "$testsrc" -f "$UE_REPO/scripts/selftests-fallback.mk"
		"HARNESS_DIR=$harness" "OUT=$testout")
else
	echo "no selftests in $testsrc"
fi
if ((${#mk[@]})); then
	if ! "${mk[@]}"; then
		echo "selftests build FAILED"
		selftest_fail=1
	fi
fi
mapfile -t progs < <(find "$testout" -maxdepth 1 -type f -perm -u+x -printf '%f\n' | LC_ALL=C sort)
echo "test programs: ${progs[*]}"

# Upstream selftests expected to fail, each at a given check (see the file)
known_list=$testsrc/upstream-known-differences

# Count the TAP lines of one guest's output: prints "P <name>" / "F <name>",
# and "K <name>: <reason>" for a known difference (a test listed in
# $known_list that failed at the listed check).
count_tap() {
	awk -v known="$known_list" '
		BEGIN {
			while ((getline line < known) > 0) {
				if (line ~ /^#/ || line ~ /^[ \t]*$/) continue
				if (line ~ /^[ \t]/) {
					sub(/^[ \t]+/, "", line)
					why[key] = line
					continue
				}
				split(line, f, /[ \t]+/)
				key = f[1] SUBSEP f[2]
				at[key] = f[3]
			}
		}
		function name(s) {
			sub(/^- /, "", s)
			sub(/^runner: /, "", s)
			if (index(s, prog ": ") == 1) s = substr(s, length(prog) + 3)
			return s
		}
		# The test name of a harness result line: "6 user.print_fmt"
		function tname(s) {
			sub(/^[0-9]+[ \t]+/, "", s)
			sub(/[ \t]+#.*/, "", s)
			return s
		}
		/^# ue-run: / { prog = substr($0, 11); delete hit; next }
		{
			for (k in at) {
				split(k, kp, SUBSEP)
				if (kp[1] == prog && index($0, at[k])) hit[k] = 1
			}
		}
		/^not ok([ \t]|$)/ {
			sub(/^not ok[ \t]*/, "")
			k = prog SUBSEP tname($0)
			if (k in at && (k in hit))
				print "K " prog ": " tname($0) ": known difference: " why[k]
			else if (k in at)
				print "F " prog ": not ok " name($0) " (a known difference, but not failing at " at[k] ")"
			else
				print "F " prog ": not ok " name($0)
			next
		}
		/^ok([ \t]|$)/ {
			sub(/^ok[ \t]*/, "")
			k = prog SUBSEP tname($0)
			if (tolower($0) ~ /#[ \t]*skip/) print "F " prog ": SKIP (counted as a failure) " name($0)
			else if (k in at) print "F " prog ": " name($0) " passes, but is listed as a known difference in " known
			else print "P " prog ": " name($0)
		}' "$1"
}

for rel in "${kernels[@]}"; do
	pass=0
	fail=0
	known=0
	fails=()
	declare -A up=()

	section "$rel: module build"
	bstatus=0
	kos=$("$build_module" "$rel" "$modsrc") || bstatus=$?
	ko=
	if ((bstatus == 0 || bstatus == 3)); then
		ko=$(grep -m1 '/user_events\.ko$' <<<"$kos" || head -n 1 <<<"$kos")
		echo "built $ko"
	fi
	if ((bstatus == 3)); then
		# Still worth running the tests: the warnings count as one failure.
		fail=$((fail + 1))
		fails+=("module build printed warnings (W=1)")
	elif ((bstatus != 0)); then
		fail=$((fail + 1))
		fails+=("module build failed")
	fi
	if ((selftest_fail)); then
		fail=$((fail + 1))
		fails+=("selftests build failed")
	fi

	if [[ -n $ko ]]; then
		section "$rel: guest run"
		resdir=$UE_BUILD/$rel/check
		genv=(env "UE_TEST_TIMEOUT=$test_timeout")
		[[ -n ${UE_EXPECT_TRACEFS+set} ]] && genv+=("UE_EXPECT_TRACEFS=$UE_EXPECT_TRACEFS")
		runopts=(-o "$resdir" -t "$guest_timeout" --arch "$arch")
		[[ ${V:-0} == 1 ]] || runopts+=(-q)
		gstatus=0
		"$UE_REPO/scripts/guest/run.sh" "${runopts[@]}" "$rel" -- "${genv[@]}" \
			"$UE_REPO/scripts/guest/run-tests.sh" "$ko" "$testout" || gstatus=$?
		if [[ ${V:-0} != 1 && -f $resdir/output.log ]]; then
			cat "$resdir/output.log"
		fi
		if [[ -f $resdir/output.log ]]; then
			while read -r kind name; do
				case $kind in
				P) pass=$((pass + 1)) ;;
				K)
					known=$((known + 1))
					known_list_seen+=("$rel: $name")
					;;
				*)
					fail=$((fail + 1))
					fails+=("$name")
					;;
				esac
				if [[ $name == upstream_* ]]; then
					up[$kind]=$((${up[$kind]:-0} + 1))
				fi
			done < <(count_tap "$resdir/output.log")
		fi
		# Every test program must have run, and the runner must have ended.
		if [[ -f $resdir/output.log ]] && ((gstatus != 2)); then
			for t in "${progs[@]}"; do
				if ! grep -qxF "# ue-run: $t" "$resdir/output.log"; then
					fail=$((fail + 1))
					fails+=("$t: did not run")
				fi
			done
			if ! grep -q '^# ue-run: end' "$resdir/output.log"; then
				fail=$((fail + 1))
				fails+=("guest runner did not finish")
			fi
		fi
		if ((gstatus == 2)); then
			fail=$((fail + 1))
			why=$(grep -m1 '^    \[' "$resdir/problems" 2>/dev/null ||
				head -n 1 "$resdir/problems" 2>/dev/null || echo unknown)
			why=$(sed -E 's/^ +//; s/^\[ *[0-9.]+\] //' <<<"$why")
			fails+=("guest run failed: $why")
			echo "----- guest run FAILED; problems:"
			sed 's/^/  /' "$resdir/problems" 2>/dev/null || true
			# The console from the first kernel problem on, else its end.
			first=$(grep -n -a -m1 -F -f <(sed -n 's/^    //p' "$resdir/problems") \
				"$resdir/console.log" 2>/dev/null | cut -d: -f1 || true)
			echo "----- console ($resdir/console.log):"
			if [[ -n $first ]]; then
				tail -n "+$first" "$resdir/console.log" | head -n 80 | sed 's/^/  | /'
			else
				tail -n 60 "$resdir/console.log" 2>/dev/null | sed 's/^/  | /' || true
			fi
		elif ((gstatus != 0 && fail == 0)); then
			# The runner failed without saying why in TAP.
			fail=$((fail + 1))
			fails+=("guest runner exited with status $gstatus")
		fi
		echo "guest: $(tr '\n' ' ' <"$resdir/result" 2>/dev/null || true)"
	fi

	summary+=("$rel: $pass passed, $fail failed, $known known difference(s)")
	summary+=("$rel: upstream's selftests: ${up[P]:-0} passed, ${up[F]:-0} failed, ${up[K]:-0} known difference(s), of $((${up[P]:-0} + ${up[F]:-0} + ${up[K]:-0}))")
	for f in "${fails[@]}"; do
		failed_list+=("$rel: $f")
	done
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	total_known=$((total_known + known))
	unset up
done

# -- host checks: style and static analysis, versions, docs (no guest) -----
# Counts the TAP lines of a host check script as one more summary entry.
host_checks() { # host_checks <label> <prefix> <command...>
	local label=$1 prefix=$2 out st=0 line p=0 f=0
	shift 2
	section "$label"
	out=$("$@" 2>&1) || st=$?
	printf '%s\n' "$out"
	while IFS= read -r line; do
		case $line in
		"not ok - "*)
			f=$((f + 1))
			failed_list+=("$prefix: ${line#not ok - }")
			;;
		"ok - "*) p=$((p + 1)) ;;
		esac
	done <<<"$out"
	if ((st != 0 && f == 0)); then
		f=1
		failed_list+=("$prefix: $1 exited with status $st")
	fi
	summary+=("$prefix: $p passed, $f failed")
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
}

host_kos=()
for rel in "${kernels[@]}"; do
	if [[ -f $UE_BUILD/$rel/module/user_events.ko ]]; then
		host_kos+=("$UE_BUILD/$rel/module/user_events.ko")
	fi
done
if [[ $arch == arm64 ]]; then
	UE_CHECK_PACKAGE=0 UE_CHECK_HOST=0
	# Debian's arm64 6.1: no CONFIG_KALLSYMS_ALL, so the load is refused
	host_checks "arm64 6.1: load refused, saying why" refusal \
		"$UE_REPO/scripts/arm64/refusal-test.sh"
fi
if [[ ${UE_CHECK_HOST:-1} == 1 ]]; then
host_checks "lint (checkpatch, sparse)" lint "$UE_REPO/scripts/lint.sh"
host_checks "host checks (versions, docs)" host \
	"$UE_REPO/scripts/check-host.sh" "${host_kos[@]}"
fi
# The Debian package as users get it: build, install (DKMS builds the
# module for each kernel), smoke test the installed module in a guest of
# each kernel, purge. It installs a package, so it needs root.
if [[ ${UE_CHECK_PACKAGE:-1} == 1 ]]; then
	if ((EUID == 0)); then
		host_checks "package (deb, DKMS, smoke test)" package \
			"$UE_REPO/scripts/package-test.sh"
	elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
		host_checks "package (deb, DKMS, smoke test)" package \
			sudo -n env "KVERS=${KVERS:-}" "UE_BUILD_DIR=$UE_BUILD" \
			"$UE_REPO/scripts/package-test.sh"
	else
		host_checks "package (deb, DKMS, smoke test)" package \
			sh -c 'echo "not ok - needs root or passwordless sudo (UE_CHECK_PACKAGE=0 skips it)"; exit 1'
	fi
fi

section "summary"
printf '%s\n' "${summary[@]}"
if ((${#failed_list[@]})); then
	echo "failed:"
	printf '  %s\n' "${failed_list[@]}"
fi
if ((${#known_list_seen[@]})); then
	echo "known differences (upstream's tests expected to fail, see $known_list):"
	printf '  %s\n' "${known_list_seen[@]}"
fi
echo "check took $(elapsed)"
echo "$total_known known difference(s), counted neither as passed nor as failed"
echo "$total_pass passed, $total_fail failed"
((total_fail == 0))
