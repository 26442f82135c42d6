"""pmchal.Hal and sessions (docs/python.md, "The HAL and sessions")."""
import os

import pytest

import pmchal
from conftest import P6_DEMO_INSTRUCTIONS, P6_DEMO_USER_INSTRUCTIONS


def test_the_hal_says_what_it_probed(p3):
    assert p3.backend == "p6"
    assert p3.cpu == "GenuineIntel family 6 model 8 stepping 3"
    assert "Pentium III" in p3.reason
    assert p3.access == "sim"
    events = {e.name: e for e in p3.events()}
    assert events["INST_RETIRED"].pmu == "p6"
    assert events["INST_RETIRED"].generic == "instructions"
    assert events["task-clock"].pmu == "hal"
    assert pmchal.version() == "0.1.0"


def test_a_session_reads_a_dict_of_counts(p3):
    with p3.session("instructions", "INST_RETIRED:u") as s:
        assert [r.event for r in s.readings()] == ["instructions", "INST_RETIRED:u"]
        s.run_workload("p6-demo")
        counts = s.read()
        assert counts == {"instructions": P6_DEMO_INSTRUCTIONS, "INST_RETIRED:u": P6_DEMO_USER_INSTRUCTIONS}
        assert list(counts) == ["instructions", "INST_RETIRED:u"]  # in the order added
        # Two events, two counters: both counted all the time.
        assert counts.enabled == counts.running
        assert counts.enabled["instructions"] > 0
        info = counts.info["INST_RETIRED:u"]
        assert (info.name, info.generic, info.unit, info.hal) == ("INST_RETIRED", "instructions", "", False)
        assert info.canonical.startswith("p6::INST_RETIRED")


def test_add_start_stop_reset(p3):
    s = p3.session()
    s.add("instructions")
    s.start()
    s.run_workload("p6-demo")
    s.stop()
    s.run_workload("p6-demo")  # stopped: the run starts the session for itself
    assert s.read()["instructions"] == 2 * P6_DEMO_INSTRUCTIONS
    s.reset()
    assert s.read()["instructions"] == 0
    s.close()
    with pytest.raises(pmchal.Error, match="closed"):
        s.read()


def test_more_events_than_counters_are_multiplexed(p3):
    events = ["INST_RETIRED", "CPU_CLK_UNHALTED", "FLOPS", "MUL", "DIV", "L2_LINES_IN"]
    with p3.session(",".join(events)) as s:
        s.run_workload("p6-demo")
        counts = s.read()
    assert list(counts) == events
    # Six events on the P6's two counters: each ran part of the time it was enabled.
    for e in events:
        assert 0 < counts.running[e] < counts.enabled[e]


def test_software_events_on_this_machine():
    with pmchal.Hal() as hal, hal.session("task-clock", "context-switches") as s:
        s.start()
        sum(range(200_000))
        s.stop()
        counts = s.read()
    assert counts["task-clock"] > 0
    assert counts.info["task-clock"].unit == "ns"
    assert counts.info["task-clock"].hal


def test_a_mistyped_event_names_the_nearest_and_leaves_the_session_as_it_was(p3):
    with p3.session("instructions") as s:
        with pytest.raises(pmchal.Error) as e:
            s.add("L2_LD:NOT_A_MASK")
        assert e.value.name == "unit_mask"
        assert "NOT_A_MASK" in str(e.value)
        assert "\n" not in str(e.value)
        with pytest.raises(pmchal.Error, match="already in the session"):
            s.add("instructions")
        assert list(s.read()) == ["instructions"]


def test_a_config_file(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('backend = "p6"\ncpu = "pentium-iii"\n')
    with pmchal.Hal(config=cfg) as hal:
        assert hal.backend == "p6"
    bad = tmp_path / "bad.toml"
    bad.write_text("backend = 6\n")
    with pytest.raises(pmchal.Error) as e:
        pmchal.Hal(config=bad)
    assert str(e.value).startswith(f"{bad}:1:")
    assert e.value.name == "parse" or "string" in str(e.value)


def test_config_and_its_values_are_one_or_the_other(tmp_path):
    with pytest.raises(pmchal.Error, match="one or the other"):
        pmchal.Hal(config=tmp_path / "config.toml", backend="p6")


def test_an_unknown_bundled_dump_is_an_error():
    with pytest.raises(pmchal.Error) as e:
        pmchal.Hal(cpuid_dump="no-such-cpu")
    assert "no-such-cpu" in str(e.value)


def test_the_library_is_the_build_trees():
    # ctest sets no PMC_LIBRARY: the package finds the library of its own tree.
    assert not os.environ.get("PMC_LIBRARY")
    path = pmchal.library_path()
    assert os.path.isfile(path)
    package_dir = os.path.dirname(pmchal.__file__)
    prefix = os.path.normpath(os.path.join(package_dir, "..", "..", "..", ".."))  # <prefix>/lib/python3/dist-packages/pmchal
    assert os.path.dirname(path) == os.path.join(prefix, "lib")
    assert os.path.basename(path).startswith("libpmchal.so.")
