# SPDX-License-Identifier: GPL-2.0-or-later
# bash completion for tracecorn(1)                         -*- shell-script -*-
# Installed as bash-completion/completions/tracecorn; also works when
# sourced on its own. Format names come from `tracecorn formats` at
# completion time. tests/test_packaging.c checks the option lists below
# against `tracecorn CMD --help` (both ways).

_tracecorn_cmds="record dump strace convert verify materialize info index gdbserver formats"
_tracecorn_opts_record="-o --output -f --format --force -z --zst -q --quiet --seed -E
  --env --inherit-env --root --cwd --host-stat --raw --arch --base --entry
  --max-insns --max-memory --max-procs --no-memory --exact --trace-range --trace-func
  -O --writer-option --ucir-layout --cache-every --keyframe --sched-quantum --no-follow
  --tty -j --jobs --log-only -h --help"
# verify takes every record option (its -f/-o mean the same) and --report.
_tracecorn_opts_verify="-o --output -f --format --force -z --zst -q --quiet --seed -E
  --env --inherit-env --root --cwd --host-stat --raw --arch --base --entry
  --max-insns --max-memory --max-procs --no-memory --exact --trace-range --trace-func
  -O --writer-option --ucir-layout --cache-every --keyframe --sched-quantum --no-follow --report
  --tty -j --jobs --log-only -h --help"
# dump and strace share the selection options (--range to -e).
_tracecorn_opts_dump="-j --json -f --format -v --verbose --color --symbols --demangle --root
  --range --pc --mem --reads --writes --reg --from --to --skip --count --last
  --syscalls-only --syscall -e -h --help --no-index"
_tracecorn_opts_strace="-s -f --follow-forks --format --root --range --pc --mem --reads --writes --reg
  --from --to --skip --count --last --syscalls-only --syscall -e -h --help --no-index"
_tracecorn_opts_convert="-F --from -t --to -O --writer-option --force --strict -q --quiet -h
  --help --from-insn --to-insn --range --pc --mem --reads --writes --reg --skip
  --count --last --syscalls-only --syscall -e --no-index"
_tracecorn_opts_materialize="-f --format -o --output -j --jobs -q --quiet --force -h --help"
_tracecorn_opts_info="--no-index -h --help"
_tracecorn_opts_index="-h --help"
_tracecorn_opts_gdbserver="--stdio --listen --interval --index --no-index --stats -q --quiet -h --help"
_tracecorn_opts_formats=""
_tracecorn_arches="x86_64 x86 arm arm64 mips mipsel mips64el sparc64"

# The names of the formats that can be written ($2 = write) or read
# ($2 = read), from the tracecorn being completed ($1).
_tracecorn_formats() {
  local col=2
  [[ $2 == read ]] && col=3
  "$1" formats 2>/dev/null |
    awk -v c="$col" 'NR > 1 && $c == "yes" { print $1 }'
}

# Completes the comma-separated format list in $cur from the words in $1.
_tracecorn_complete_list() {
  local done="" part=$cur
  if [[ $cur == *,* ]]; then
    done=${cur%,*},
    part=${cur##*,}
  fi
  COMPREPLY=($(compgen -P "$done" -W "$1" -- "$part"))
  compopt -o nospace 2>/dev/null
}

_tracecorn() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  local prog=${COMP_WORDS[0]} cmd=${COMP_WORDS[1]} i
  COMPREPLY=()
  type -P -- "$prog" >/dev/null 2>&1 || prog=tracecorn
  if ((COMP_CWORD == 1)); then
    COMPREPLY=($(compgen -W "$_tracecorn_cmds --help --version" -- "$cur"))
    return
  fi
  # --opt=value: '=' is a word of its own in COMP_WORDS.
  if [[ $cur == = ]]; then
    cur=""
  elif [[ $prev == = ]] && ((COMP_CWORD >= 3)); then
    prev=${COMP_WORDS[COMP_CWORD - 2]}
  fi
  # Past `--` is the guest's command line: files.
  for ((i = 2; i < COMP_CWORD; i++)); do
    [[ ${COMP_WORDS[i]} == -- ]] && return
  done

  case "$cmd:$prev" in
  record:-f | record:--format | materialize:-f | materialize:--format)
    _tracecorn_complete_list "$(_tracecorn_formats "$prog" write) all readable"
    return
    ;;
  verify:-f | verify:--format)
    _tracecorn_complete_list "$(_tracecorn_formats "$prog" read) all readable"
    return
    ;;
  dump:-f | dump:--format | strace:--format | convert:-F | \
    convert:--from)
    COMPREPLY=($(compgen -W "$(_tracecorn_formats "$prog" read)" -- "$cur"))
    return
    ;;
  convert:-t | convert:--to)
    COMPREPLY=($(compgen -W "$(_tracecorn_formats "$prog" write)" -- "$cur"))
    return
    ;;
  *:--arch)
    COMPREPLY=($(compgen -W "$_tracecorn_arches" -- "$cur"))
    return
    ;;
  *:--ucir-layout)
    COMPREPLY=($(compgen -W "usercorn spec" -- "$cur"))
    return
    ;;
  dump:--color)
    COMPREPLY=($(compgen -W "auto always never" -- "$cur"))
    return
    ;;
  dump:-e | strace:-e)
    COMPREPLY=($(compgen -W "trace=" -- "$cur"))
    [[ ${COMPREPLY[0]} == trace= ]] && compopt -o nospace 2>/dev/null
    return
    ;;
  *:--root | *:--cwd)
    COMPREPLY=($(compgen -d -- "$cur"))
    return
    ;;
  *:--seed | *:-E | *:--env | *:--base | *:--entry | *:--max-insns | \
    *:--max-memory | *:--max-procs | *:-O | *:--writer-option | *:--cache-every | \
    *:--keyframe | *:--sched-quantum | *:--trace-range | *:--trace-func | dump:--from | \
    strace:--from | *:--range | *:--pc | *:--skip | *:--count | \
    *:--syscall | strace:-s | gdbserver:--listen | gdbserver:--interval | \
    record:-j | verify:-j | materialize:-j | *:--jobs)
    # A value of the user's own: no file names.
    compopt +o default +o bashdefault 2>/dev/null
    return
    ;;
  esac

  if [[ $cur == -* ]]; then
    local var=_tracecorn_opts_${cmd//-/_}
    [[ $cmd =~ ^[a-z]+$ ]] && COMPREPLY=($(compgen -W "${!var}" -- "$cur"))
    return
  fi
  # Anything else: file names (complete -o default), except for formats.
  [[ $cmd == formats ]] && compopt +o default +o bashdefault 2>/dev/null
  return 0
}
complete -o bashdefault -o default -F _tracecorn tracecorn
