# SPDX-License-Identifier: GPL-2.0
# The one shell library of the repository (sourced, never executed): the
# host drivers (make check, stress, fuzz, race, bench, check-debug, the
# package test) and the guest scripts they run share what is here.
#   common    ue_die, ue_note, UE_KPAT (the kernel-problem pattern)
#   host      build dir and lock, cache, package installer, tool builds,
#             the per-kernel loop (module build, guest run, TAP counting)
#   guest     TAP lines, load, ue_unload, the end-of-run kernel checks
# shellcheck shell=bash

UE_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export UE_REPO

ue_die() {
	printf '%s: error: %s\n' "${0##*/}" "$*" >&2
	exit 1
}

ue_note() {
	printf '%s: %s\n' "${0##*/}" "$*" >&2
}

# What counts as a kernel problem, on the guest console (scripts/guest/run.sh,
# only lines with a printk timestamp) and in dmesg (ue_kernel_checks). One
# pattern for every consumer.
UE_KPAT='(\bOops\b|BUG:|WARNING:|Kernel panic|Call Trace|kernel BUG at|'
UE_KPAT+='possible circular locking|inconsistent lock state|possible recursive locking|'
UE_KPAT+='suspicious RCU usage|bad unlock balance|held when returning to user|'
UE_KPAT+='blocked for more than|general protection fault|still in use|'
UE_KPAT+='KASAN:|UBSAN:|unable to handle (kernel|page fault)|soft lockup|hard LOCKUP|'
UE_KPAT+='detected stalls on CPU|stack-protector|refcount_t:|list_(add|del) corruption|'
UE_KPAT+='double fault|kernel stack overflow|kmemleak: [0-9]+ new suspected|'
# The module's own: enablers lost at fork (user_events_fork.c), a file still
# open at a forced unload (user_events_main.c)
UE_KPAT+='max_enablers reached copying enablers at fork|out of memory copying enablers at fork|'
UE_KPAT+='forced unload: .*still held open)'

# KCSAN kernels (UE_KCSAN_MODULE=<module>): data races none of whose
# accesses is in the module are the core's own; they are filtered out of a
# log before UE_KPAT applies (and listed in the file named by $1).
ue_kcsan_filter() { # ue_kcsan_filter <other-races file> < log > filtered log
	if [[ -n ${UE_KCSAN_MODULE:-} ]]; then
		awk -v other="$1" -f "$UE_REPO/scripts/guest/kcsan-filter.awk"
	else
		cat
	fi
}

# -- results: TAP lines and counts -------------------------------------------
# "ok - <UE_TAP>: <what>" (no prefix when UE_TAP is empty); UE_PASS and
# UE_FAIL count them, UE_FAILED lists the failures (ue_finish prints them).
UE_TAP=guest
UE_PASS=0 UE_FAIL=0 UE_KNOWN=0 UE_SKIP=0
UE_FAILED=() UE_SUMMARY=() UE_KNOWN_SEEN=() UE_SKIPPED=()
ue_fail() {
	UE_FAIL=$((UE_FAIL + 1))
	UE_FAILED+=("$*")
}
ue_ok() {
	echo "ok - ${UE_TAP:+$UE_TAP: }$*"
	UE_PASS=$((UE_PASS + 1))
}
ue_notok() {
	echo "not ok - ${UE_TAP:+$UE_TAP: }$*"
	ue_fail "${UE_TAP:+$UE_TAP: }$*"
}
ue_check() { # ue_check <description> <command...>
	local what=$1
	shift
	if "$@"; then ue_ok "$what"; else ue_notok "$what"; fi
}
# Pass on the TAP lines of another command as this script's own, after
# <prefix> (a "<UE_TAP>: " they start with is not doubled); its other
# lines as they are. A failure of the command without
# a "not ok" line counts as one.
ue_relay() { # ue_relay <prefix> <command...>
	local prefix=$1 out line st=0 f0=$UE_FAIL
	shift
	out=$("$@" 2>&1) || st=$?
	while IFS= read -r line; do
		case $line in
		'not ok - '*) line=${line#not ok - } && ue_notok "$prefix${line#"$UE_TAP: "}" ;;
		'ok - '*) line=${line#ok - } && ue_ok "$prefix${line#"$UE_TAP: "}" ;;
		*) printf '%s\n' "$line" ;;
		esac
	done <<<"$out"
	((st == 0 || UE_FAIL > f0)) || ue_notok "$prefix${1#"$UE_REPO"/} exited with status $st"
}

# ---------------------------------------------------------------- guest side
UE_TRACING=/sys/kernel/tracing
UE_MODULE_NAME=${UE_MODULE_NAME:-user_events}
ue_loaded() { grep -q "^$UE_MODULE_NAME " /proc/modules; }
ue_bad_taint() { echo $(($(cat /proc/sys/kernel/tainted) & ~(4096 | 8192))); }

# Start of a guest run: clear the kernel log, note the taint, load the
# module. On failure: the kernel log's tail, a "not ok" line, status 1.
ue_load() { # ue_load <module.ko>
	echo "# kernel $(uname -r), $(nproc) CPU(s), module $1"
	dmesg -C 2>/dev/null
	UE_TAINT0=$(ue_bad_taint)
	if ! insmod "$1"; then
		ue_notok "insmod $1"
		dmesg | tail -n 20 | sed 's/^/#   /'
		return 1
	fi
	ue_ok "insmod ${1##*/}"
}

# Delete every user event (each pins the module), then rmmod; up to
# <tries> times half a second apart (released address spaces drop their
# module references from a work item). Prints rmmod's error when it fails.
ue_unload() { # ue_unload [tries]
	local i clear=("$UE_REPO/scripts/user-events-clear" --unload "$UE_MODULE_NAME" "$UE_TRACING")
	# Events and the module's files pin it: user-events-clear --unload
	# deletes the events, writes prepare_unload and runs rmmod
	for ((i = 1; i <= ${1:-1}; i++)); do
		((i == 1)) || sleep 0.5
		"${clear[@]}" 2>/dev/null && return 0
	done
	"${clear[@]}"
}

# Run a tool that ends with "N passed, N failed"; that line becomes the
# comment "# <name>: N passed, N failed". Returns the tool's status.
ue_tool() { # ue_tool <name> <command...>
	local name=$1
	shift
	"$@" 2>&1 | sed -u "/^[0-9]* passed, [0-9]* failed\$/s/^/# $name: /"
	return "${PIPESTATUS[0]}"
}

# End of a guest run: unload (unless UE_NO_UNLOAD=1), nothing of the module
# left in tracefs, a clean kernel log, no new taint beyond O/E. Returns 0
# iff no "not ok" line was printed by this script.
ue_kernel_checks() {
	local left klines=()
	if [[ ${UE_NO_UNLOAD:-0} != 1 ]]; then
		if ue_unload 40; then
			ue_ok "rmmod after the run"
		else
			ue_notok "rmmod after the run"
			sed 's/^/#   /' "$UE_TRACING/user_events_status" 2>/dev/null | tail -n 20
		fi
		left=$(ls -d "$UE_TRACING"/user_events_* "$UE_TRACING"/events/user_events* 2>/dev/null
			grep -s '^u:' "$UE_TRACING/dynamic_events")
		ue_check "no user_events files left in tracefs${left:+: ${left//$'\n'/ }}" test -z "$left"
	fi
	mapfile -t klines < <(dmesg | ue_kcsan_filter /tmp/kcsan-other.log | grep -E "$UE_KPAT")
	[[ -s /tmp/kcsan-other.log ]] && tail -n 1 /tmp/kcsan-other.log
	if ((${#klines[@]})); then
		ue_notok "kernel log is clean"
		printf '#   %s\n' "${klines[@]:0:40}"
	else
		ue_ok "kernel log is clean"
	fi
	local t1
	t1=$(ue_bad_taint)
	ue_check "no new taint beyond O/E (tainted=$(cat /proc/sys/kernel/tainted))" \
		test $((t1 & ~${UE_TAINT0:-0})) -eq 0
	echo "# $UE_TAP: $UE_FAIL failure(s)"
	((UE_FAIL == 0))
}

# The guest has no build directory of its own: stop here inside it.
[[ -z ${UE_GUEST:-} ]] || return 0

# ----------------------------------------------------------------- host side
# Build products (module builds per kernel, selftests, guest results).
ue_set_build() { # ue_set_build <dir>
	mkdir -p "$1"
	UE_BUILD=$(cd "$1" && pwd)
	UE_BUILD_DIR=$UE_BUILD
	export UE_BUILD UE_BUILD_DIR
}
ue_set_build "${UE_BUILD_DIR:-$UE_REPO/build}"
# stress, fuzz, race and check-debug build into build/robust (own lock), so
# that they can run while `make check` uses build/.
ue_robust() { ue_set_build "${UE_ROBUST_BUILD_DIR:-$UE_REPO/build/robust}"; }

# Cache for things derived from installed packages (vmlinux ELF images,
# initramfs images, the kselftest harness headers). Lives outside the repo.
ue_cache_dir() {
	local d
	if [[ -n ${UE_CACHE_DIR:-} ]]; then
		d=$UE_CACHE_DIR
	elif [[ -w /var/cache ]] || [[ -w /var/cache/user-events ]]; then
		d=/var/cache/user-events
	else
		d=${XDG_CACHE_HOME:-$HOME/.cache}/user-events
	fi
	mkdir -p "$d" || ue_die "cannot create cache dir $d"
	printf '%s\n' "$d"
}

# A short key that changes whenever one of the given files changes.
ue_files_key() {
	local f
	for f in "$@"; do
		[[ -e $f ]] || ue_die "missing file: $f"
		stat -L -c '%n %s %Y' -- "$f"
	done | sha256sum | cut -c1-16
}

# Serialise builds and guest runs that use the same build directory (several
# people may run `make check` in one work tree). Held until the script exits.
ue_lock_build() {
	exec {UE_LOCK_FD}>"$UE_BUILD/.lock"
	if ! flock -n "$UE_LOCK_FD"; then
		ue_note "waiting for another run using $UE_BUILD to finish..."
		flock "$UE_LOCK_FD"
	fi
}

# The newest linux-source-6.12 tarball (the harness, upstream's selftests,
# the debug kernel come from it).
ue_source_tarball() {
	local t
	t=$(find /usr/src -maxdepth 1 -name 'linux-source-6.12*.tar.*' -printf '%f\n' |
		sort -V | tail -n 1)
	[[ -n $t ]] || ue_die "no /usr/src/linux-source-6.12*.tar.* (package linux-source-6.12)"
	printf '/usr/src/%s\n' "$t"
}

# -- the package installer ---------------------------------------------------
# Every apt/dpkg step waits up to 10 minutes for the dpkg lock another apt
# process on the machine may hold.
UE_APT=(apt-get -o DPkg::Lock::Timeout=600 -o Dpkg::Use-Pty=0)
ue_root() { # ue_root <command...>: as root (sudo when needed)
	if ((EUID == 0)); then
		"$@"
	elif command -v sudo >/dev/null; then
		sudo "$@"
	else
		ue_note "not root and no sudo: cannot run $*"
		return 1
	fi
}
# Run a command in a Debian chroot (scripts/matrix/chroot.sh's) with /proc
# mounted (maintainer scripts want it) and a clean environment.
ue_in_chroot() { # ue_in_chroot <dir> <command...>
	local dir=$1 st=0
	shift
	mountpoint -q "$dir/proc" || mount -t proc proc "$dir/proc"
	chroot "$dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		DEBIAN_FRONTEND=noninteractive LANG=C "$@" || st=$?
	umount "$dir/proc" 2>/dev/null || true
	return "$st"
}

# Copy the 9p modules a guest kernel needs (with their dependencies, in
# load order, uncompressed) into <dir> as NN-<name>.ko; prints how many.
ue_9p_modules() { # ue_9p_modules <dir> <modprobe -d base> <release>
	local verb path base n=0
	declare -A seen=()
	while read -r verb path _; do
		[[ $verb == insmod ]] || continue # "builtin virtio_pci" on 6.12
		[[ -n ${seen[$path]:-} ]] && continue
		seen[$path]=1
		n=$((n + 1))
		base=${path##*/}
		base=${base%%.ko*}
		base=$(printf '%s/%02d-%s.ko' "$1" "$n" "$base")
		case $path in
		*.ko) cp "$path" "$base" ;;
		*.ko.xz) xz -dc "$path" >"$base" ;;
		*.ko.zst) zstd -dcq "$path" >"$base" ;;
		*.ko.gz) gzip -dc "$path" >"$base" ;;
		*) ue_die "unknown module format: $path" ;;
		esac
	done < <(modprobe -d "$2" -a -S "$3" --show-depends virtio_pci 9pnet_virtio 9p)
	echo "$n"
}

# ue_initramfs <out.cpio> <busybox> <modprobe -d base> <release>: the guest's
# initramfs (busybox, scripts/guest/init as /init, the virtio/9p modules of
# <release> unless they are built in) written to <out.cpio> at once; older
# initramfs-*.cpio beside it go.
ue_initramfs() {
	local out=$1 busybox=$2 base=$3 rel=$4 work tmp n
	work=$(mktemp -d)
	mkdir -p "$work/root/bin" "$work/root/modules" "$work/root/dev"
	cp "$busybox" "$work/root/bin/busybox"
	install -m 755 "$UE_REPO/scripts/guest/init" "$work/root/init"
	n=$(ue_9p_modules "$work/root/modules" "$base" "$rel")
	if ((n == 0)) && ! modprobe -d "$base" -S "$rel" --show-depends 9p 2>/dev/null |
		grep -q '^builtin'; then
		rm -rf "$work"
		ue_die "modprobe found no 9p modules for $rel in $base"
	fi
	tmp=$(mktemp "$out.tmp.XXXXXX")
	(cd "$work/root" && find . -print0 | LC_ALL=C sort -z |
		cpio --null -o -H newc --owner=0:0 --quiet) >"$tmp"
	rm -rf "$work"
	find "${out%/*}" -maxdepth 1 -name 'initramfs-*.cpio' -delete
	mv -f "$tmp" "$out"
}

ue_missing_packages() {
	local -A have=()
	local p status
	# One dpkg-query for the whole list (unknown names just get no line).
	while read -r p status; do
		[[ $status == installed ]] && have[${p%%:*}]=1
	done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "$@" 2>/dev/null || true)
	for p in "$@"; do
		[[ -n ${have[$p]:-} ]] || printf '%s\n' "$p"
	done
}
# Install what is missing of the given packages (all of them when one is
# missing, with --all: kernel metapackages then resolve together). Status 1
# (and a note) when some are still missing.
ue_install_packages() { # ue_install_packages [--all] <package...>
	local all=0 missing
	[[ $1 == --all ]] && { all=1; shift; }
	mapfile -t missing < <(ue_missing_packages "$@")
	((${#missing[@]} == 0)) && return 0
	ue_note "installing: ${missing[*]}"
	((all)) && missing=("$@")
	ue_root "${UE_APT[@]}" update -qq >&2 || ue_note "apt-get update failed"
	ue_root env DEBIAN_FRONTEND=noninteractive "${UE_APT[@]}" install -y -qq \
		--no-install-recommends "${missing[@]}" >&2 || ue_note "apt-get install failed"
	mapfile -t missing < <(ue_missing_packages "$@")
	((${#missing[@]} == 0)) && return 0
	ue_note "still missing after install: ${missing[*]}"
	return 1
}

# -- results -----------------------------------------------------------------
UE_T0=$SECONDS
ue_elapsed() { printf '%dm%02ds' $(((SECONDS - UE_T0) / 60)) $(((SECONDS - UE_T0) % 60)); }
ue_section() { printf '\n===== %s [%s] =====\n' "$*" "$(ue_elapsed)"; }
# The end of every driver: the summary, what failed, and last
# "N passed, N failed"; status 1 iff something failed.
ue_finish() { # ue_finish <what> [comment line]
	ue_section "$1 summary${2:+ ($2)}"
	((${#UE_SUMMARY[@]} == 0)) || printf '%s\n' "${UE_SUMMARY[@]}"
	if ((${#UE_FAILED[@]})); then
		echo "failed:"
		printf '  %s\n' "${UE_FAILED[@]}"
	fi
	if ((${#UE_KNOWN_SEEN[@]})); then
		echo "known differences (upstream's tests expected to fail, see $UE_KNOWN_LIST):"
		printf '  %s\n' "${UE_KNOWN_SEEN[@]}"
		echo "$UE_KNOWN known difference(s), counted neither as passed nor as failed"
	fi
	if ((${#UE_SKIPPED[@]})); then
		echo "expected skips (not passed; each listed for its kernel in $UE_SKIPS_LIST):"
		printf '  %s\n' "${UE_SKIPPED[@]}"
		echo "$UE_SKIP expected skip(s), counted neither as passed nor as failed"
	fi
	echo "$1 took $(ue_elapsed)"
	echo "$UE_PASS passed, $UE_FAIL failed"
	((UE_FAIL == 0))
}

# Classify the TAP lines of a guest's output: "P <name>", "F <name>", and
# "K <name>: <reason>" for a known difference ($UE_KNOWN_LIST: an upstream
# test expected to fail at a given check). An "ok" with "# SKIP" is
# "S <name>" (listed with its reason, neither passed nor failed) when
# $UE_SKIPS_LIST (tests/selftests/expected-skips) expects that test to skip on
# <release> for that reason; any other skip is a failure, and so is a test
# listed there for <release> that ran instead. "# ue-run: <program>" lines
# (run-tests.sh) name the program.
ue_count_tap() { # ue_count_tap <output.log> [release]
	awk -v known="${UE_KNOWN_LIST:-/dev/null}" -v skips="${UE_SKIPS_LIST:-/dev/null}" \
		-v rel="${2:-}" '
		# A shell glob (*, ?) as an anchored regular expression
		function glob_re(g, r, i, c) {
			r = "^"
			for (i = 1; i <= length(g); i++) {
				c = substr(g, i, 1)
				if (c == "*") r = r ".*"
				else if (c == "?") r = r "."
				else if (index("\\^$.[]|()+{}", c)) r = r "\\" c
				else r = r c
			}
			return r "$"
		}
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
			# Expected skips: "<release glob> <program> <test> <reason holds>"
			while ((getline line < skips) > 0) {
				if (line ~ /^#/ || line ~ /^[ \t]/ || line ~ /^[ \t]*$/) continue
				split(line, f, /[ \t]+/)
				if (rel == "" || rel !~ glob_re(f[1])) continue
				skip_for[f[2] SUBSEP f[3]] = f[4]
			}
		}
		function name(pre, s) {
			sub(/^- /, "", s)
			sub(/^runner: /, "", s)
			if (prog != "" && index(s, prog ": ") == 1) s = substr(s, length(prog) + 3)
			return (prog == "" ? "" : prog ": ") pre s
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
				print "F " name("not ok ", $0) " (a known difference, but not failing at " at[k] ")"
			else
				print "F " name("not ok ", $0)
			next
		}
		/^ok([ \t]|$)/ {
			sub(/^ok[ \t]*/, "")
			k = prog SUBSEP tname($0)
			skipped = match(tolower($0), /#[ \t]*skip/)
			if (skipped && (k in skip_for) && index(substr($0, RSTART), skip_for[k]))
				print "S " name("", $0)
			else if (skipped && (k in skip_for))
				print "F " name("SKIP (counted as a failure: expected only for a reason holding \"" \
					skip_for[k] "\") ", $0)
			else if (skipped)
				print "F " name("SKIP (counted as a failure: not expected on " \
					(rel == "" ? "this kernel" : rel) ") ", $0)
			else if (k in skip_for)
				print "F " name("", $0) " ran, but is listed as an expected skip on " rel
			else if (k in at) print "F " name("", $0) " passes, but is listed as a known difference"
			else print "P " name("", $0)
		}' "$1"
}

# -- the per-kernel loop -----------------------------------------------------
# Lock the build dir, install what tests need, pick the kernels (KVERS=...,
# or UE_MATRIX_TARGETS: a file of "<release> <suite> <vmlinuz> <modules
# dir>" lines, kernels booted from their extracted packages and built in
# that Debian release's chroot; scripts/matrix.sh writes it).
declare -A UE_TSUITE=() UE_TKERNEL=() UE_TMODROOT=()
ue_start() { # ue_start <title>
	local rel suite vmlinuz moddir
	ue_lock_build
	ue_section "$1: setup"
	"$UE_REPO/scripts/setup.sh"
	if [[ -n ${UE_MATRIX_TARGETS:-} ]]; then
		UE_KERNELS=()
		while read -r rel suite vmlinuz moddir; do
			[[ -n $rel && $rel != \#* ]] || continue
			UE_KERNELS+=("$rel")
			UE_TSUITE[$rel]=$suite UE_TKERNEL[$rel]=$vmlinuz
			# run.sh --modules takes the directory holding lib/modules
			UE_TMODROOT[$rel]=${moddir%/lib/modules/"$rel"}
		done <"$UE_MATRIX_TARGETS"
	elif [[ ${UE_ARCH:-x86_64} == arm64 ]]; then
		# Debian's arm64 kernels, from their packages (make check-arm64)
		"$UE_REPO/scripts/arm64/setup.sh"
		mapfile -t UE_KERNELS < <("$UE_REPO/scripts/arm64/kernels.sh")
	else
		mapfile -t UE_KERNELS < <("$UE_REPO/scripts/kernels.sh")
	fi
	((${#UE_KERNELS[@]})) || ue_die "no kernels to test"
	echo "kernels: ${UE_KERNELS[*]}"
}

# Build a userspace tool into $UE_BUILD/bin/<name>; a failure is counted.
ue_build_tool() { # ue_build_tool <name> <source.c> [cc options...]
	local name=$1 src=$2
	shift 2
	mkdir -p "$UE_BUILD/bin"
	gcc -O2 -g -Wall -Wextra -Werror -pthread -I"$UE_REPO/include" \
		-o "$UE_BUILD/bin/$name" "$UE_REPO/$src" "$@" && return 0
	ue_fail "$name build failed"
	return 1
}

# A seed: the given one, or a fresh random one.
ue_seed() { printf '%s\n' "${1:-$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')}"; }

# A timed random run's settings from <NAME>_S (seconds), <NAME>_SEED and
# <NAME>_ARGS (more arguments of the tool): UE_SECS, UE_SEED, UE_ARGS.
ue_run_settings() { # ue_run_settings <NAME> <default seconds>
	local secs=${1}_S seed=${1}_SEED args=${1}_ARGS
	UE_SECS=${!secs:-$2}
	[[ $UE_SECS =~ ^[0-9]+$ ]] || ue_die "$secs must be a number of seconds"
	UE_SEED=$(ue_seed "${!seed:-}")
	# shellcheck disable=SC2034 # for the caller
	read -r -a UE_ARGS <<<"${!args:-}"
}

# The start of a timed random run (stress, race, fuzz): build/robust, the
# settings (ue_run_settings), then ue_start.
ue_start_run() { # ue_start_run <NAME> <default seconds> <title>
	ue_robust
	ue_run_settings "$1" "$2"
	ue_start "$3 (seed $UE_SEED, ${UE_SECS}s per kernel)"
}

# Build the module for one kernel (scripts/build-module.sh, W=1) into
# UE_KO. Warnings count one failure, the tests still run; status 1 when
# there is no module.
ue_module() { # ue_module <release>
	local rel=$1 st=0 kos
	UE_KO=
	local build=$UE_REPO/scripts/build-module.sh
	[[ ${UE_ARCH:-x86_64} != arm64 ]] || build=$UE_REPO/scripts/arm64/build-module.sh
	kos=$("$build" ${UE_TSUITE[$rel]:+--chroot "${UE_TSUITE[$rel]}"} \
		"$rel" "${UE_MODULE_SRC:-$UE_REPO}") || st=$?
	if ((st != 0 && st != 3)); then
		ue_fail "$rel: module build failed"
		return 1
	fi
	((st == 0)) || ue_fail "$rel: module build printed warnings (W=1)"
	UE_KO=$(grep -m1 '/user_events\.ko$' <<<"$kos" || head -n 1 <<<"$kos")
	echo "built $UE_KO"
}

# Boot a guest (scripts/guest/run.sh) with results in $UE_BUILD/<rel>/<name>
# (UE_RES), show its output and count its TAP lines; a failed guest run
# (oops, WARN, lockdep, KASAN..., hang) is one more failure, shown with the
# console from the first problem on. run.sh's status goes to UE_GSTATUS.
ue_guest() { # ue_guest <rel> <name> [run.sh options...] -- <command...>
	local rel=$1 st=0 kind line nf=0 opts=()
	UE_RES=$UE_BUILD/$1/$2
	shift 2
	while (($#)) && [[ $1 != -- ]]; do opts+=("$1"); shift; done
	[[ ${V:-0} == 1 ]] || opts+=(-q)
	[[ -z ${UE_TKERNEL[$rel]:-} ]] ||
		opts+=(--kernel "${UE_TKERNEL[$rel]}" --modules "${UE_TMODROOT[$rel]}")
	"$UE_REPO/scripts/guest/run.sh" -o "$UE_RES" "${opts[@]}" "$rel" "$@" || st=$?
	[[ ${V:-0} == 1 || ! -f $UE_RES/output.log ]] || cat "$UE_RES/output.log"
	if [[ -f $UE_RES/output.log ]]; then
		ue_count_tap "$UE_RES/output.log" "$rel" >"$UE_RES/counted"
		while read -r kind line; do
			case $kind in
			P) UE_PASS=$((UE_PASS + 1)) ;;
			K) UE_KNOWN=$((UE_KNOWN + 1)) UE_KNOWN_SEEN+=("$rel: $line") ;;
			S) UE_SKIP=$((UE_SKIP + 1)) UE_SKIPPED+=("$rel: $line") ;;
			*) ue_fail "$rel: $line"; nf=$((nf + 1)) ;;
			esac
		done <"$UE_RES/counted"
	fi
	if ((st == 2)); then
		line=$(grep -m1 '^    \[' "$UE_RES/problems" 2>/dev/null ||
			head -n 1 "$UE_RES/problems" 2>/dev/null || echo unknown)
		ue_fail "$rel: guest run failed: $(sed -E 's/^ +//; s/^\[ *[0-9.]+\] //' <<<"$line")"
		echo "----- guest run FAILED; problems:"
		sed 's/^/  /' "$UE_RES/problems" 2>/dev/null || true
		line=$(grep -n -a -m1 -F -f <(sed -n 's/^    //p' "$UE_RES/problems") \
			"$UE_RES/console.log" 2>/dev/null | cut -d: -f1 || true)
		echo "----- console ($UE_RES/console.log):"
		if [[ -n $line ]]; then
			tail -n "+$line" "$UE_RES/console.log" | head -n 100 | sed 's/^/  | /'
		else
			tail -n 60 "$UE_RES/console.log" 2>/dev/null | sed 's/^/  | /' || true
		fi
	elif ((st != 0 && nf == 0)); then
		ue_fail "$rel: ${UE_RES##*/} exited with status $st without a failing result line"
	fi
	# shellcheck disable=SC2034 # for the caller
	UE_GSTATUS=$st
}

# Require a line in the last guest's output (a tool's final count...).
ue_expect() { # ue_expect <grep -E pattern> <failure message>
	grep -q -E -- "$1" "$UE_RES/output.log" 2>/dev/null || ue_fail "$2"
}

# For each kernel: its section, the module build, then <fn> <rel> <ko>;
# a summary line per kernel.
ue_each_kernel() { # ue_each_kernel <fn>
	local rel p0 f0 k0 s0
	for rel in "${UE_KERNELS[@]}"; do
		p0=$UE_PASS f0=$UE_FAIL k0=$UE_KNOWN s0=$UE_SKIP
		ue_section "$rel: module build"
		ue_module "$rel" && "$1" "$rel" "$UE_KO"
		UE_SUMMARY+=("$rel: $((UE_PASS - p0)) passed, $((UE_FAIL - f0)) failed${UE_KNOWN_LIST:+, $((UE_KNOWN - k0)) known difference(s)}${UE_SKIPS_LIST:+, $((UE_SKIP - s0)) expected skip(s)}")
	done
}
