#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# check_decoders.sh - every label decoder of UDEC_KINDS (src/uprog/uconfig.h)
# is described where users look: docs/userprogs.md ("- `name`: ...") and
# man/iolat-userprog.5.scd ("*name*" in DECODERS). The build itself checks
# the code's tables (decoders.c). Prints each decoder missing; exit 1 if any.
set -u
cd "$(dirname "$0")/../.." || exit 1
names=$(sed -n 's/^[[:space:]]*X([A-Z_]*, "\([a-z_]*\)").*/\1/p' src/uprog/uconfig.h)
[ -n "$names" ] || { echo "check_decoders: no X(KIND, \"name\") rows in src/uprog/uconfig.h"; exit 1; }
bad=0
for n in $names; do
	grep -q "^- \`$n\`:" docs/userprogs.md ||
		{ echo "docs/userprogs.md: decoder $n not described"; bad=1; }
	grep -q "^[[:space:]]*\*$n\*\$" man/iolat-userprog.5.scd ||
		{ echo "man/iolat-userprog.5.scd: decoder $n not described"; bad=1; }
done
exit "$bad"
