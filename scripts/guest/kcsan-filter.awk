# SPDX-License-Identifier: GPL-2.0
#
# KCSAN kernels: passes a kernel log through, except the data race reports
# in which neither racing access is in user_events.ko's code (the report's
# title names no function of ours: user_event*, user_status_*, ue_*). Those
# are the core kernel's own races, also when they only interrupted the
# module or ran in its work items: they go to the file named by -v other=
# (if given) and are counted in the last line of that file.
# Used by scripts/guest/run.sh (the console) and tests/race/guest.sh (dmesg).
/BUG: KCSAN:/ {
	inrep = 1
	block = $0 "\n"
	ours = $0 ~ /data-race in (.* )?(user_events?_|user_status_|ue_)/
	next
}
inrep {
	block = block $0 "\n"
	if ($0 ~ /==========/) {
		if (ours) {
			printf "%s", block
		} else {
			n++
			if (other != "")
				printf "%s", block >> other
		}
		inrep = 0
	}
	next
}
{ print }
END {
	if (inrep)
		printf "%s", block
	if (other != "")
		printf "# %d data race report(s) of the core kernel alone\n", n >> other
}
