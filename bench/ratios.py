#!/usr/bin/env python3
"""Runs pmc_bench and prints each HAL operation's time as a ratio of its raw alternative.

usage: bench/ratios.py [build/bench/pmc_bench]
"""
import json
import subprocess
import sys

exe = sys.argv[1] if len(sys.argv) > 1 else "build/bin/pmc_bench"
out = subprocess.run([exe, "--benchmark_format=json", "--benchmark_repetitions=5",
                      "--benchmark_report_aggregates_only=true"],
                     check=True, capture_output=True, text=True).stdout
ns = {}
for b in json.loads(out)["benchmarks"]:
    if b.get("aggregate_name") == "median":
        ns[b["run_name"]] = b["cpu_time"] if b["time_unit"] == "ns" else b["cpu_time"] * 1000
pairs = [("encode_hal", "encode_raw"), ("read_hal", "read_raw"), ("poll_hal", "read_raw"),
         ("profile_hal", "profile_raw")]
for hal, raw in pairs:
    print(f"{hal:<12} {ns[hal]:10.1f} ns   {raw:<12} {ns[raw]:8.1f} ns   ratio {ns[hal] / ns[raw]:8.1f}x")
