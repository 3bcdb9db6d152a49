#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# user_events.ko selftests: replay the inputs that once found bugs
# (tests/fuzz/regressions/*.case, copied next to this script by the Makefile).
# Each case file is one TAP line: every input in it must give the result
# the fuzzer's model of the ABI predicts. ue_fuzz deletes what it created.
dir=$(dirname "$0")/fuzz
set -- "$dir"/regressions/*.case
if [ ! -e "$1" ]; then
	echo "not ok - no regression cases in $dir/regressions"
	exit 1
fi
exec "$dir/ue_fuzz" --replay "$@"
