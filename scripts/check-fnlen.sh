#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Documentation/development.rst, "Function length": a function of the
# module is at most 60 lines, from its first line (the return type's) to
# its closing brace. Prints each longer one as "file:line: N lines: name";
# exit status non-zero iff there is one.
#
#   scripts/check-fnlen.sh [FILE...]   (default: the module's .c files)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
if ((!$#)); then
	for f in ./*.c; do
		[[ $f == *.mod.c ]] || set -- "$@" "$f"
	done
fi
awk -v max="${UE_FNLEN_MAX:-60}" '
FNR == 1 { start = 0; body = 0 }
!body && /^[A-Za-z_]/ && !start { start = FNR; name = $0 }
!body && start && /;[[:space:]]*$/ && !/^{/ { start = 0 }
/^{$/ && start { body = 1 }
/^}$/ && body {
	if (FNR - start + 1 > max) {
		printf "%s:%d: %d lines: %s\n", FILENAME, start,
		       FNR - start + 1, name
		bad = 1
	}
	start = 0; body = 0
}
END { exit bad }' "$@"
