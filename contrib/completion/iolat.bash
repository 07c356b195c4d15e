# bash completion for iolat(1)                              -*- shell-script -*-
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Install as /usr/share/bash-completion/completions/iolat (loaded on first
# use), or source it from ~/.bashrc. Works with and without the
# bash-completion package.
#
# Commands and flags are read from the binary being completed
# (`iolat --help`, `iolat CMD --help`) each time, so they always match it;
# the values of flags with a fixed set of them are listed here, and
# tests/install/check_completion.sh compares those with the binary's help.

# Parses `BIN [CMD] --help` into _iolat_flags (what to offer: -X, --long,
# --long= for a flag that takes a value; --[no-]X gives --X and --no-X) and
# _iolat_valued (the flags that take a value, short ones included).
_iolat_read_flags()
{
    local bin=$1 cmd=$2 line w i name arg short
    local -a words
    _iolat_flags=() _iolat_valued=()
    while IFS= read -r line; do
        [[ $line =~ ^[[:space:]]+- ]] || continue
        read -r -a words <<<"$line"
        short=
        for ((i = 0; i < ${#words[@]}; i++)); do
            w=${words[i]%,}
            [[ $w == -* ]] || break
            arg=
            # --x=ARG needs a value; --x[=ARG] may take one: offered bare.
            [[ $w == *=* && $w != *'[='* ]] && arg='='
            name=${w%%=*}
            name=${name%\[}
            case $name in
            --\[no-\]*)
                name=${name#--\[no-\]}
                _iolat_flags+=("--$name$arg" "--no-$name$arg")
                ;;
            --*)
                _iolat_flags+=("$name$arg")
                if [[ $arg ]]; then
                    _iolat_valued+=("$name")
                    [[ $short ]] && _iolat_valued+=("$short")
                fi
                ;;
            *)
                _iolat_flags+=("$name")
                short=$name
                ;;
            esac
        done
    done < <("$bin" ${cmd:+"$cmd"} --help 2>/dev/null)
}

# The commands `BIN --help` lists.
_iolat_commands()
{
    local line on=''
    while IFS= read -r line; do
        case $line in
        Commands:) on=1 ;;
        '') [[ $on ]] && break ;;
        *) [[ $on ]] && read -r line _ <<<"$line" && printf '%s\n' "$line" ;;
        esac
    done < <("$1" --help 2>/dev/null)
}

# Files (or directories with -d) matching $cur, each prefixed with $2.
_iolat_files()
{
    local kind=$1 prefix=$2 f
    local -a found
    if [[ ! $prefix ]] && declare -F _filedir >/dev/null; then
        if [[ $kind == -d ]]; then _filedir -d; else _filedir; fi
        return
    fi
    compopt -o filenames 2>/dev/null
    if [[ $kind == -d ]]; then
        mapfile -t found < <(compgen -d -- "$cur")
    else
        mapfile -t found < <(compgen -f -- "$cur")
    fi
    for f in "${found[@]}"; do
        COMPREPLY+=("$prefix$f")
    done
}

# Words, each prefixed with $1, that start with $cur.
_iolat_words()
{
    local prefix=$1 w
    shift
    for w in $(compgen -W "$*" -- "$cur"); do
        COMPREPLY+=("$prefix$w")
    done
}

# Values of the flag $1; $2 is put before each (the `--flag=` of a word
# that was not split at '=').
_iolat_values()
{
    local opt=$1 prefix=$2 i dir='' d
    local -a names
    case $opt in
    --attach)
        _iolat_words "$prefix" auto tp_btf raw_tp ;;
    --workloads.by)
        _iolat_words "$prefix" cgroup process ;;
    --log.level)
        _iolat_words "$prefix" debug info warn error ;;
    --log.format)
        _iolat_words "$prefix" logfmt json ;;
    -s | --sort)
        [[ $cmd == top ]] && _iolat_words "$prefix" r_iops w_iops r_mbs w_mbs avg_kib \
            r_p50_ms r_p90_ms r_p99_ms w_p50_ms w_p90_ms w_p99_ms sys_iops sys_p50_ms \
            sys_p99_ms name ;;
    -o | --op)
        _iolat_words "$prefix" read write ;;
    -d | --disk)
        names=(/sys/block/*)
        [[ -e ${names[0]} ]] && _iolat_words "$prefix" "${names[@]##*/}" ;;
    -p | --pid)
        names=(/proc/[0-9]*)
        _iolat_words "$prefix" "${names[@]##*/}" ;;
    -c | --cgroup)
        if [[ ! $cur ]]; then
            COMPREPLY=("$prefix/sys/fs/cgroup/")
            compopt -o nospace 2>/dev/null
        else
            _iolat_files -d "$prefix"
        fi ;;
    --config.dir)
        _iolat_files -d "$prefix" ;;
    --config.file | --web.config.file | -r | --read | -w | --write)
        _iolat_files -f "$prefix" ;;
    --config.names)
        # The *.yaml names in the --config.dir given before, comma-separated.
        for ((i = 1; i < ${#COMP_WORDS[@]}; i++)); do
            case ${COMP_WORDS[i]} in
            --config.dir=?*) dir=${COMP_WORDS[i]#*=} ;;
            --config.dir)
                if [[ ${COMP_WORDS[i + 1]-} == = ]]; then
                    dir=${COMP_WORDS[i + 2]-}
                else
                    dir=${COMP_WORDS[i + 1]-}
                fi ;;
            esac
        done
        [[ $dir ]] || return
        # shellcheck disable=SC2088 # a literal ~/ as typed
        [[ $dir == "~/"* ]] && dir=$HOME/${dir#"~/"}
        names=()
        for d in "$dir"/*.yaml; do
            [[ -e $d ]] && d=${d##*/} && names+=("${d%.yaml}")
        done
        local done_part=
        [[ $cur == *,* ]] && done_part=${cur%,*},
        cur=${cur##*,}
        _iolat_words "$prefix$done_part" "${names[@]}"
        compopt -o nospace 2>/dev/null ;;
    esac
}

_iolat()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev='' cmd='' bin=${COMP_WORDS[0]} i opt='' prefix=''
    local -a _iolat_flags _iolat_valued
    COMPREPLY=()
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    # shellcheck disable=SC2088 # a literal ~/ as typed
    [[ $bin == "~/"* ]] && bin=$HOME/${bin#"~/"}
    type -P "$bin" >/dev/null 2>&1 || bin=iolat

    # The command: the first word after the program that is not a flag.
    for ((i = 1; i < COMP_CWORD; i++)); do
        if [[ ${COMP_WORDS[i]} != -* ]]; then
            cmd=${COMP_WORDS[i]}
            break
        fi
    done
    if [[ ! $cmd ]]; then
        if [[ $cur == -* ]]; then
            _iolat_read_flags "$bin" ""
            mapfile -t COMPREPLY < <(compgen -W "${_iolat_flags[*]}" -- "$cur")
        else
            mapfile -t COMPREPLY < <(compgen -W "$(_iolat_commands "$bin")" -- "$cur")
        fi
        return 0
    fi
    # `iolat help COMMAND`: one command's name, nothing after it.
    if [[ $cmd == help ]]; then
        ((COMP_CWORD == i + 1)) &&
            mapfile -t COMPREPLY < <(compgen -W "$(_iolat_commands "$bin")" -- "$cur")
        return 0
    fi

    _iolat_read_flags "$bin" "$cmd"
    # A flag's value: `--flag=value` split at '=' by readline (words
    # --flag, =, value), or not split, or `-d value` / `--disk value`.
    if [[ $cur == = ]]; then
        opt=$prev cur=
    elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
        opt=${COMP_WORDS[COMP_CWORD - 2]}
    elif [[ $cur == --*=* ]]; then
        opt=${cur%%=*} prefix=${cur%%=*}= cur=${cur#*=}
    elif [[ $prev == -* && " ${_iolat_valued[*]} " == *" $prev "* ]]; then
        opt=$prev
    fi
    if [[ $opt ]]; then
        _iolat_values "$opt" "$prefix"
        return 0
    fi

    if [[ ! $cur || $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "${_iolat_flags[*]}" -- "$cur")
        [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
    fi
    return 0
} &&
    complete -F _iolat iolat
