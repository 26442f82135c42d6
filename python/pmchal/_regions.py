"""pmchal's region API (docs/regions.md): named regions of a program counted per thread and
aggregated, from Python. Re-exported by the package: pmchal.region, pmchal.regions_init, ..."""
import ctypes
import json
import os
import tempfile

from . import _capi
from ._capi import lib as _lib
from . import Error, WorkloadRun, _check, _config, _is_group, _split_events


class region:
    """A named region of the program (docs/regions.md), counted on the calling thread and
    aggregated over calls and threads; as a context manager or a decorator:

        with pmchal.region("load"):
            ...
        @pmchal.region("solve")
        def solve(): ...

    Regions nest; a region already open on this thread cannot begin again (a recursive decorated
    function raises Error). The events and the report's file come from the environment or the
    config file unless regions_init() was called first."""

    def __init__(self, name):
        self.name = name
        self._id = None

    def _region_id(self):
        if self._id is None:
            rid = ctypes.c_uint32()
            _check(_lib.pmc_region_id(self.name.encode(), ctypes.byref(rid)))
            self._id = rid.value
        return self._id

    def __enter__(self):
        _check(_lib.pmc_region_begin_id(self._region_id()))
        return self

    def __exit__(self, exc_type, exc, tb):
        status = _lib.pmc_region_end_id(self._region_id())
        if exc_type is None:
            _check(status)

    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return wrapper


def regions_init(events=("task-clock",), **hal_args):
    """Sets up the regions: counts events (a comma list or list of strings) with a HAL opened
    from hal_args (Hal's keyword arguments other than config=; none: as Hal() would). Only before
    the first region of the process."""
    names = _split_events(events)
    for n in names:
        if _is_group(n):
            raise Error(f"regions_init: '{n}': regions count events one by one, not groups",
                        _capi.PMC_ERR_INVALID_ARGUMENT)
    arr = (ctypes.c_char_p * len(names))(*[n.encode() for n in names])
    if "config" in hal_args:
        raise Error("regions_init: config= is not supported by the C API; give the values",
                    _capi.PMC_ERR_INVALID_ARGUMENT)
    if hal_args:
        cfg, _keep = _config(**hal_args)
        _check(_lib.pmc_regions_init(ctypes.byref(cfg), arr, len(names)))
    else:
        _check(_lib.pmc_regions_init(None, arr, len(names)))


def regions_write(path="-"):
    """Writes the regions' results so far as JSON (docs/regions.md) to path ("-": stdout)."""
    _check(_lib.pmc_regions_write(os.fsencode(path)))


def regions_report():
    """The regions' results so far, as the dict the JSON report holds."""
    fd, path = tempfile.mkstemp(prefix="pmchal-regions-", suffix=".json")
    os.close(fd)
    try:
        regions_write(path)
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    finally:
        os.unlink(path)


def regions_reset():
    """Forgets the results so far (the regions' names stay registered)."""
    _check(_lib.pmc_regions_reset())


def regions_run_workload(workload):
    """Simulated PMUs: runs a workload on this thread's region session."""
    run = _capi.WorkloadRun()
    _check(_lib.pmc_regions_run_workload(os.fsencode(workload), ctypes.byref(run)))
    return WorkloadRun(run.cycles, run.cycles_not_counted, run.interrupts)
