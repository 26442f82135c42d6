#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang-14, ASan and UBSan in their own build
# directory, and runs each one for a bounded time on a copy of its seed corpus.
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     default: 60 s, every target
# Environment: PMC_FUZZ_BUILD_DIR (default build-fuzz), PMC_FUZZ_JOBS (parallel fuzzing
# processes per target, default 1). Findings (crash-*, leak-*, timeout-*, oom-* inputs) are
# written to <build>/fuzz-findings/<target>/; the script exits 1 when a target found one.
# The corpus a run grows is kept in <build>/fuzz-corpus/<target>/ (the seeds in the repository
# stay as they are). Each target's executions and new coverage are printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
((${#targets[@]})) || targets=(event_string events_toml config_toml workload_toml cpuid_dump workload_reader catalog_cache)
build="${PMC_FUZZ_BUILD_DIR:-build-fuzz}"
jobs="${PMC_FUZZ_JOBS:-1}"

source scripts/packages.sh
ensure_packages clang-14 libclang-rt-14-dev
use_ccache
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_C_COMPILER=clang-14 \
  -DPMC_FUZZ=ON -DPMC_BUILD_TESTS=OFF -DPMC_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target fuzz
build="$(cd "$build" && pwd)"  # absolute: the fuzzers run inside it

status=0
summary=()
for t in "${targets[@]}"; do
  exe="$build/bin/fuzz_$t"
  corpus="$build/fuzz-corpus/$t"
  findings="$build/fuzz-findings/$t"
  mkdir -p "$corpus" "$findings"
  # The seeds: the repository's own files of that kind, and fuzz/corpus/<target>/ for what the
  # repository has no file of (event strings, configs).
  case "$t" in
    events_toml) seeds=(backends/*/*.toml backends/amd/events/*.toml tests/plugins/*.toml) ;;
    cpuid_dump) seeds=(data/cpuid/*.txt tests/data/cpuid/*) ;;
    workload_toml) seeds=(examples/workloads/*.toml tests/data/workloads/*.toml) ;;
    workload_reader) seeds=(examples/workloads/*.toml tests/data/workloads/*.toml) ;;
    # catalog_cache: fuzz/corpus/catalog_cache/ alone (sections of bundled catalogs' cache files).
    *) seeds=() ;;
  esac
  [[ -d fuzz/corpus/"$t" ]] && seeds+=(fuzz/corpus/"$t"/*)
  for f in "${seeds[@]}"; do
    [[ -f "$f" ]] && cp -n "$f" "$corpus/$(echo "$f" | tr '/' '_')"
  done
  log="$build/fuzz-$t.log"
  echo "fuzz.sh: $t for ${seconds}s" >&2
  # -max_len: the largest seed (AMD's events files are ~70 KB) plus room to grow.
  # In the build directory: libFuzzer's workers write their fuzz-N.log files where it runs.
  set +e
  (cd "$build" && "$exe" "$corpus" -max_total_time="$seconds" -max_len=131072 -timeout=25 -rss_limit_mb=4096 \
    -jobs="$jobs" -workers="$jobs" -artifact_prefix="$findings/" -print_final_stats=1 >"$log" 2>&1)
  rc=$?
  set -e
  rm -f "$build"/fuzz-[0-9]*.log  # libFuzzer copied each worker's log into its own output
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{s += $2} END {print s + 0}')
  found=$(find "$findings" -type f | wc -l)
  summary+=("$t: ${seconds}s, $runs executions, corpus $(ls "$corpus" | wc -l) inputs, $found finding(s)")
  if ((rc != 0 || found != 0)); then
    status=1
    echo "fuzz.sh: $t found something (exit $rc); see $log and $findings" >&2
    grep -m5 -E 'ERROR|SUMMARY|runtime error|deadly signal' "$log" >&2 || true
  fi
done
printf '%s\n' "${summary[@]}"
exit "$status"
