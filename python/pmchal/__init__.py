"""pmchal from Python: CPU performance counters through libpmchal's C API (ctypes; nothing to
compile). docs/python.md is the guide.

    import pmchal
    with pmchal.count("task-clock,page-faults") as c:
        work()
    print(c["task-clock"], c["page-faults"])

    hal = pmchal.Hal(cpuid_dump="pentium-iii")           # the simulated Pentium III PMU
    with hal.session("instructions", "INST_RETIRED:u") as s:
        s.run_workload("p6-demo")
        print(s.read())       # {'instructions': 7900000, 'INST_RETIRED:u': 7550000}

    @pmchal.region("solve")   # or: with pmchal.region("solve"): ...
    def solve(): ...
"""
import collections
import collections.abc
import ctypes
import os

from ._capi import lib as _lib
from . import _capi

__all__ = ["Error", "Hal", "Session", "Counts", "Count", "EventInfo", "ReadingInfo", "WorkloadRun",
           "count", "region", "regions_init", "regions_write", "regions_report", "regions_reset",
           "regions_run_workload", "version", "library_path"]


class Error(Exception):
    """An error of the library: str(e) is its one-line message ("event 'INST_RETIRD', column 1:
    unknown event ..."), e.status the pmc_status code (3), e.name the code's name ("not_found")."""

    def __init__(self, message, status=_capi.PMC_ERR_INVALID_ARGUMENT):
        super().__init__(message)
        self.status = status
        self.name = _lib.pmc_status_name(status).decode()


def _check(status):
    if status != _capi.PMC_OK:
        raise Error(_lib.pmc_last_error().decode(errors="replace"), status)


def _b(text):
    return None if text is None else os.fsencode(text)


def _s(raw):
    return "" if raw is None else raw.decode(errors="replace")


def version():
    """The library's version ("0.1.0")."""
    return _s(_lib.pmc_version_string())


def library_path():
    """The libpmchal file this package loaded."""
    return _capi.library_path()


EventInfo = collections.namedtuple("EventInfo", "name description generic pmu")
EventInfo.__doc__ = "An event a session can add: its name, one sentence, perf's generic name, the PMU."
ReadingInfo = collections.namedtuple("ReadingInfo", "event canonical name generic unit cpu hal")
ReadingInfo.__doc__ = "What a reading is: the event as added, its canonical string, catalog and generic names, unit."
WorkloadRun = collections.namedtuple("WorkloadRun", "cycles cycles_not_counted interrupts")
WorkloadRun.__doc__ = "A simulated workload's run: its cycles, those on CPUs not counted, overflow interrupts."


def _split_events(events):
    """The entries of perf's event list, from a string ("task-clock,{cycles,instructions}") or an
    iterable of them: each an event string, or a "{a,b}" group (with any modifiers after it),
    which the library splits and counts together. The commas inside perf's raw PMU syntax
    ("cpu/event=0x3c,umask=0/") and inside a group do not split."""
    if isinstance(events, (str, bytes)):
        events = [events]
    out = []
    for item in events:
        text = os.fsdecode(item)
        start, in_pmu, depth = 0, False, 0
        for i, ch in enumerate(text):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "/" and depth == 0:
                in_pmu = not in_pmu
            elif ch == "," and not in_pmu and depth == 0:
                out.append(text[start:i])
                start = i + 1
        out.append(text[start:])
    for e in out:
        if not e.strip():
            raise Error(f"event list {events!r}: an empty event", _capi.PMC_ERR_INVALID_ARGUMENT)
    return out


def _is_group(entry):
    return "{" in entry or "}" in entry


def _config(backend=None, access=None, cpuid_dump=None, plugin_path=(), events_path=()):
    """A pmc_config and the byte strings it points at (kept alive by the caller)."""
    cfg = _capi.Config()
    cfg.struct_size = ctypes.sizeof(_capi.Config)
    cfg.backend, cfg.access, cfg.cpu = _b(backend), _b(access), _b(cpuid_dump)
    keep = []
    for field, paths in (("plugin_path", plugin_path), ("events_path", events_path)):
        if isinstance(paths, (str, bytes, os.PathLike)):
            paths = [paths]
        arr = (ctypes.c_char_p * len(paths))(*[os.fsencode(p) for p in paths])
        keep.append(arr)
        setattr(cfg, field, ctypes.cast(arr, ctypes.POINTER(ctypes.c_char_p)))
        setattr(cfg, field + "_count", len(paths))
    return cfg, keep


class _Handle:
    """A C API handle the object owns: released by close(), at the end of a with block, or when
    the object is collected. Subclasses name it (_what) and the C API call that releases it."""

    _what = "handle"
    _release = None  # the name of the pmc_*_close function

    def _h(self):
        if self._handle is None:
            raise Error(f"the {self._what} is closed", _capi.PMC_ERR_INVALID_ARGUMENT)
        return self._handle

    def close(self):
        if self._handle is not None:
            getattr(_lib, self._release)(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_handle", None) is not None and _lib is not None:
            self.close()


class Hal(_Handle):
    """The HAL: the CPU, the plugins, the chosen backend. With no argument, the config file is
    found as the pmc command finds it ($PMC_CONFIG, ~/.config/pmc/config.toml,
    /etc/pmc/config.toml). config= names a config file; the keyword arguments instead give its
    values (and read no file): backend ("p6", default "auto"), access ("sim", "perf", "msr"),
    cpuid_dump (a CPUID dump or CPU description file, or a bundled dump's name such as
    "pentium-iii"; default the CPU this runs on), plugin_path and events_path (lists of
    directories or files). close() releases it; its sessions keep working."""

    _what = "Hal"
    _release = "pmc_hal_close"

    def __init__(self, config=None, *, backend=None, access=None, cpuid_dump=None, plugin_path=(),
                 events_path=()):
        handle = ctypes.c_void_p()
        overrides = backend is not None or access is not None or cpuid_dump is not None or plugin_path or events_path
        if config is not None and overrides:
            raise Error("Hal: config= names a file whose values the other arguments would replace; "
                        "give one or the other", _capi.PMC_ERR_INVALID_ARGUMENT)
        if config is not None:
            _check(_lib.pmc_hal_open_file(os.fsencode(config), ctypes.byref(handle)))
        elif overrides:
            cfg, _keep = _config(backend, access, cpuid_dump, plugin_path, events_path)
            _check(_lib.pmc_hal_open(ctypes.byref(cfg), ctypes.byref(handle)))
        else:
            _check(_lib.pmc_hal_open(None, ctypes.byref(handle)))
        self._handle = handle

    @property
    def backend(self):
        """The chosen backend's name ("p6"), None when none matched this CPU."""
        raw = _lib.pmc_hal_backend(self._h())
        return None if raw is None else raw.decode()

    @property
    def reason(self):
        """Why that backend was chosen, or why none was."""
        return _s(_lib.pmc_hal_reason(self._h()))

    @property
    def cpu(self):
        """The CPU in one line ("GenuineIntel family 6 model 8 stepping 3")."""
        return _s(_lib.pmc_hal_cpu(self._h()))

    @property
    def access(self):
        """How sessions count: "sim", "perf", "msr", or "" without a backend."""
        return _s(_lib.pmc_hal_access(self._h()))

    def events(self):
        """The events a session can add: the backend's, then the HAL's (pmu "hal": tsc, task-clock...)."""
        h = self._h()
        out = []
        for i in range(_lib.pmc_hal_event_count(h)):
            info = _capi.EventInfo()
            info.struct_size = ctypes.sizeof(_capi.EventInfo)
            _check(_lib.pmc_hal_event(h, i, ctypes.byref(info)))
            out.append(EventInfo(_s(info.name), _s(info.description), _s(info.generic), _s(info.pmu)))
        return out

    def session(self, *events, pid=None, cpu=None, all_cpus=False, inherit=False, enable_on_exec=False):
        """A Session counting the events (strings or comma lists, added in order). Whose activity:
        this thread (the default), pid= another process, cpu= everything on one CPU, all_cpus=True
        every CPU summed; inherit=True also counts the threads and children created later."""
        scope = _capi.Scope(_capi.PMC_SCOPE_THREAD, 0, -1, int(inherit), int(enable_on_exec))
        if sum(x is not None for x in (pid, cpu)) + bool(all_cpus) > 1:
            raise Error("Hal.session: pid=, cpu= and all_cpus= are different scopes; give one",
                        _capi.PMC_ERR_INVALID_ARGUMENT)
        if pid is not None:
            scope.kind, scope.pid = _capi.PMC_SCOPE_PROCESS, int(pid)
        elif cpu is not None:
            scope.kind, scope.cpu = _capi.PMC_SCOPE_CPU, int(cpu)
        elif all_cpus:
            scope.kind = _capi.PMC_SCOPE_ALL_CPUS
        s = Session(self, scope)
        try:
            if events:
                s.add(*events)
        except BaseException:
            s.close()
            raise
        return s

    def __repr__(self):
        if self._handle is None:
            return "<pmchal.Hal closed>"
        return f"<pmchal.Hal backend={self.backend!r} cpu={self.cpu!r} access={self.access!r}>"


class Counts(dict):
    """One read of a session: a dict from each event, as added, to its count; .enabled and
    .running the nanoseconds each was enabled and on a counter (cycles of the workload on a
    simulated PMU; they differ when the events were multiplexed), .info what each reading is."""

    def __init__(self, values, enabled, running, info):
        super().__init__(values)
        self.enabled = enabled
        self.running = running
        self.info = info


class Session(_Handle):
    """Events counted together, from Hal.session(). add() events while stopped, start(), stop(),
    read() a Counts. As a context manager it is closed at the end of the with block."""

    _what = "session"
    _release = "pmc_session_close"

    def __init__(self, hal, scope):
        handle = ctypes.c_void_p()
        _check(_lib.pmc_session_open(hal._h(), ctypes.byref(scope), ctypes.byref(handle)))
        self._handle = handle
        self._layout = None
        self._buffers = None  # the read buffers, sized for the layout

    def add(self, *events):
        """Adds events: strings ("INST_RETIRED:u", "task-clock") or comma lists of them. An event
        the session already has is refused (readings are keyed by the event string)."""
        h = self._h()
        have = {r.event for r in self.readings()}
        for e in _split_events(events):
            if _is_group(e):  # the library splits it and counts its events together
                _check(_lib.pmc_session_add_list(h, e.encode()))
                self._layout = None
                have = {r.event for r in self.readings()}
                continue
            if e in have:
                raise Error(f"event '{e}' is already in the session", _capi.PMC_ERR_INVALID_ARGUMENT)
            _check(_lib.pmc_session_add(h, e.encode()))
            have.add(e)
            self._layout = None
        return self

    def start(self):
        _check(_lib.pmc_session_start(self._h()))
        return self

    def stop(self):
        _check(_lib.pmc_session_stop(self._h()))
        return self

    def reset(self):
        """Sets the counts back to zero."""
        _check(_lib.pmc_session_reset(self._h()))
        return self

    def readings(self):
        """What each value of a read is (ReadingInfo), in the order the events were added."""
        if self._layout is None:
            h = self._h()
            layout = []
            for i in range(_lib.pmc_session_reading_count(h)):
                info = _capi.ReadingInfo()
                info.struct_size = ctypes.sizeof(_capi.ReadingInfo)
                _check(_lib.pmc_session_reading_info(h, i, ctypes.byref(info)))
                layout.append(ReadingInfo(_s(info.event), _s(info.canonical), _s(info.name), _s(info.generic),
                                          _s(info.unit), info.cpu, bool(info.hal)))
            self._layout = layout
        return self._layout

    def read(self):
        """The counts so far (counting or stopped): a Counts, event -> value."""
        h = self._h()
        layout = self.readings()
        n = len(layout)
        if self._buffers is None or len(self._buffers[0]) != n:  # made once per set of events
            self._buffers = ((ctypes.c_uint64 * n)(), (ctypes.c_uint64 * n)(), (ctypes.c_uint64 * n)())
        values, enabled, running = self._buffers
        _check(_lib.pmc_session_read(h, values, n, enabled, running))
        keys = [r.event for r in layout]
        return Counts(zip(keys, values), dict(zip(keys, enabled)), dict(zip(keys, running)),
                      dict(zip(keys, layout)))

    def run_workload(self, workload):
        """Simulated PMUs: runs a workload file (or a bundled one, "p6-demo") through the device
        model, starting the session for the run when it is stopped."""
        run = _capi.WorkloadRun()
        _check(_lib.pmc_session_run_workload(self._h(), os.fsencode(workload), ctypes.byref(run)))
        return WorkloadRun(run.cycles, run.cycles_not_counted, run.interrupts)


class Count(collections.abc.Mapping):
    """What count() returns: counting between the start and the end of its with block; then a
    mapping from each event to its count. Inside the block it reads the counters as they are."""

    def __init__(self, events, hal, hal_args):
        self._events = _split_events(events)
        self._hal, self._own_hal, self._hal_args = hal, hal is None, hal_args
        self._session = None
        self._counts = None

    def __enter__(self):
        if self._own_hal:
            self._hal = Hal(**self._hal_args)
        try:
            self._session = self._hal.session(*self._events)
            self._counts = None
            self._session.start()
        except BaseException:
            self._close()
            raise
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            self._session.stop()
            self._counts = self._session.read()
        except Error:
            if exc_type is None:
                raise
        finally:
            self._close()

    def _close(self):
        if self._session is not None:
            self._session.close()
            self._session = None
        if self._own_hal and self._hal is not None:
            self._hal.close()
            self._hal = None

    def run_workload(self, workload):
        """Simulated PMUs: runs a workload through the counting session (Session.run_workload)."""
        if self._session is None:
            raise Error("count.run_workload: only inside the with block", _capi.PMC_ERR_INVALID_ARGUMENT)
        return self._session.run_workload(workload)

    def read(self):
        """The counts: final after the with block, as they are inside it."""
        if self._session is not None:
            return self._session.read()
        if self._counts is None:
            raise Error("count: nothing counted yet (use it in a with block)", _capi.PMC_ERR_INVALID_ARGUMENT)
        return self._counts

    @property
    def enabled(self):
        return self.read().enabled

    @property
    def running(self):
        return self.read().running

    def __getitem__(self, event):
        return self.read()[event]

    def __iter__(self):
        return iter(self.read())

    def __len__(self):
        return len(self.read())

    def __repr__(self):
        if self._counts is None and self._session is None:
            return "<pmchal.count: not counted yet>"
        return f"pmchal.count({dict(self.read())!r})"


def count(events="task-clock", *, hal=None, **hal_args):
    """Counts the events (a comma list or a list of strings) over a with block:

        with pmchal.count("task-clock,page-faults") as c:
            work()
        c["task-clock"]

    On this thread; on the Hal given, or on one opened with hal_args (Hal's keyword arguments:
    config=, backend=, cpuid_dump=, ...; none: the config file as pmc finds it)."""
    if hal is not None and hal_args:
        raise Error("count: hal= is already open; its arguments cannot change", _capi.PMC_ERR_INVALID_ARGUMENT)
    return Count(events, hal, hal_args)


# The region API (docs/regions.md) lives in _regions.py; it uses the helpers above.
from ._regions import (region, regions_init, regions_write, regions_report, regions_reset,  # noqa: E402
                       regions_run_workload)
