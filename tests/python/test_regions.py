"""pmchal.region as a context manager and a decorator (docs/python.md, "Regions"). The regions
are the process's: this file, run in a process of its own, sets them up once on the simulated
Pentium III counting instructions."""
import threading

import pytest

import pmchal
from conftest import P6_DEMO_INSTRUCTIONS


@pytest.fixture(scope="module", autouse=True)
def regions():
    pmchal.regions_init("instructions", cpuid_dump="pentium-iii")


@pytest.fixture(autouse=True)
def fresh():
    pmchal.regions_reset()


def by_name(report):
    return {r["name"]: r for r in report["regions"]}


def test_nested_regions_as_context_managers():
    with pmchal.region("outer"):
        pmchal.regions_run_workload("p6-demo")
        with pmchal.region("inner"):
            pmchal.regions_run_workload("p6-demo")
    with pmchal.region("inner"):
        pmchal.regions_run_workload("p6-demo")
    report = pmchal.regions_report()
    assert report["backend"] == "p6"
    assert report["events"] == ["instructions"]
    regions = by_name(report)
    # outer: one call holding two runs (its own and inner's).
    assert regions["outer"]["calls"] == 1
    assert regions["outer"]["events"][0]["sum"] == 2 * P6_DEMO_INSTRUCTIONS
    # inner: two calls of one run each.
    assert regions["inner"]["calls"] == 2
    assert regions["inner"]["events"][0] == {"event": "instructions", "sum": 2 * P6_DEMO_INSTRUCTIONS,
                                             "min": P6_DEMO_INSTRUCTIONS, "max": P6_DEMO_INSTRUCTIONS}


@pmchal.region("solve")
def solve(runs):
    for _ in range(runs):
        pmchal.regions_run_workload("p6-demo")
    return runs


def test_a_decorated_function_is_a_region_per_call():
    assert solve(1) == 1
    assert solve(2) == 2
    assert solve.__name__ == "solve"
    solve_ = by_name(pmchal.regions_report())["solve"]
    assert solve_["calls"] == 2
    assert solve_["events"][0]["min"] == P6_DEMO_INSTRUCTIONS
    assert solve_["events"][0]["max"] == 2 * P6_DEMO_INSTRUCTIONS


def test_threads_are_aggregated():
    threads = [threading.Thread(target=solve, args=(1,)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    solve_ = by_name(pmchal.regions_report())["solve"]
    assert (solve_["calls"], solve_["threads"]) == (3, 3)
    assert solve_["events"][0]["sum"] == 3 * P6_DEMO_INSTRUCTIONS


def test_a_region_cannot_begin_again_inside_itself():
    @pmchal.region("recursive")
    def f(n):
        return n if n == 0 else f(n - 1)

    with pytest.raises(pmchal.Error) as e:
        f(1)
    assert "recursive" in str(e.value)


def test_an_exception_ends_the_region_and_goes_on():
    with pytest.raises(KeyError):
        with pmchal.region("failing"):
            pmchal.regions_run_workload("p6-demo")
            raise KeyError("x")
    # The region was ended: it can begin again.
    with pmchal.region("failing"):
        pass
    assert by_name(pmchal.regions_report())["failing"]["calls"] == 2


def test_regions_init_comes_first():
    with pytest.raises(pmchal.Error):
        pmchal.regions_init("instructions", cpuid_dump="pentium-iii")


def test_the_report_is_written_to_a_file(tmp_path):
    with pmchal.region("written"):
        pmchal.regions_run_workload("p6-demo")
    out = tmp_path / "regions.json"
    pmchal.regions_write(out)
    assert '"written"' in out.read_text()
