#!/usr/bin/env bash
# `cmake --install` into a scratch prefix (docs/install.md): every file where GNUInstallDirs puts
# it, the installed program runs and names its commit, the installed man page and bash completion
# work from there, and an installed example still finds its schema.
#   usage: install_test.sh BUILD_DIR
set -u
build=$1
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
failed=0
fail() { echo "FAIL $*"; failed=1; }
cmake --install "$build" --prefix "$prefix" >/dev/null || { echo "FAIL cmake --install"; exit 1; }
doc=$prefix/share/doc/streamlab

for f in bin/streamlab share/man/man1/streamlab.1 share/bash-completion/completions/streamlab \
         share/zsh/site-functions/_streamlab; do
  [[ -s $prefix/$f ]] || fail "not installed: $f"
done
for f in README.md docs/cli.md docs/install.md schemas/experiment.schema.json experiments/labs/overlap/solution.yaml; do
  [[ -s $doc/$f ]] || fail "not installed: share/doc/streamlab/$f"
done
"$prefix/bin/streamlab" --version | grep -q '^streamlab .* (commit ' || fail "installed --version: $("$prefix/bin/streamlab" --version)"
"$prefix/bin/streamlab" check "$doc/experiments/01_one_transpose.yaml" >/dev/null || fail "installed program: check of an installed example"
# The experiments' `$schema=../schemas/...` resolves in the installed tree.
schema=$(sed -nE 's/.*\$schema=([^ ]+).*/\1/p' "$doc/experiments/01_one_transpose.yaml" | head -1)
[[ -n $schema && -s $doc/experiments/$schema ]] || fail "an installed example's schema '$schema' is not beside it"
MANWIDTH=80 man -l "$prefix/share/man/man1/streamlab.1" 2>/dev/null | grep -q 'streamlab grade SUBMISSION' ||
  fail "the installed man page does not describe grade"
got=$(bash -c 'source "$0"; COMP_WORDS=(streamlab check --format ""); COMP_CWORD=3; _streamlab; echo "${COMPREPLY[*]}"' \
      "$prefix/share/bash-completion/completions/streamlab")
[[ $got == "text json" ]] || fail "installed bash completion: 'streamlab check --format <TAB>' gave '$got'"
((failed)) || echo "install: passed"
exit $failed
