"""pmchal.count(): the events of a with block, on this thread (docs/python.md, "Counting a block")."""
import mmap
import time

import pytest

import pmchal
from conftest import P6_DEMO_INSTRUCTIONS, P6_DEMO_USER_INSTRUCTIONS

PAGE = mmap.PAGESIZE


def spin(seconds):
    """Uses this thread's CPU for `seconds` of its own CPU time."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def touch_pages(n):
    """Faults in n fresh pages (no transparent huge pages: one fault per page)."""
    m = mmap.mmap(-1, n * PAGE)
    m.madvise(mmap.MADV_NOHUGEPAGE)
    for i in range(0, n * PAGE, PAGE):
        m[i] = 1
    m.close()


def test_task_clock_counts_the_cpu_time_of_the_block():
    with pmchal.count("task-clock,page-faults") as c:
        spin(0.2)
    # task-clock is this thread's CPU time in nanoseconds: the 200 ms spent (Python's thread_time
    # and perf's task-clock are different clocks: a few percent apart), plus the little the with
    # statement itself costs.
    assert 0.18e9 <= c["task-clock"] < 0.4e9
    assert set(c) == {"task-clock", "page-faults"}
    assert c.enabled["task-clock"] >= c["task-clock"]


def test_only_the_block_is_counted():
    spin(0.2)  # before: not counted
    with pmchal.count("task-clock") as idle:
        time.sleep(0.2)  # sleeping uses no CPU
    spin(0.2)  # after: not counted either
    assert idle["task-clock"] < 0.1e9


def test_page_faults_of_the_block():
    pages = 2000
    with pmchal.count(["page-faults", "task-clock"]) as c:
        touch_pages(pages)
    assert pages <= c["page-faults"] < pages + 500
    with pmchal.count("page-faults") as quiet:
        pass
    assert quiet["page-faults"] < 100


def test_inside_the_block_it_reads_the_counters_as_they_are():
    with pmchal.count("task-clock") as c:
        spin(0.05)
        first = c["task-clock"]
        spin(0.05)
    assert 0.045e9 <= first < c["task-clock"]


def test_exact_counts_of_a_workload_on_a_simulated_pmu():
    with pmchal.count("instructions,INST_RETIRED:u", cpuid_dump="pentium-iii") as c:
        run = c.run_workload("p6-demo")
    assert dict(c) == {"instructions": P6_DEMO_INSTRUCTIONS, "INST_RETIRED:u": P6_DEMO_USER_INSTRUCTIONS}
    assert run.cycles > 0 and run.interrupts == 0


def test_count_on_an_open_hal(p3):
    with pmchal.count(["instructions"], hal=p3) as c:
        c.run_workload("p6-demo")
        c.run_workload("p6-demo")
    assert c["instructions"] == 2 * P6_DEMO_INSTRUCTIONS
    assert p3.backend == "p6"  # still open: count() closes only the Hal it opened


def test_an_unknown_event_is_the_librarys_error():
    with pytest.raises(pmchal.Error) as e:
        with pmchal.count("task-clock,INST_RETIRD", cpuid_dump="pentium-iii"):
            pass
    assert "INST_RETIRD" in str(e.value)
    assert "INST_RETIRED" in str(e.value)  # the nearest name
    assert e.value.name == "not_found"
    assert e.value.status == 3


def test_the_exception_of_the_block_is_not_hidden():
    with pytest.raises(ZeroDivisionError):
        with pmchal.count("task-clock"):
            1 / 0


def test_counts_before_the_block_are_an_error():
    c = pmchal.count("task-clock")
    with pytest.raises(pmchal.Error, match="nothing counted yet"):
        c["task-clock"]


def test_bad_lists_are_refused_before_counting():
    with pytest.raises(pmchal.Error, match="empty event"):
        pmchal.count("task-clock,,page-faults")
    # The library's list syntax (pmc::parse_event_list): an unclosed group names the list.
    with pytest.raises(pmchal.Error) as e:
        with pmchal.count("{task-clock,page-faults"):
            pass
    assert "{task-clock,page-faults" in str(e.value)
    assert e.value.name == "parse"


def test_a_group_is_counted_together():
    # perf's {a,b}: both events in one event set, so both run the whole time (the P6 has two
    # counters); the counts are the hand-worked ones of p6-demo.
    with pmchal.count("{instructions,INST_RETIRED:u}", cpuid_dump="pentium-iii") as c:
        c.run_workload("p6-demo")
    assert dict(c) == {"instructions": P6_DEMO_INSTRUCTIONS, "INST_RETIRED:u": P6_DEMO_USER_INSTRUCTIONS}
    assert c.enabled == c.running
    # Groups and single events mixed, with the software events of the OS.
    with pmchal.count("task-clock,{page-faults,context-switches}") as c:
        spin(0.01)
    assert set(c) == {"task-clock", "page-faults", "context-switches"}
    assert c["task-clock"] > 0


def test_a_group_the_pmu_cannot_hold_is_refused_whole():
    # Three P6 events in one group: two counters (docs/hardware/p6.md), so no event set holds them.
    with pytest.raises(pmchal.Error) as e:
        with pmchal.count("{INST_RETIRED,DATA_MEM_REFS,BR_INST_RETIRED}", cpuid_dump="pentium-iii"):
            pass
    assert e.value.name == "no_counter"
    assert "INST_RETIRED" in str(e.value) and "BR_INST_RETIRED" in str(e.value)
