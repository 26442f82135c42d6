#!/usr/bin/env bash
# Runs every example of the README's "Using pmc" block (each line that starts with build/bin/)
# against a build tree, as a reader would paste it at the top of a checkout: each must exit 0.
#   tests/scripts/readme_examples.sh SOURCE_DIR BUILD_DIR
# The examples run in a scratch directory where `build` is the build tree, with no config file
# of the user's (PMC_CONFIG empty, HOME and XDG_CONFIG_HOME scratch).
set -uo pipefail
src="$1"
build="$(cd "$2" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
ln -s "$build" "$work/build"
mkdir -p "$work/home"
export PMC_CONFIG="" HOME="$work/home" XDG_CONFIG_HOME="$work/home" PMC_CACHE_DIR="$work/cache"

mapfile -t lines < <(awk '/^## Using pmc/ {on = 1; next} on && /^## / {exit} on && /^build\/bin\// {print}' "$src/README.md")
if ((${#lines[@]} == 0)); then
  echo "readme_examples.sh: no examples found in $src/README.md (section '## Using pmc')" >&2
  exit 1
fi
failed=0
for line in "${lines[@]}"; do
  cmd="$line"  # a trailing "# comment" is bash's to ignore
  out="$(cd "$work" && timeout 120 bash -c "$cmd" 2>&1 >/dev/null)"
  rc=$?
  if ((rc != 0)); then
    echo "FAILED (exit $rc): $cmd" >&2
    printf '%s\n' "$out" | tail -5 >&2
    failed=1
  else
    echo "ok: $cmd"
  fi
done
exit "$failed"
