#!/usr/bin/env bash
# CI: the whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer, then the tests
# of sessions, plugin loading and concurrency under ThreadSanitizer. Clang 14, each in its own
# build directory (build-asan, build-tsan; or $PMC_ASAN_BUILD_DIR, $PMC_TSAN_BUILD_DIR). Any
# sanitizer report fails the run (-fno-sanitize-recover=all, halt_on_error).
#   scripts/ci-sanitizers.sh            both
#   scripts/ci-sanitizers.sh asan|tsan  one of them
# Installs clang-14 and libclang-rt-14-dev (the sanitizer runtimes) when missing. PMC_WERROR=ON
# makes warnings errors (CI: this is also the Clang 14 warnings build).
set -euo pipefail
cd "$(dirname "$0")/.."
which="${1:-all}"
jobs="$(nproc)"
source scripts/packages.sh
ensure_packages clang-14 libclang-rt-14-dev
use_ccache

# configure DIR SANITIZERS: a clang build of everything with those sanitizers. The runtimes are
# linked into executables only; the plugins' and libpmchal's references to them resolve when
# they are loaded, which libpmchal's --no-undefined would refuse: -z undefs, last on the link
# line (CMAKE_CXX_STANDARD_LIBRARIES), lifts it. PMC_SANITIZED links the C programs with the C++
# driver and skips (with the reason) the tests that run code built outside the tree, which is
# not instrumented. -O1 keeps the instrumented tests quick to build.
# The benchmarks are built too (not run): with PMC_WERROR=ON this is the whole tree under Clang.
configure() {
  local dir="$1" flags="-fsanitize=$2 -fno-sanitize-recover=all -fno-omit-frame-pointer"
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_C_COMPILER=clang-14 \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=$2" \
    -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=$2" -DCMAKE_MODULE_LINKER_FLAGS="-fsanitize=$2" \
    "-DCMAKE_CXX_STANDARD_LIBRARIES=-Wl,-z,undefs" -DPMC_SANITIZED=ON -DPMC_BUILD_BENCH=ON -DPMC_WERROR="${PMC_WERROR:-OFF}" >/dev/null
}

# The options reach every process the tests start (pmc, the commands it runs) through the
# environment; a test that gives its child a clean environment passes them on too
# (tests/support/child_process.hpp). The tests link the core statically and the plugins
# they load link libpmchal.so, so the core's globals exist twice by design (the plugins bind to
# the test's copy): ODR checking at level 1 reports only globals whose sizes differ.
export ASAN_OPTIONS="${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:detect_odr_violation=1:strict_string_checks=1:check_initialization_order=1:detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}"

if [[ "$which" == all || "$which" == asan ]]; then
  dir="${PMC_ASAN_BUILD_DIR:-build-asan}"
  echo "ci-sanitizers.sh: ASan + UBSan build in $dir" >&2
  configure "$dir" address,undefined
  cmake --build "$dir" -j"$jobs"
  ctest --test-dir "$dir" --output-on-failure -j"$jobs"
fi
if [[ "$which" == all || "$which" == tsan ]]; then
  dir="${PMC_TSAN_BUILD_DIR:-build-tsan}"
  echo "ci-sanitizers.sh: TSan build in $dir" >&2
  configure "$dir" thread
  tests=(test_concurrency test_plugins test_plugins_hostile test_p6_session)
  cmake --build "$dir" -j"$jobs" --target "${tests[@]}"
  ctest --test-dir "$dir" --output-on-failure -R "^($(IFS='|'; echo "${tests[*]}"))\$"
fi
