#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make docs`: check every Documentation/*.rst with docutils and render it
# to build/docs/<name>.html. Any docutils warning (or worse) fails: the
# same strictness as the kernel's `make htmldocs` asks of new documents.
# (Not --strict: that is --halt=info, which also stops on harmless INFO
# messages such as a table cell holding just "--".)
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if ! command -v rst2html >/dev/null && ! python3 -c 'import docutils' 2>/dev/null; then
	"$UE_REPO/scripts/package-setup.sh"
fi
rst2html=(rst2html)
command -v rst2html >/dev/null || rst2html=(python3 -m docutils)

out=$UE_BUILD/docs
mkdir -p "$out"
shopt -s nullglob
docs=("$UE_REPO"/Documentation/*.rst)
((${#docs[@]})) || ue_die "no Documentation/*.rst"

status=0
for rst in "${docs[@]}"; do
	html=$out/$(basename "$rst" .rst).html
	if "${rst2html[@]}" --halt=warning --report=warning --exit-status=warning \
		--no-datestamp "$rst" "$html"; then
		echo "ok - docs: ${rst#"$UE_REPO"/} -> ${html#"$UE_REPO"/}"
	else
		echo "not ok - docs: ${rst#"$UE_REPO"/} has docutils warnings or errors"
		rm -f "$html"
		status=1
	fi
done
exit "$status"
