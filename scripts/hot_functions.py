#!/usr/bin/env python3
"""The functions of libpmchal a cold start runs, for the linker to place side by side.

In a freshly started (or forked) process every 64 KiB of code first run is a page fault; the
functions a Hal::open runs were spread over a dozen such windows of libpmchal's 1.6 MB of code.
hal/CMakeLists.txt has lld lay out the functions hal/hot-functions.txt names first, in its order
(docs/performance.md, "Code layout"). This script writes that file from what callgrind sees:

  1. the functions run inside Hal::open when the probe record is kept (`pmc probe`, twice: the
     first run writes the record into a temporary cache directory);
  2. then the other functions `pmc stat -- true` runs (the CLI's cold path as a user meets it);
  3. then those of a first encoding (`pmc encode cycles`: the backend loaded at its first use,
     its catalog restored from the parse cache and the event found).

  scripts/hot_functions.py [BUILD]            rewrite hal/hot-functions.txt from BUILD (./build)
  scripts/hot_functions.py [BUILD] --check    say how much of what Hal::open runs the file names;
                                              exit 1 below 90% (the file is out of date)

Needs valgrind (scripts/build.sh installs it).
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIST = os.path.join(ROOT, "hal", "hot-functions.txt")
HEADER = """\
# The functions of libpmchal a cold start runs (mangled names), in the order lld lays them out
# (hal/CMakeLists.txt; docs/performance.md, "Code layout"). Written by scripts/hot_functions.py:
# first what Hal::open runs when the probe record is kept, then the rest of `pmc stat -- true` and
# of a first `pmc encode cycles`.
# A name that no longer exists costs nothing; a function missing here only loses its place.
"""


def executed(build, args, toggle, env):
    """libpmchal's functions callgrind saw run (inside `toggle` when given), most costly first."""
    with tempfile.NamedTemporaryFile(suffix=".cg") as out:
        cmd = ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out.name}"]
        if toggle:
            cmd.append(f"--toggle-collect={toggle}")
        subprocess.run(cmd + [os.path.join(build, "bin", "pmc")] + args, env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        text = subprocess.run(["callgrind_annotate", "--threshold=100", out.name], check=True,
                              capture_output=True, text=True).stdout
    names = []
    for line in text.splitlines():
        if "libpmchal" not in line:
            continue
        m = re.match(r"^\s*[\d,]+\s+\([^)]*\)\s+(?:[^:\s]*:)?(\S+)\s+\[", line)
        if m and m.group(1) not in names:
            names.append(m.group(1))
    return names


def measure(build):
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, PMC_CACHE_DIR=cache)
        executed(build, ["probe"], None, env)  # writes the probe record
        opening = executed(build, ["probe"], "_ZN3pmc3Hal4open*", env)
        stat = executed(build, ["stat", "--", "true"], None, env)
        executed(build, ["encode", "cycles"], None, env)  # writes the catalog's cache file
        encode = executed(build, ["encode", "cycles"], None, env)
    rest = []
    for n in stat + encode:
        if n not in opening and n not in rest:
            rest.append(n)
    return opening, rest


def main():
    args = [a for a in sys.argv[1:] if a != "--check"]
    build = args[0] if args else os.path.join(ROOT, "build")
    opening, rest = measure(build)
    if "--check" in sys.argv:
        with open(LIST) as f:
            listed = {l.strip() for l in f if l.strip() and not l.startswith("#")}
        covered = sum(1 for n in opening if n in listed)
        share = covered / len(opening) if opening else 1.0
        print(f"hal/hot-functions.txt names {covered} of the {len(opening)} functions of libpmchal "
              f"a kept Hal::open runs ({100 * share:.0f}%)")
        if share < 0.9:
            print("out of date: run scripts/hot_functions.py", file=sys.stderr)
            return 1
        return 0
    with open(LIST, "w") as f:
        f.write(HEADER)
        for n in opening + rest:
            f.write(n + "\n")
    print(f"{LIST}: {len(opening)} functions of Hal::open, {len(rest)} more of pmc stat -- true and pmc encode")
    return 0


if __name__ == "__main__":
    sys.exit(main())
