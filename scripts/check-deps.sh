#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The module's files depend on each other one way (issue 29): each object
# of a build may use only symbols defined by objects listed before it in
# ORDER, the drawing in Documentation/development.rst ("Dependencies").
# Reads the objects' symbol tables with nm: what a file calls, takes the
# address of or reads, not what its comments say.
#
#   scripts/check-deps.sh <directory of a module build>
#
# Prints each edge that goes the wrong way and exits 1, or exits 0.
set -euo pipefail

ORDER=(user_events_call_x86 user_events_call_arm64 user_events_derive
	user_events_ksyms user_events_parse user_events_quota
	user_events_status user_events_dirs user_events_purge
	trace_events_user user_events_mm user_events_fork user_events_main)

dir=${1:?usage: $0 <module build directory>}
declare -A rank
for i in "${!ORDER[@]}"; do
	rank[${ORDER[$i]}]=$i
done

defs=$(mktemp)
trap 'rm -f "$defs"' EXIT
objs=()
for o in "$dir"/*.o; do
	f=${o##*/}
	f=${f%.o}
	case $f in user_events | user_events.mod) continue ;; esac
	[[ -n ${rank[$f]:-} ]] || { echo "$f: not in ORDER (scripts/check-deps.sh)"; exit 1; }
	objs+=("$o")
done
for o in "${objs[@]}"; do
	f=${o##*/}
	nm --defined-only -g "$o" | awk -v f="${f%.o}" '{print $3 "\t" f}'
done | sort >"$defs"
((${#objs[@]})) || { echo "no objects in $dir"; exit 1; }

bad=0
for o in "${objs[@]}"; do
	f=${o##*/}
	f=${f%.o}
	while IFS=$'\t' read -r sym to; do
		if ((rank[$to] >= rank[$f])); then
			echo "$f uses $sym of $to, which comes later"
			bad=1
		fi
	done < <(nm -u "$o" | awk '{print $2}' | sort -u | join -t $'\t' - "$defs")
done
exit "$bad"
