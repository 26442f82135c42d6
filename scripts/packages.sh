# Sourced by the scripts: ensure_packages PKG... installs the Debian packages that are missing
# (apt-get, as root or through sudo) and does nothing when all are installed.
ensure_packages() {
  local missing=() p sudo=""
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "$(basename "$0"): installing ${missing[*]}" >&2
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -q
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# use_ccache: when ccache is installed (it is optional: `apt-get install ccache`), the build
# directories the scripts configure compile through it, with paths taken relative to this clone
# and the working directory left out of the key, so a rebuild of unchanged sources, in this clone
# or another one on the same machine, comes from the cache. PMC_CCACHE=0 turns it off; a
# launcher already set in the environment is kept. It applies when a build directory is
# configured for the first time.
use_ccache() {
  [[ "${PMC_CCACHE:-1}" != 0 ]] && command -v ccache >/dev/null || return 0
  export CMAKE_C_COMPILER_LAUNCHER="${CMAKE_C_COMPILER_LAUNCHER:-ccache}"
  export CMAKE_CXX_COMPILER_LAUNCHER="${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}"
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
}
