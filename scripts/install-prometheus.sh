#!/usr/bin/env bash
# Installs what the Prometheus integration test (tests/cli/test_stat_export.cpp) needs and a fresh
# Debian 12 machine lacks: Debian's `prometheus` (the server the test starts on loopback) and
# `curl` (its HTTP query API). Without them that test reports itself skipped.
#   scripts/install-prometheus.sh        apt-get what is missing (root, or sudo)
set -euo pipefail

packages=(prometheus curl)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "install-prometheus.sh: installing ${missing[*]}" >&2
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
$sudo apt-get update -q
# No recommends: the test needs the server binary, not node_exporter or a running service.
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
# The package may start its own service where systemd runs; the test uses its own instance on a
# free loopback port, so a running service does not disturb it.
