#!/usr/bin/env python3
"""Checks the source layout rules of docs/design.md; prints one line per breach and exits 1 on any.

  check_layout.py SOURCE_DIR [LIBPMCHAL]

- hal/src is one folder per layer; a file of a layer includes (by quoted name) only headers of
  its own layer and of the layers hal/CMakeLists.txt says it uses (pmc_layer(NAME USES ...)),
  and the layers' use graph has no cycle (the build enforces the same through include paths);
- the public headers (hal/include) include nothing from hal/src;
- hal/src names no backend and no device model (their names come from the backends/ and
  sim/models/ folders, so a new plugin is covered without editing this script);
- no C, C++ or Python source file of the tree (tests, benchmarks and scripts too; not the test
  inputs of tests/data or the fuzz corpora) has more than 500 lines;
- every repository path a source comment, a doc or the README cites (hal/..., docs/..., ...)
  exists;
- with LIBPMCHAL: its dynamic symbol table exports nothing of a `detail` namespace.
"""
import re
import subprocess
import sys
from pathlib import Path

MAX_LINES = 500
SOURCE_SUFFIXES = {".c", ".cc", ".cpp", ".h", ".hpp"}


def layer_uses(cmake_text):
    uses = {}
    for m in re.finditer(r"^pmc_layer\((\w+)([^)]*)\)", cmake_text, re.M):
        args = m.group(2).split()
        deps = []
        if "USES" in args:
            for a in args[args.index("USES") + 1:]:
                if a == "LIBS":
                    break
                deps.append(a)
        uses[m.group(1)] = deps
    return uses


def closure(uses, layer):
    seen, pending = set(), list(uses.get(layer, []))
    while pending:
        d = pending.pop()
        if d not in seen:
            seen.add(d)
            pending.extend(uses.get(d, []))
    return seen


TOP_DIRS = ("hal", "backends", "sim", "tools", "tests", "docs", "data", "scripts", "examples", "bench", "fuzz", "cmake")
CITED = re.compile(r"(?<![\w./-])((?:" + "|".join(TOP_DIRS) + r")/[\w./+-]*[\w+-])")


EXTERNAL = re.compile(r"Linux|KVM|libpfm4|PAPI|perf's|intel/perfmon")
MD_CODE = re.compile(r"`([^`\s]+)`")
MD_LINK = re.compile(r"\]\((?!https?:|#|mailto:)([^)#\s]+)")


def tracked_files(root):
    out = subprocess.run(["git", "-C", str(root), "ls-files", "--cached", "--others", "--exclude-standard"],
                         capture_output=True, text=True)
    if out.returncode != 0:  # not a checkout: every file below the root
        return [p for p in root.rglob("*") if p.is_file() and "build" not in p.relative_to(root).parts[:1]]
    return [root / line for line in out.stdout.splitlines() if line]


def stale_citations(root):
    """Paths cited in comments and docs that name no file or folder of the tree."""
    breaches = []
    for f in tracked_files(root):
        rel = f.relative_to(root)
        if not f.is_file() or rel.parts[0] in ("build",) or "corpus" in rel.parts or rel.parts[:2] == ("tests", "data"):
            continue
        code = f.suffix in SOURCE_SUFFIXES | {".py", ".sh", ".cmake"} or f.name == "CMakeLists.txt"
        if not code and f.suffix != ".md":
            continue
        for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            if f.suffix == ".md":
                # A doc's relative links (other repositories' paths it cites are not links).
                found = [(f.parent / m).resolve().relative_to(root.resolve()).as_posix()
                         for m in MD_LINK.findall(line) if (f.parent / m).resolve().is_relative_to(root.resolve())]
                if not EXTERNAL.search(line):  # a line citing another project's tree names it
                    found += [m for m in MD_CODE.findall(line) if CITED.fullmatch(m)]
            else:
                found = CITED.findall(line)
            for cited in found:
                cited = cited.rstrip(".")
                if any(c in cited for c in "*<>{}$") or cited.endswith(("/", "-")):
                    continue
                if not (root / cited).exists() and not (f.parent / cited).exists():
                    breaches.append(f"{rel}:{n}: cites {cited}, which does not exist")
    return breaches


def main():
    root = Path(sys.argv[1])
    breaches = []
    src = root / "hal" / "src"
    uses = layer_uses((root / "hal" / "CMakeLists.txt").read_text())
    if not uses:
        breaches.append("hal/CMakeLists.txt declares no pmc_layer()")
    for layer in uses:
        if layer in closure(uses, layer):
            breaches.append(f"layer {layer} uses itself through {sorted(closure(uses, layer))}")
    header_layer = {}
    for f in src.rglob("*"):
        if f.suffix in SOURCE_SUFFIXES:
            rel = f.relative_to(src)
            if len(rel.parts) != 2:
                breaches.append(f"hal/src/{rel}: not in a layer folder of hal/src")
                continue
            if rel.parts[0] not in uses:
                breaches.append(f"hal/src/{rel}: folder {rel.parts[0]} is no pmc_layer() of hal/CMakeLists.txt")
            if f.suffix in {".h", ".hpp"}:
                if f.name in header_layer:
                    breaches.append(f"hal/src/{rel}: header name also in layer {header_layer[f.name]}")
                header_layer[f.name] = rel.parts[0]
    include = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
    for f in sorted(src.rglob("*")):
        if f.suffix not in SOURCE_SUFFIXES:
            continue
        rel = f.relative_to(src)
        layer = rel.parts[0]
        allowed = closure(uses, layer) | {layer}
        for name in include.findall(f.read_text(errors="replace")):
            owner = header_layer.get(Path(name).name)
            if owner is not None and owner not in allowed:
                breaches.append(f"hal/src/{rel}: includes {name} of layer {owner}, which {layer} does not use")
    for f in sorted((root / "hal" / "include").rglob("*")):
        if f.suffix in SOURCE_SUFFIXES:
            for name in include.findall(f.read_text(errors="replace")):
                breaches.append(f"{f.relative_to(root)}: public header includes \"{name}\"")
    names = {d.name for d in (root / "backends").iterdir() if d.is_dir()}
    names |= {d.name for d in (root / "sim" / "models").iterdir() if d.is_dir() and d.name != "common"}
    word = re.compile(r"(?<![\w.-])(" + "|".join(sorted(map(re.escape, names), key=len, reverse=True)) + r")(?![\w-])")
    for f in sorted(src.rglob("*")):
        if f.suffix in SOURCE_SUFFIXES:
            for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
                m = word.search(line)
                if m:
                    breaches.append(f"hal/src/{f.relative_to(src)}:{n}: names backend or model '{m.group(1)}'")
    for f in sorted(tracked_files(root)):
        rel = f.relative_to(root)
        if (f.suffix in SOURCE_SUFFIXES | {".py"} and f.is_file() and rel.parts[0] != "build"
                and rel.parts[:2] != ("tests", "data") and "corpus" not in rel.parts):
            lines = f.read_text(errors="replace").count("\n")
            if lines > MAX_LINES:
                breaches.append(f"{rel}: {lines} lines (at most {MAX_LINES})")
    breaches += stale_citations(root)
    if len(sys.argv) > 2:
        out = subprocess.run(["nm", "-DC", "--defined-only", sys.argv[2]], capture_output=True, text=True, check=True)
        for line in out.stdout.splitlines():
            if "::detail::" in line and "std::" not in line.split(" ", 2)[-1].split("::detail::")[0]:
                breaches.append(f"{Path(sys.argv[2]).name} exports {line.split(' ', 2)[-1]}")
    for b in breaches:
        print(b)
    print(f"check_layout: {len(breaches)} breach(es)")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
