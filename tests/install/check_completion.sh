#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# check_completion.sh OUT - contrib/completion/iolat.bash completes what
# OUT/iolat has. No root, a second; check_docs.sh runs it.
#
# It loads the completion in a fresh `bash -c`, once with the
# bash-completion package's functions (when installed) and once without,
# sets COMP_WORDS/COMP_CWORD as readline would (a `--flag=value` word is
# split at '=' as COMP_WORDBREAKS has it, and is also tried unsplit), calls
# _iolat and compares COMPREPLY with what is expected: the commands and
# each command's flags as `iolat [CMD] --help` lists them, the values of
# --attach, --log.level, --log.format, --workloads.by, top's --sort and trace's --op as
# the help texts name them, the disks in /sys/block, files and directories.
# shellcheck disable=SC2086,SC2116,SC2046,SC2005 # $(echo $x): words, one blank apart
set -u
export LC_ALL=C
OUT=${1:?usage: check_completion.sh OUT (the build directory holding iolat)}
OUT=$(cd "$OUT" && pwd) || exit 1
cd "$(dirname "$0")/../.." || exit 1
source tests/install/lib.sh
COMPLETION=$PWD/contrib/completion/iolat.bash
IOLAT=$OUT/iolat
BASH_COMPLETION_LIB=/usr/share/bash-completion/bash_completion
errors=0
err() {
	echo "check_completion: FAIL: $*" >&2
	errors=$((errors + 1))
}
[ -x "$IOLAT" ] || { echo "check_completion: no $IOLAT: run make first" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/conf/progs" "$tmp/conf/other.d"
touch "$tmp/conf/iolat.yml" "$tmp/conf/web.yml" "$tmp/conf/progs/biosize.yaml" \
	"$tmp/conf/progs/timers.yaml" "$tmp/conf/progs/biosize.bpf.o"

# The cases: one a line, `WORDS -> EXPECTED`, words separated by blanks
# ('' is an empty word, the one being completed when last), expected the
# sorted COMPREPLY, one word each, or a @NAME list computed below.
help_values() { # CMD FLAG: the values the help names on FLAG's line
	"$IOLAT" "$1" --help | grep -m1 -- "$2=" |
		sed -e "s/.*$2=[A-Z]*//" -e 's/(default)//g' -e 's/[,|]/ /g' -e 's/ or / /g' |
		tr ' ' '\n' | grep -E '^[a-z_]+$' | sort | tr '\n' ' '
}
sort_columns=$("$IOLAT" top --help | sed -n '/--sort=COLUMN/,/(default/p' |
	sed -e 's/.*sort by//' -e 's/(default.*//' | tr ', ' '\n' | grep -E '^[a-z0-9_]+$' |
	grep -vx or | sort | tr '\n' ' ')
attach=$(help_values hist --attach)
levels=$(help_values serve --log.level | sed 's/\bdefault\b//')
formats=$(help_values serve --log.format | sed 's/\bdefault\b//')
by=$("$IOLAT" serve --help | grep -o -- '--workloads.by=[a-z|]*' | sed 's/.*=//' | tr '|' '\n' |
	sort | tr '\n' ' ')
ops=$("$IOLAT" trace --help | grep -o -- '--op=[a-z|]*' | sed 's/.*=//' | tr '|' '\n' |
	sort | tr '\n' ' ')
commands=$("$IOLAT" --help | awk '/^Commands:/{c=1; next} c && /^$/{exit} c{print $1}' |
	sort | tr '\n' ' ')
for v in sort_columns attach levels formats by ops commands; do
	[ -n "$(echo ${!v})" ] || err "could not read the $v from iolat's help (its format changed?)"
done
disks_like() { # PREFIX: the entries of /sys/block starting with it
	local d
	for d in /sys/block/"$1"*; do [ -e "$d" ] && printf '%s ' "${d##*/}"; done
}
# A prefix that some disks have: loop devices if there are any.
prefix=lo
if [ -z "$(disks_like lo)" ]; then
	for d in /sys/block/*; do prefix=${d##*/}; prefix=${prefix:0:2}; break; done
fi

cases() {
	cat <<CASES
iolat se -> serve
iolat '' -> $commands
iolat - -> $(flags_of < <("$IOLAT" --help) | tr '\n' ' ')
iolat serve --web.list -> --web.listen-address=
iolat serve --no-collector.t -> --no-collector.total-time
iolat check --no-l -> --no-load
iolat hist -d $prefix -> @disks
iolat hist --disk = $prefix -> @disks
iolat hist --disk=$prefix -> @disks=--disk=
iolat trace -d $prefix -> @disks
iolat top --disk $prefix -> @disks
iolat hist --attach = '' -> $attach
iolat trace --attach '' -> $attach
iolat serve --attach=t -> --attach=tp_btf
iolat serve --log.level = '' -> $levels
iolat serve --log.format = '' -> $formats
iolat serve --log.format=j -> --log.format=json
iolat serve --workloads.by = '' -> $by
iolat top -s '' -> $sort_columns
iolat top --sort = r_p9 -> r_p90_ms r_p99_ms
iolat trace -o '' -> $ops
iolat trace --op = w -> write
iolat serve --config.file = $tmp/conf/i -> $tmp/conf/iolat.yml
iolat serve --web.config.file $tmp/conf/w -> $tmp/conf/web.yml
iolat serve --config.dir = $tmp/conf/ -> $tmp/conf/other.d $tmp/conf/progs
iolat serve --config.dir=$tmp/conf/progs --config.names = '' -> biosize timers
iolat serve --config.dir $tmp/conf/progs --config.names = biosize,t -> biosize,timers
iolat trace -w $tmp/conf/w -> $tmp/conf/web.yml
iolat trace --read $tmp/conf/io -> $tmp/conf/iolat.yml
iolat help '' -> $commands
iolat help t -> top trace
CASES
	for cmd in $commands; do
		echo "iolat $cmd - -> $(flags_of < <("$IOLAT" $cmd --help) | tr '\n' ' ')"
		echo "iolat $cmd -v -d $prefix -x -- -> $(flags_of < <("$IOLAT" $cmd --help) |
			grep '^--' | tr '\n' ' ')"
	done
}

# Runs every case in one shell; prints `WORDS -> GOT` a line.
run_cases() { # 1: with bash-completion's functions
	PATH=$OUT:$PATH bash -c '
		[ "$1" = 1 ] && source "$2"
		source "$3" || exit 1
		complete -p iolat | grep -q -- "-F _iolat" || { echo "not registered"; exit 1; }
		while IFS= read -r line; do
			eval "words=(${line% -> *})"
			COMP_WORDS=("${words[@]}")
			COMP_CWORD=$((${#words[@]} - 1))
			COMP_LINE="${words[*]}"
			COMP_POINT=${#COMP_LINE}
			COMPREPLY=()
			_iolat iolat "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
			got=$(printf "%s\n" "${COMPREPLY[@]}" | LC_ALL=C sort | tr "\n" " ")
			echo "${line% -> *} -> $got"
		done
	' run_cases "$1" "$BASH_COMPLETION_LIB" "$COMPLETION"
}

expected() { # WANT: @disks, @disks=PREFIX or the words themselves
	case $1 in
	@disks) disks_like "$prefix" ;;
	@disks=*) disks_like "$prefix" | sed "s|\([^ ]*\) |${1#@disks=}\1 |g" ;;
	*) echo "$1" ;;
	esac
}

check_run() { # LABEL 0|1
	local -a lines got
	local i words want have
	mapfile -t lines < <(cases)
	mapfile -t got < <(printf '%s\n' "${lines[@]}" | run_cases "$2")
	if [ ${#got[@]} -ne ${#lines[@]} ]; then
		err "$1: the completion did not load or stopped: ${got[*]}"
		return
	fi
	for i in "${!lines[@]}"; do
		words=${lines[i]% -> *}
		have=$(echo ${got[i]#* -> })
		want=$(echo $(expected "${lines[i]#* -> }"))
		# Disks come and go (other tests make loop devices): on a mismatch,
		# complete again and compare with /sys/block as it is then.
		if [ "$have" != "$want" ] && [[ ${lines[i]} == *@disks* ]]; then
			have=$(echo $(echo "${lines[i]}" | run_cases "$2" | sed 's/.* -> //'))
			want=$(echo $(expected "${lines[i]#* -> }"))
		fi
		[ "$have" = "$want" ] ||
			err "$1: '$words' completes to [$have], expected [$want]"
	done
	echo "check_completion: $1: ${#lines[@]} cases"
}

check_run "without bash-completion" 0
if [ -f "$BASH_COMPLETION_LIB" ]; then
	check_run "with bash-completion" 1
else
	echo "check_completion: bash-completion is not installed; checked without it only"
fi

# The same through real readline on a pseudo-terminal: what Tab inserts,
# and no space after a `--flag=`.
if command -v python3 >/dev/null; then
	for lib in "" "$BASH_COMPLETION_LIB"; do
		[ -z "$lib" ] || [ -f "$lib" ] || continue
		if out=$(PATH=$OUT:$PATH python3 tests/install/pty_complete.py "$COMPLETION" $lib); then
			echo "check_completion: interactive bash${lib:+ with bash-completion}: Tab completes"
		else
			err "interactive bash${lib:+ with bash-completion}:"$'\n'"$out"
		fi
	done
fi

if [ "$errors" -gt 0 ]; then
	echo "check_completion: $errors case(s) failed" >&2
	exit 1
fi
echo "check_completion: ok"
