#!/usr/bin/env bash
# The public C++ headers under an older standard (ctest cxx20_guard): a one-line translation unit
# including any of them (<pmc/pmc.hpp>, <pmc/session.hpp>, <pmc/sdk/backend.hpp>, ...) with
# -std=c++17 fails with exactly one error, which names C++20 and <pmc/pmc.h>; with -std=c++20 the
# umbrella header compiles.
#   tests/scripts/cxx20_guard.sh INCLUDE_DIR CXX
set -uo pipefail
include="$1"
cxx="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

failed=0
mapfile -t headers < <(cd "$include" && ls pmc/*.hpp pmc/sdk/*.hpp)
if ((${#headers[@]} < 20)); then
  echo "cxx20_guard.sh: only ${#headers[@]} headers under $include/pmc" >&2
  exit 1
fi
for h in "${headers[@]}"; do
  echo "#include <$h>" > "$work/tu.cpp"
  out="$("$cxx" -std=c++17 -fsyntax-only -I"$include" "$work/tu.cpp" 2>&1)"
  rc=$?
  errors="$(grep -c 'error:' <<<"$out")"
  if ((rc == 0)); then
    echo "FAILED: <$h> compiles under -std=c++17" >&2
    failed=1
  elif ((errors != 1)); then
    echo "FAILED: <$h> under -std=c++17 gives $errors errors, not one:" >&2
    head -20 <<<"$out" >&2
    failed=1
  elif ! grep 'error:' <<<"$out" | grep -q "<$h> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h>"; then
    echo "FAILED: <$h> under -std=c++17 does not name C++20 and <pmc/pmc.h>:" >&2
    printf '%s\n' "$out" >&2
    failed=1
  fi
done
echo '#include <pmc/pmc.hpp>' > "$work/tu.cpp"
if ! out="$("$cxx" -std=c++20 -fsyntax-only -I"$include" "$work/tu.cpp" 2>&1)"; then
  echo "FAILED: <pmc/pmc.hpp> does not compile under -std=c++20:" >&2
  head -20 <<<"$out" >&2
  failed=1
fi
# The C API stays usable from C++17.
echo '#include <pmc/pmc.h>' > "$work/tu.cpp"
if ! out="$("$cxx" -std=c++17 -fsyntax-only -I"$include" "$work/tu.cpp" 2>&1)"; then
  echo "FAILED: <pmc/pmc.h> does not compile under -std=c++17:" >&2
  head -20 <<<"$out" >&2
  failed=1
fi
((failed)) || echo "ok: ${#headers[@]} headers give one error under -std=c++17"
exit "$failed"
