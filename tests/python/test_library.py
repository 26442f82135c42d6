"""Where the package finds libpmchal: its own tree's, or $PMC_LIBRARY; and a Python program with
regions set up by the environment (docs/python.md)."""
import json
import os
import subprocess
import sys

import pmchal


def run_python(code, **env):
    return subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=60)


def test_pmc_library_overrides_the_path():
    p = run_python("import pmchal; print(pmchal.library_path()); print(pmchal.version())",
                   PMC_LIBRARY=pmchal.library_path())
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == [pmchal.library_path(), "0.1.0"]


def test_a_missing_library_is_one_import_error_naming_it(tmp_path):
    missing = tmp_path / "libpmchal.so.0.1"
    p = run_python("import pmchal", PMC_LIBRARY=str(missing))
    assert p.returncode != 0
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: pmchal: cannot load libpmchal from " + str(missing))
    assert "$PMC_LIBRARY" in last


def test_a_library_that_is_not_libpmchal_is_refused():
    p = run_python("import pmchal", PMC_LIBRARY="libc.so.6")
    assert p.returncode != 0
    assert "libc.so.6 has no pmc_" in p.stderr


def test_regions_from_the_environment_are_written_when_python_exits(tmp_path):
    out = tmp_path / "regions.json"
    code = ("import pmchal\n"
            "@pmchal.region('step')\n"
            "def step():\n"
            "    return sum(range(10000))\n"
            "for _ in range(5):\n"
            "    step()\n")
    p = run_python(code, PMC_REGION_EVENTS="task-clock,page-faults", PMC_REGION_OUTPUT=str(out))
    assert p.returncode == 0, p.stderr
    report = json.loads(out.read_text())
    assert report["events"] == ["task-clock", "page-faults"]
    (step,) = report["regions"]
    assert (step["name"], step["calls"], step["threads"]) == ("step", 5, 1)
    assert step["events"][0]["event"] == "task-clock"
    assert step["events"][0]["min"] > 0
