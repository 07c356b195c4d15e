#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# check_docs.sh OUT - the man pages and the bash completion agree with the
# binary (issue 13). No root, a few seconds; `make check-docs` runs it after
# building OUT/iolat, OUT/cmdtable_dump and the pages (`make man`).
#
# The command table (src/commands.c, as OUT/cmdtable_dump prints it) is the
# reference: its commands are those `iolat --help` lists, and each
# command's options (with -h/--help and -V/--version, without hidden test
# knobs) are, by name, the flags its --help lists. Then, for `iolat --help`
# and each command's --help:
#   - the flags it lists are exactly the flags its page's OPTIONS section
#     defines (man/iolat.1.scd, man/iolat-CMD.1.scd), long flags with their
#     `=ARG` or not; `--[no-]X` counts as --X and --no-X;
#   - every --flag a page mentions anywhere, and every flag in its example
#     command lines, is one the binary knows;
#   - the commands `iolat --help` lists are the COMMANDS of iolat(1), each
#     with a page.
# Every page in OUT/man renders with `man --warnings` printing nothing, and
# lexgrog finds its NAME line (what whatis/apropos index). Then
# check_completion.sh OUT checks contrib/completion/iolat.bash.
# shellcheck disable=SC2086,SC2116,SC2046,SC2005 # $(echo $x): words, one blank apart
set -u
export LC_ALL=C
OUT=${1:?usage: check_docs.sh OUT (the build directory holding iolat and man/)}
OUT=$(cd "$OUT" && pwd) || exit 1
cd "$(dirname "$0")/../.." || exit 1
IOLAT=$OUT/iolat
errors=0
err() {
	echo "check_docs: FAIL: $*" >&2
	errors=$((errors + 1))
}

[ -x "$IOLAT" ] || { echo "check_docs: no $IOLAT: run make first" >&2; exit 1; }
[ -x "$OUT/cmdtable_dump" ] ||
	{ echo "check_docs: no $OUT/cmdtable_dump: run make $OUT/cmdtable_dump" >&2; exit 1; }
for src in man/*.scd; do
	page=$OUT/man/$(basename "$src" .scd)
	if [ ! -f "$page" ] || [ "$src" -nt "$page" ]; then
		echo "check_docs: $page is missing or older than $src: run 'make man'" >&2
		exit 1
	fi
done

source tests/install/lib.sh

# The OPTIONS section of an scdoc page, its definition lines only
# (`*-d*, *--disk*=_DISK_`), formatting stripped.
man_option_lines() {
	awk '/^# /{ opt = ($0 == "# OPTIONS") } opt && /^\*-/' "$1" | tr -d '*_'
}

help_of() { # CMD ('' for the top level)
	if [ -n "$1" ]; then "$IOLAT" "$1" --help; else "$IOLAT" --help; fi
}

# The command table: its commands, and each one's options ("-x", "--name"
# or "--name=", one a line).
table=$("$OUT/cmdtable_dump") || { echo "check_docs: cmdtable_dump failed" >&2; exit 1; }
table_cmds=$(cut -d' ' -f1 <<<"$table" | uniq)
[ -n "$table_cmds" ] || err "cmdtable_dump lists no commands"
is_command() { grep -qxF -- "$1" <<<"$table_cmds"; }

# Long flag names (no arity) every command knows, and each command's flags.
declare -A cmd_flags
all_long=
for cmd in "" $table_cmds; do
	help=$(help_of "$cmd") || { err "iolat $cmd --help exited non-zero"; continue; }
	cmd_flags[${cmd:-iolat}]=$(flags_of <<<"$help")
	all_long+=$(grep -- '^--' <<<"${cmd_flags[${cmd:-iolat}]}" | tr -d =)$'\n'
done
all_long=$(sort -u <<<"$all_long")

# Each command's options in the table are the flags its --help lists, by
# name (the help may write a value as --flag=N or --flag N).
for cmd in $table_cmds; do
	want=$(awk -v c="$cmd" '$1 == c { print $2 }' <<<"$table" | tr -d = | sort -u)
	have=$(tr -d = <<<"${cmd_flags[$cmd]}" | sort -u)
	missing=$(comm -23 <(echo "$want") <(echo "$have"))
	extra=$(comm -13 <(echo "$want") <(echo "$have"))
	[ -z "$missing" ] || err "'iolat $cmd --help' does not list options of its table" \
		"(src/commands.c):" $missing
	[ -z "$extra" ] || err "'iolat $cmd --help' lists flags its option table does not have:" $extra
	[ -n "$missing$extra" ] ||
		echo "check_docs: 'iolat $cmd --help' lists the $(wc -l <<<"$want") options of its table"
done

# Flags in the words of one example command line (`iolat CMD ...`).
example_flags() {
	local w
	for w in "$@"; do
		case $w in
		--*) printf '%s\n' "${w%%=*}" ;;
		-[A-Za-z]*) # grouped short flags, or one with its value attached
			local i=1
			while [ $i -lt ${#w} ]; do printf -- '-%s\n' "${w:i:1}"; i=$((i + 1)); done ;;
		esac
	done
}

for cmd in "" $table_cmds; do
	name=${cmd:-iolat}
	src=man/${cmd:+iolat-}$name.1.scd
	[ -n "$cmd" ] || src=man/iolat.1.scd
	if [ ! -f "$src" ]; then
		err "$src missing (the page of 'iolat $cmd')"
		continue
	fi
	want=${cmd_flags[$name]}
	have=$(man_option_lines "$src" | flags_of)
	missing=$(comm -23 <(echo "$want") <(echo "$have"))
	extra=$(comm -13 <(echo "$want") <(echo "$have"))
	[ -z "$missing" ] || err "$src: flags of 'iolat $cmd --help' missing from its OPTIONS" \
		"(or with another =ARG):" $missing
	[ -z "$extra" ] || err "$src: OPTIONS has flags 'iolat $cmd --help' does not list" \
		"(or with another =ARG):" $extra
	[ -n "$missing$extra" ] ||
		echo "check_docs: $src: its $(wc -l <<<"$want") flags are those of 'iolat${cmd:+ $cmd} --help'"
done

# Every --flag mentioned anywhere in a page is one iolat has.
for src in man/*.scd; do
	mentioned=$(tr -d '*' <"$src" | grep -o -- '--\(\[no-\]\)\?[a-z][a-z0-9.-]*[a-z0-9]' |
		sed -e 's/^--\[no-\]\(.*\)/--\1\n--no-\1/' | sort -u)
	unknown=$(comm -23 <(echo "$mentioned") <(echo "$all_long"))
	[ -z "$unknown" ] || err "$src mentions flags iolat does not have:" $unknown
done

# Example command lines (indented, or in ``` blocks, starting `iolat CMD`):
# each flag must be one of CMD's.
for src in man/*.scd; do
	while read -r -a words; do
		[ "${words[0]}" = iolat ] || continue
		cmd=${words[1]:-}
		is_command "$cmd" || continue
		# shellcheck disable=SC2001 # one line per flag: a trailing = off each
		known=$(sed 's/=$//' <<<"${cmd_flags[$cmd]}")
		for f in $(example_flags "${words[@]:2}"); do
			grep -qxF -- "$f" <<<"$known" ||
				err "$src: example 'iolat $cmd ... $f': 'iolat $cmd' has no $f"
		done
	done < <(sed -e ':a' -e '/\\$/{N; s/\\*\n[ \t]*/ /; ba' -e '}' "$src" |
		grep -E '^(	+)?iolat [a-z]+( |$)' | tr -d '\\*')
done

# The commands of `iolat --help` are iolat(1)'s COMMANDS, each with a page.
help_cmds=$("$IOLAT" --help | awk '/^Commands:/{c=1; next} c && /^$/{exit} c{print $1}' | sort)
man_cmds=$(awk '/^# /{ c = ($0 == "# COMMANDS") } c && /^\*[a-z]+\*$/' man/iolat.1.scd |
	tr -d '*' | sort)
[ -n "$help_cmds" ] || err "'iolat --help' lists no commands (its format changed?)"
[ "$help_cmds" = "$(sort <<<"$table_cmds")" ] || err "'iolat --help' lists" \
	"$(echo $help_cmds), the command table $(echo $table_cmds)"
[ "$help_cmds" = "$man_cmds" ] || err "iolat.1's COMMANDS ($(echo $man_cmds)) are not" \
	"'iolat --help''s ($(echo $help_cmds))"
for c in $help_cmds; do
	[ -f "$OUT/man/iolat-$c.1" ] || err "no page $OUT/man/iolat-$c.1 for the command $c"
	grep -q "iolat-$c\*(1)" man/iolat.1.scd || err "iolat.1 does not refer to iolat-$c(1)"
done

# Each page renders without a warning and has a NAME line whatis can index.
npages=0 before=$errors
for page in "$OUT"/man/*.[0-9]; do
	npages=$((npages + 1))
	warnings=$(man --warnings -l "$page" 2>&1 >/dev/null)
	[ -z "$warnings" ] || err "$page renders with warnings:"$'\n'"$warnings"
	lexgrog "$page" >/dev/null 2>&1 || err "$page: lexgrog finds no NAME line"
done
[ "$errors" -gt "$before" ] ||
	echo "check_docs: $npages pages render without warnings, each with its NAME line"

bash tests/install/check_completion.sh "$OUT" || errors=$((errors + 1))

if [ "$errors" -gt 0 ]; then
	echo "check_docs: $errors check(s) failed" >&2
	exit 1
fi
echo "check_docs: ok"
