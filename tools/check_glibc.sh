#!/usr/bin/env bash
# Checks that programs run on glibc 2.34 or newer (Ubuntu 22.04, RHEL 9; docs/install.md): reads
# the symbol versions each one imports (objdump -T) and fails naming every symbol that needs a
# newer glibc, and any libstdc++ the program would need at run time (it is linked in statically).
#   usage: tools/check_glibc.sh PROGRAM...        exit 0 when all pass, 1 otherwise
set -euo pipefail
floor=${STREAMLAB_GLIBC_FLOOR:-2.34}
(($#)) || { echo "usage: tools/check_glibc.sh PROGRAM..." >&2; exit 2; }
command -v objdump >/dev/null || { echo "check_glibc: objdump not found (Debian: binutils)" >&2; exit 2; }

# Whether version $1 is newer than version $2 (dotted numbers).
newer() { [[ $1 != "$2" && $(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -1) == "$1" ]]; }

status=0
for program in "$@"; do
  symbols=$(objdump -T "$program") || { echo "check_glibc: $program: objdump failed" >&2; exit 2; }
  bad=0
  # Lines like "0000000000000000      DF *UND*  0000000000000000 (GLIBC_2.36) arc4random".
  while read -r version symbol; do
    if newer "$version" "$floor"; then
      echo "$program: error: $symbol needs GLIBC_$version (the floor is $floor)"
      bad=1
    fi
  done < <(sed -nE 's/.*[( ]GLIBC_([0-9.]+)\)?[[:space:]]+([^[:space:]]+)$/\1 \2/p' <<<"$symbols")
  if objdump -p "$program" | grep -qE 'NEEDED[[:space:]]+libstdc\+\+'; then
    echo "$program: error: needs libstdc++ at run time (it must be linked in statically)"
    bad=1
  fi
  if ((bad)); then
    status=1
  else
    newest=$(grep -oE 'GLIBC_[0-9.]+' <<<"$symbols" | sort -uV | tail -1)
    echo "$program: ok: newest glibc symbol version ${newest:-none}, floor $floor"
  fi
done
exit $status
