#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine (installs the Debian packages pmchal builds with, when
# missing) and builds pmchal into ./build (or $PMC_BUILD_DIR).
#   PMC_CXX=clang++-14 scripts/build.sh     build with Clang instead of GCC
#   PMC_WERROR=ON scripts/build.sh          warnings are errors (CI)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake make g++ libboost1.74-dev libboost-test1.74-dev libtomlplusplus-dev libcli11-dev
          nlohmann-json3-dev libfmt-dev libbenchmark-dev pkgconf python3 python3-pytest libmuparser-dev prometheus-cpp-dev valgrind
          libdw-dev lld
          libpfm4-dev libpapi-dev linux-perf)  # the raw sides of bench/ (optional to the build)
if [[ "${PMC_CXX:-}" == clang* ]]; then packages+=(clang-14 libclang-rt-14-dev); fi  # the sanitizer and libFuzzer runtimes too
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "build.sh: installing ${missing[*]}" >&2
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -q
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi

source scripts/packages.sh
use_ccache
build="${PMC_BUILD_DIR:-build}"
args=(-S . -B "$build" -DCMAKE_BUILD_TYPE="${PMC_BUILD_TYPE:-RelWithDebInfo}" -DPMC_WERROR="${PMC_WERROR:-OFF}")
[[ -n "${PMC_CXX:-}" ]] && args+=(-DCMAKE_CXX_COMPILER="$PMC_CXX")
cmake "${args[@]}" >/dev/null
cmake --build "$build" -j"$(nproc)"
