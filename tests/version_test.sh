#!/usr/bin/env bash
# cmake/version.cmake, which writes the commit into the build: the commit of the tree it is given,
# "unknown" where that tree is no git checkout (a source tarball), and the file left alone (so
# nothing recompiles) when the value did not change.   usage: version_test.sh SOURCE_DIR STREAMLAB
set -u
src=$1 bin=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "FAIL $*"; failed=1; }
generate() { cmake -DSOURCE_DIR="$1" -DOUTPUT="$2" -DVERSION=9.8.7 -P "$src/cmake/version.cmake"; }

# A tarball: the sources without .git, outside any repository.
mkdir -p "$work/tarball/runner/core"
cp "$src/runner/core/version.cpp.in" "$work/tarball/runner/core/"
generate "$work/tarball" "$work/tarball.cpp"
grep -q 'return "unknown";' "$work/tarball.cpp" || fail "tarball: $(grep commit "$work/tarball.cpp")"

if git -C "$src" rev-parse --show-toplevel >/dev/null 2>&1; then
  head=$(git -C "$src" log -1 --format=%h --abbrev=8)
  generate "$src" "$work/tree.cpp"
  grep -Eq "return \"$head(-dirty)?\";" "$work/tree.cpp" || fail "tree: $(grep 'commit()' "$work/tree.cpp") is not $head"
  # The program in the build names the same commit.
  "$bin" --version | grep -Eq "\(commit $head(-dirty)?, " || fail "--version: $("$bin" --version), HEAD is $head"
  touch -d '2000-01-01' "$work/tree.cpp"
  generate "$src" "$work/tree.cpp"
  [[ $(stat -c %Y "$work/tree.cpp") -eq $(date -d 2000-01-01 +%s) ]] || fail "rewritten though unchanged"
else
  echo "version test: $src is no git checkout: only the tarball case runs"
fi
((failed)) || echo "version test: passed"
exit $failed
