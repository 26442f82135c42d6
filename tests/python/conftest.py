"""Shared by the pmchal package's tests (tests/python, docs/python.md). ctest runs each test_*.py
file in a process of its own (tests/CMakeLists.txt) with PYTHONPATH at the build tree's package
directory, no config file of the user's and no region environment."""
import pytest

import pmchal

# examples/workloads/p6-demo.toml on the simulated Pentium III, worked out by hand in
# examples/CMakeLists.txt: 7,900,000 instructions retired, 7,550,000 of them in user mode.
P6_DEMO_INSTRUCTIONS = 7_900_000
P6_DEMO_USER_INSTRUCTIONS = 7_550_000


@pytest.fixture
def p3():
    """A Hal on the bundled CPUID dump of a Pentium III: the p6 backend, counting on its model."""
    with pmchal.Hal(cpuid_dump="pentium-iii") as hal:
        yield hal
