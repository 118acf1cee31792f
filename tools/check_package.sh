#!/usr/bin/env bash
# Builds the Debian package from a build folder and shows that it installs and works: dpkg -i,
# /usr/bin/streamlab --version names the commit the build was made from, `man streamlab` finds the
# page, the completions are where bash-completion and zsh look, the package's Depends hold the
# glibc floor; then dpkg -r. Needs root (dpkg), so it is a script to run and not a ctest; it
# refuses to touch a streamlab package that was installed before it ran.
#   usage: tools/check_package.sh [BUILD_DIR]     (default: build)
set -euo pipefail
build=${1:-build}
[[ $(id -u) -eq 0 ]] || { echo "check_package: needs root (dpkg -i); run it with sudo" >&2; exit 2; }
if dpkg-query -W -f='${Status}' streamlab 2>/dev/null | grep -q "install ok installed"; then
  echo "check_package: a streamlab package is installed already: remove it first (dpkg -r streamlab)" >&2
  exit 2
fi
failed=0
check() {  # check WHAT COMMAND...: runs COMMAND, prints ok or FAIL with WHAT
  local what=$1
  shift
  if "$@"; then echo "ok    $what"; else echo "FAIL  $what"; failed=1; fi
}

(cd "$build" && rm -f streamlab_*.deb && cpack -G DEB >/dev/null)
deb=$(ls "$build"/streamlab_*.deb)
echo "check_package: $deb"
dpkg-deb -f "$deb" Package Version Depends Maintainer
trap 'dpkg -r streamlab >/dev/null' EXIT
dpkg -i "$deb" >/dev/null

commit=$(git -C "$(dirname "$0")/.." log -1 --format=%h --abbrev=8 2>/dev/null || echo unknown)
version=$(/usr/bin/streamlab --version)
echo "check_package: /usr/bin/streamlab --version: $version"
check "--version names the commit $commit" grep -q "commit $commit" <<<"$version"
check "man streamlab finds the page" bash -c 'man -w streamlab | grep -q "^/usr/share/man/man1/streamlab.1" && MANWIDTH=80 man streamlab 2>/dev/null | grep -q "streamlab run EXPERIMENT"'
check "bash completion in place" test -s /usr/share/bash-completion/completions/streamlab
check "zsh completion in place" test -s /usr/share/zsh/site-functions/_streamlab
check "examples and schemas in /usr/share/doc/streamlab" test -s /usr/share/doc/streamlab/experiments/04_two_transposes_pinned_async.yaml -a -s /usr/share/doc/streamlab/schemas/experiment.schema.json
check "the installed program checks an installed example" /usr/bin/streamlab check /usr/share/doc/streamlab/experiments/04_two_transposes_pinned_async.yaml
check "Depends holds libc6 (>= 2.34)" bash -c "dpkg-deb -f '$deb' Depends | grep -q 'libc6 (>= 2.34)'"
check "the installed program passes tools/check_glibc.sh" "$(dirname "$0")/check_glibc.sh" /usr/bin/streamlab

dpkg -r streamlab >/dev/null
trap - EXIT
check "dpkg -r removes the program" test ! -e /usr/bin/streamlab
((failed == 0)) && echo "check_package: passed"
exit $failed
