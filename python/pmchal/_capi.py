"""libpmchal's C API (<pmc/pmc.h>) through ctypes: the structures, the functions' signatures, and
where the library is. Private to the package; docs/python.md is the user's guide."""
import ctypes
import os

from . import _paths

# pmc_status values the package tests for itself.
PMC_OK = 0
PMC_ERR_INVALID_ARGUMENT = 2

PMC_SCOPE_THREAD = 0
PMC_SCOPE_PROCESS = 1
PMC_SCOPE_CPU = 2
PMC_SCOPE_EACH_CPU = 3
PMC_SCOPE_ALL_CPUS = 4


class Config(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t),
                ("backend", ctypes.c_char_p),
                ("access", ctypes.c_char_p),
                ("cpu", ctypes.c_char_p),
                ("plugin_path", ctypes.POINTER(ctypes.c_char_p)),
                ("plugin_path_count", ctypes.c_size_t),
                ("events_path", ctypes.POINTER(ctypes.c_char_p)),
                ("events_path_count", ctypes.c_size_t)]


class EventInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t),
                ("name", ctypes.c_char_p),
                ("description", ctypes.c_char_p),
                ("generic", ctypes.c_char_p),
                ("pmu", ctypes.c_char_p)]


class Scope(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int),
                ("pid", ctypes.c_int),
                ("cpu", ctypes.c_int),
                ("inherit", ctypes.c_int),
                ("enable_on_exec", ctypes.c_int)]


class ReadingInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t),
                ("event", ctypes.c_char_p),
                ("canonical", ctypes.c_char_p),
                ("name", ctypes.c_char_p),
                ("generic", ctypes.c_char_p),
                ("unit", ctypes.c_char_p),
                ("cpu", ctypes.c_int),
                ("hal", ctypes.c_int)]


class WorkloadRun(ctypes.Structure):
    _fields_ = [("cycles", ctypes.c_uint64),
                ("cycles_not_counted", ctypes.c_uint64),
                ("interrupts", ctypes.c_uint64)]


_p = ctypes.c_void_p
_u64p = ctypes.POINTER(ctypes.c_uint64)
_SIGNATURES = {
    "pmc_last_error": (ctypes.c_char_p, []),
    "pmc_last_status": (ctypes.c_int, []),
    "pmc_status_name": (ctypes.c_char_p, [ctypes.c_int]),
    "pmc_version": (ctypes.c_uint32, []),
    "pmc_version_string": (ctypes.c_char_p, []),
    "pmc_hal_open": (ctypes.c_int, [ctypes.POINTER(Config), ctypes.POINTER(_p)]),
    "pmc_hal_open_file": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(_p)]),
    "pmc_hal_close": (None, [_p]),
    "pmc_hal_backend": (ctypes.c_char_p, [_p]),
    "pmc_hal_reason": (ctypes.c_char_p, [_p]),
    "pmc_hal_cpu": (ctypes.c_char_p, [_p]),
    "pmc_hal_access": (ctypes.c_char_p, [_p]),
    "pmc_hal_event_count": (ctypes.c_size_t, [_p]),
    "pmc_hal_event": (ctypes.c_int, [_p, ctypes.c_size_t, ctypes.POINTER(EventInfo)]),
    "pmc_session_open": (ctypes.c_int, [_p, ctypes.POINTER(Scope), ctypes.POINTER(_p)]),
    "pmc_session_close": (None, [_p]),
    "pmc_session_add": (ctypes.c_int, [_p, ctypes.c_char_p]),
    "pmc_session_add_list": (ctypes.c_int, [_p, ctypes.c_char_p]),
    "pmc_session_start": (ctypes.c_int, [_p]),
    "pmc_session_stop": (ctypes.c_int, [_p]),
    "pmc_session_reset": (ctypes.c_int, [_p]),
    "pmc_session_reading_count": (ctypes.c_size_t, [_p]),
    "pmc_session_read": (ctypes.c_int, [_p, _u64p, ctypes.c_size_t, _u64p, _u64p]),
    "pmc_session_reading_info": (ctypes.c_int, [_p, ctypes.c_size_t, ctypes.POINTER(ReadingInfo)]),
    "pmc_session_run_workload": (ctypes.c_int, [_p, ctypes.c_char_p, ctypes.POINTER(WorkloadRun)]),
    "pmc_region_id": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint32)]),
    "pmc_region_begin_id": (ctypes.c_int, [ctypes.c_uint32]),
    "pmc_region_end_id": (ctypes.c_int, [ctypes.c_uint32]),
    "pmc_regions_init": (ctypes.c_int, [ctypes.POINTER(Config), ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t]),
    "pmc_regions_write": (ctypes.c_int, [ctypes.c_char_p]),
    "pmc_regions_reset": (ctypes.c_int, []),
    "pmc_regions_run_workload": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(WorkloadRun)]),
}


def library_path():
    """The libpmchal this package loads: $PMC_LIBRARY when set, else the library of the tree the
    package belongs to (the build tree's, or the install's), at the path CMake wrote into _paths."""
    override = os.environ.get("PMC_LIBRARY")
    if override:
        return override
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), _paths.LIBRARY))


def _load():
    path = library_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        how = "$PMC_LIBRARY" if os.environ.get("PMC_LIBRARY") else "the path CMake wrote into pmchal/_paths.py"
        raise ImportError(f"pmchal: cannot load libpmchal from {path} ({how}): {e}; "
                          "set PMC_LIBRARY to the library's path") from None
    for name, (restype, argtypes) in _SIGNATURES.items():
        try:
            f = getattr(lib, name)
        except AttributeError:
            raise ImportError(f"pmchal: {path} has no {name}: not a libpmchal of version "
                              f"{_paths.VERSION} or later") from None
        f.restype = restype
        f.argtypes = argtypes
    # The C API only adds within a major version (docs/c-api.md): a library of this package's
    # minor version or a later one has everything the package calls.
    have = lib.pmc_version()
    want = tuple(int(x) for x in _paths.VERSION.split("."))
    if have >> 16 != want[0] or (have >> 8) & 0xFF < want[1]:
        raise ImportError(f"pmchal: {path} is libpmchal {lib.pmc_version_string().decode()}; "
                          f"this package needs {want[0]}.{want[1]} or a later {want[0]}.x")
    return lib


lib = _load()
