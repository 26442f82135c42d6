#!/usr/bin/env bash
# The Python package from an install (ctest python_install): `cmake --install BUILD --prefix TMP`,
# then the README's line (the one with PYTHONPATH=...dist-packages), its /opt/pmchal replaced by
# TMP, run from a scratch directory: it must exit 0 and print the counts it asks for. The package
# must load the installed libpmchal, not the build tree's, and keep working after the installed
# tree is moved.
#   tests/scripts/python_install.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
src="$1"
build="$(cd "$2" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/cwd"
unset PYTHONPATH PMC_LIBRARY
export PMC_CONFIG="" HOME="$work/home" XDG_CONFIG_HOME="$work/home" PMC_CACHE_DIR="$work/cache" PYTHONDONTWRITEBYTECODE=1

fail() { echo "FAILED: $*" >&2; exit 1; }

# The README's line: the inline command that sets PYTHONPATH to an install's dist-packages.
line="$(grep -o '`PYTHONPATH=/opt/pmchal/lib/python3/dist-packages python3 [^`]*`' "$src/README.md" | head -1)"
[[ -n "$line" ]] || fail "no \`PYTHONPATH=/opt/pmchal/lib/python3/dist-packages python3 ...\` line in $src/README.md"
cmd="${line//\`/}"

prefix="$work/pmchal"
if ! out="$(cmake --install "$build" --prefix "$prefix" 2>&1)"; then
  printf '%s\n' "$out" | tail -5 >&2
  fail "cmake --install $build --prefix $prefix"
fi
[[ -f "$prefix/lib/python3/dist-packages/pmchal/__init__.py" ]] || fail "no pmchal package in $prefix/lib/python3/dist-packages"

run_readme_line() {
  local p="$1"
  local c="${cmd//\/opt\/pmchal/$p}"
  echo "running: $c"
  out="$(cd "$work/cwd" && timeout 60 bash -c "$c" 2>&1)" || fail "exit $?: $c"$'\n'"$out"
  echo "$out"
  # It prints the counts it read: a dict with task-clock's nanoseconds.
  grep -Eq "'task-clock': [1-9][0-9]*" <<<"$out" || fail "no task-clock count in the output of: $c"
}
run_readme_line "$prefix"

where="$(cd "$work/cwd" && PYTHONPATH="$prefix/lib/python3/dist-packages" python3 -c 'import pmchal; print(pmchal.library_path())')" ||
  fail "import pmchal from $prefix"
[[ "$where" == "$prefix/lib/"libpmchal.so.* ]] || fail "the installed package loaded $where, not the library in $prefix/lib"

# Relocated: the package finds the library relative to itself.
mv "$prefix" "$work/moved"
run_readme_line "$work/moved"
echo "ok: the README's Python line works from an install, also after moving it"
