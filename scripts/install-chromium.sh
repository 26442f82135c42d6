#!/usr/bin/env bash
# Installs what the flame-graph browser test (tests/cli/test_profile_pictures.cpp,
# flame_graph_in_a_browser) needs and a fresh Debian 12 machine lacks: Debian's `chromium`, run
# headless to open the SVG pmc profile --flamegraph writes. Without it that test reports itself
# skipped. Chromium is large (about 300 MB installed), so scripts/build.sh does not install it.
#   scripts/install-chromium.sh        apt-get it when missing (root, or sudo)
set -euo pipefail
source "$(dirname "$0")/packages.sh"
ensure_packages chromium
