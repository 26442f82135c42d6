#!/usr/bin/env python3
"""Runs one file of the pmchal package's tests under pytest (ctest: python_<file>): in this
interpreter when it has pytest, else with the `pytest-3` or `pytest` program (Debian's
python3-pytest, for Debian's python3, when this interpreter is another one); when neither is
there, reports the test skipped (exit 77, ctest's SKIP_RETURN_CODE) with the reason.
    run_pytest.py TEST_FILE"""
import os
import shutil
import sys

# -p no:cacheprovider: no .pytest_cache in the source tree.
ARGS = ["-q", "-p", "no:cacheprovider", sys.argv[1]]

try:
    import pytest
except ImportError:
    program = shutil.which("pytest-3") or shutil.which("pytest")
    if program is None:
        print("skipped: pytest is not installed (Debian python3-pytest; scripts/build.sh installs it)")
        sys.exit(77)
    os.execv(program, [program] + ARGS)
sys.exit(pytest.main(ARGS))
