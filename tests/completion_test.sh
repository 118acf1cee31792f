#!/usr/bin/env bash
# The generated shell completions and man page (runner/cli/completion.cpp): the bash script sourced
# in bash and asked as a shell asks it (COMP_WORDS, COMP_CWORD -> COMPREPLY), every option that
# --help lists offered by it and described by the man page, which groff reads without a warning;
# the zsh script parsed by zsh where zsh is installed.
#   usage: completion_test.sh STREAMLAB BASH_COMPLETION ZSH_COMPLETION MAN_PAGE
set -u
bin=$1 bash_script=$2 zsh_script=$3 man_page=$4
passed=0 failed=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# complete EXPECTED WORD...: what _streamlab offers for the command line WORD... (the last word is
# the one being completed), sorted, must be EXPECTED.
complete_words() {
  local expected=$1
  shift
  local got
  got=$(cd "$work/files" && bash -c 'source "$0"; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        _streamlab; printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' "$bash_script" "$@")
  if [[ "$got" == "$expected " || ( -z $expected && -z $got ) ]]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL completing '$*': got '$got', expected '$expected'"
  fi
}

mkdir -p "$work/files/labs"
touch "$work/files/exp.yaml" "$work/files/notes.txt"
complete_words "run" streamlab r
complete_words "calibrate check compare" streamlab c               # not the hidden `completion`
complete_words "auto cuda host" streamlab run --backend ''
complete_words "auto cupti events none" streamlab run exp.yaml --timer ''
complete_words "json text" streamlab check --format ''
complete_words "--repeat" streamlab run exp.yaml --rep
complete_words "exp.yaml labs" streamlab run ''              # experiments and folders, not notes.txt
complete_words "exp.yaml labs notes.txt" streamlab run exp.yaml --json ''  # a report: any file or folder
complete_words "" streamlab run exp.yaml --repeat ''         # a number: nothing to offer

# Every option --help lists, for every subcommand, is offered after `-` and is in the man page.
man_text=$(MANWIDTH=200 man -l "$man_page" 2>/dev/null || groff -man -Tutf8 "$man_page")
for command in $("$bin" --help | awk '/^Subcommands:/ {on = 1; next} on && NF {print $1}'); do
  offered=" $(cd "$work/files" && bash -c 'source "$0"; COMP_WORDS=(streamlab "$1" -); COMP_CWORD=2; _streamlab; echo "${COMPREPLY[*]}"' "$bash_script" "$command") "
  grep -qF "streamlab $command" <<<"$man_text" || { failed=$((failed + 1)); echo "FAIL man page: no section for $command"; }
  for option in $("$bin" "$command" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
    if [[ $offered != *" $option "* ]]; then
      failed=$((failed + 1)); echo "FAIL bash: streamlab $command $option is not offered"
    elif ! grep -qF -- "$option" <<<"$man_text"; then
      failed=$((failed + 1)); echo "FAIL man page: streamlab $command $option is not described"
    else
      passed=$((passed + 1))
    fi
  done
done

# groff's own check of the page: no warning at all (-ww), nothing printed (-z).
if command -v groff >/dev/null; then
  warnings=$(groff -man -Tutf8 -ww -z "$man_page" 2>&1)
  if [[ -z $warnings ]]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL groff: $warnings"; fi
else
  echo "completion: groff not installed: the man page's roff not checked"
fi

if command -v zsh >/dev/null; then
  if zsh -n "$zsh_script"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL zsh -n $zsh_script"; fi
else
  echo "completion: zsh not installed (Debian: zsh): the zsh script not checked"
fi

echo "completion: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
