#!/bin/zsh -f
# SPDX-License-Identifier: GPL-2.0-or-later
# What zsh completes for command lines, through a real interactive zsh in a
# pseudo-terminal (zpty), as if Tab were pressed at the end of each line:
#   zsh -f tests/zsh_complete.zsh FPATH-DIR COMPDUMP LINE...
# Prints "== LINE", then "HIT:word" for each match. compadd is wrapped to
# print the matches, and a marker printed after each completion ends the
# read, so no timing is involved. Used by tests/test_packaging.c.
if [[ $1 == --inner ]]; then
  # The interactive side: completion as a user has it, plus the wrappers.
  PS1='' RPS1=''
  fpath=($2 $fpath)
  autoload -Uz compinit && compinit -u -d $3
  compadd() {
    # -O/-A/-D only compute matches for the caller: not shown to the user
    if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then
      builtin compadd "$@"
      return
    fi
    local -a hits
    builtin compadd -A hits "$@"
    (( $#hits )) || return 1
    print -rl -- '' ${hits/#/HIT:}
    builtin compadd "$@"
  }
  _tc_done() { print -r -- $'\nEND-OF-COMPLETION' }
  _tc_complete() {
    comppostfuncs=(_tc_done)
    _main_complete
  }
  zle -C tc-complete list-choices _tc_complete
  bindkey '^I' tc-complete
  return 0
fi
zmodload zsh/zpty || exit 1
dir=$1 dump=$2
shift 2
zpty z zsh -f -i || exit 1
zpty -w z "source ${(q)0:A} --inner ${(q)dir} ${(q)dump}; print READY\$((1))"
zpty -r z out '*READY1*' || exit 1
for line in "$@"; do
  zpty -w -n z "$line"$'\t'
  zpty -r z out '*END-OF-COMPLETION*' || exit 1
  print -r -- "== $line"
  print -r -- "${(@M)${(f)out//$'\r'/}:#HIT:*}"
  zpty -w -n z $'\x15' # ^U: an empty line for the next one
done
zpty -d z
