#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/race/enable_churn_runs.sh <label> <runs> <seconds> <release> [enable_churn args...]
#
# Host side: boots <release> <runs> times, one guest at a time (-smp 2,
# the guest runner's single-threaded TCG), each running
# tests/race/enable_churn.sh for <seconds> with the given enable_churn options
# (-k KIND -i 0|1 -d 0|1 -w N; seeds 1..runs). The kinds user and ucycle
# load the module built for <release> (scripts/build-module.sh). Each run
# ends clean or with the kernel's first report; one line per run goes to
# build/enable_churn/<release>/runs.tsv:
#   label  run  result(clean|crash)  seconds-into-churn  ghost-opens  signature  counts
# (counts: enable_churn's operation counts, clean runs only)
# and a summary line per label is printed at the end:
#   <label>: N runs of Ss, C crashed (signatures...), ghost opens seen ...
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

label=${1:?usage: $0 <label> <runs> <seconds> <release> [enable_churn args...]}
runs=${2:?} secs=${3:?} rel=${4:?}
shift 4
out=$UE_BUILD/enable_churn/$rel
mkdir -p "$out" "$UE_BUILD/bin"
gcc -O2 -g -Wall -Wextra -Werror -pthread -I"$UE_REPO/include" \
	-o "$UE_BUILD/bin/enable_churn" "$UE_REPO/tests/race/enable_churn.c"
ko=-
if [[ " $* " == *" -k user "* || " $* " == *" -k ucycle "* ]]; then
	ko=$("$UE_REPO/scripts/build-module.sh" "$rel" | grep -m1 '/user_events\.ko$')
fi

# The first kernel report of a console log, as "what in function (caller)"
signature() { # signature <console.log>
	awk '
	!what && /BUG: unable to handle page fault for address:/ { what = "page fault at " $NF }
	!what && /BUG: kernel NULL pointer dereference, address:/ { what = "NULL dereference at " $NF }
	!what && /general protection fault/ { what = "general protection fault" }
	!what && /WARNING: CPU: [0-9]+ PID: [0-9]+ at / { sub(/.* at /, ""); what = "WARNING at " $1 }
	!what && /list_(add|del) corruption/ { what = "list corruption" }
	!what && /kernel BUG at/ { sub(/.*kernel BUG at /, ""); what = "BUG at " $1 }
	what && !rip && /RIP: 0010:/ { rip = $NF; sub(/^0010:/, "", rip); sub(/\+.*/, "", rip) }
	what && rip && !caller && /^\[[^]]*\]  [a-z_][a-z_0-9.]*\+0x/ {
		line = $0; sub(/^\[[^]]*\] +/, "", line); split(line, f, " ")
		caller = f[1]; sub(/\+.*/, "", caller)
	}
	END { if (what) printf "%s in %s from %s\n", what, rip, caller }
	' "$1"
}

crashes=0 ghosts=0 sigs=()
for ((i = 1; i <= runs; i++)); do
	res=$out/$label.$i
	st=0
	"$UE_REPO/scripts/guest/run.sh" -q -t $((secs + 240)) -o "$res" "$rel" -- \
		"$UE_REPO/tests/race/enable_churn.sh" "$UE_BUILD/bin/enable_churn" "$ko" \
		-t "$secs" -s "$i" "$@" >/dev/null 2>&1 || st=$?
	g=$(grep -m1 -o 'ghost opens seen: [0-9]*' "$res/output.log" 2>/dev/null | grep -o '[0-9]*$' || echo -)
	t0=$(awk '/# enable_churn:/ { print NR; exit }' "$res/console.log")
	sig=$(signature "$res/console.log")
	if ((st == 0)) && [[ -z $sig ]] && grep -q CHURN_DONE "$res/output.log"; then
		result=clean at=-
	else
		result=crash crashes=$((crashes + 1))
		# seconds into the churn: the report's kernel time minus the
		# time of the kernel line just before the churn started
		at=$(awk -v l="${t0:-0}" '
			/^\[ *[0-9.]+\]/ { match($0, /[0-9]+\.[0-9]+/); ts = substr($0, RSTART, RLENGTH) }
			NR <= l && ts { start = ts }
			NR > l && /BUG:|WARNING:|general protection|corruption|Oops/ { printf "%.0f\n", ts - start; exit }
			' "$res/console.log")
		sigs+=("${sig:-no report (timeout or hang)}")
	fi
	[[ $g == - ]] || ghosts=$((ghosts + g))
	ops=$(grep -m1 '^enable_churn: deletions' "$res/output.log" 2>/dev/null | sed 's/^enable_churn: //' || true)
	printf '%s\t%d\t%s\t%s\t%s\t%s\t%s\n' "$label" "$i" "$result" "${at:--}" "$g" "${sig:--}" "${ops:--}" |
		tee -a "$out/runs.tsv"
done
summary=
((${#sigs[@]} == 0)) ||
	summary=$(printf '%s\n' "${sigs[@]}" | sort | uniq -c | sed 's/^ *//' | paste -sd ';' -)
echo "$label: $runs runs of ${secs}s on $rel ($*), $crashes crashed${summary:+ ($summary)}; ghost opens seen in clean runs: $ghosts" |
	tee -a "$out/summary.txt"
