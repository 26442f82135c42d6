#!/usr/bin/env python3
"""The C API through Python's ctypes: the ABI of libpmchal.so as a foreign caller sees it (ctest:
test_capi_ctypes). It declares the structures and functions of <pmc/pmc.h> itself, opens a HAL on
the bundled CPUID dump of a Pentium III, counts the bundled workload p6-demo on the simulated P6
PMU, checks an error's code and message, and counts nested regions.

    test_capi_ctypes.py LIBPMCHAL SCRATCH_DIR

Expected counts, worked out by hand from examples/workloads/p6-demo.toml (the arithmetic is in
examples/CMakeLists.txt): 7,900,000 instructions retired, 7,550,000 of them in user mode.
"""
import ctypes
import json
import os
import sys
import unittest

LIB = None
SCRATCH = None

PMC_OK = 0
PMC_ERR_INVALID_ARGUMENT = 2
PMC_ERR_NOT_FOUND = 3
PMC_ERR_UNIT_MASK = 5


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


def load(path):
    lib = ctypes.CDLL(path)
    hal_p = ctypes.c_void_p
    sig = {
        "pmc_last_error": (ctypes.c_char_p, []),
        "pmc_last_status": (ctypes.c_int, []),
        "pmc_status_name": (ctypes.c_char_p, [ctypes.c_int]),
        "pmc_version_string": (ctypes.c_char_p, []),
        "pmc_hal_open": (ctypes.c_int, [ctypes.POINTER(Config), ctypes.POINTER(hal_p)]),
        "pmc_hal_close": (None, [hal_p]),
        "pmc_hal_backend": (ctypes.c_char_p, [hal_p]),
        "pmc_hal_cpu": (ctypes.c_char_p, [hal_p]),
        "pmc_hal_reason": (ctypes.c_char_p, [hal_p]),
        "pmc_hal_event_count": (ctypes.c_size_t, [hal_p]),
        "pmc_hal_event": (ctypes.c_int, [hal_p, ctypes.c_size_t, ctypes.POINTER(EventInfo)]),
        "pmc_session_open": (ctypes.c_int, [hal_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]),
        "pmc_session_close": (None, [ctypes.c_void_p]),
        "pmc_session_add": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
        "pmc_session_start": (ctypes.c_int, [ctypes.c_void_p]),
        "pmc_session_stop": (ctypes.c_int, [ctypes.c_void_p]),
        "pmc_session_reading_count": (ctypes.c_size_t, [ctypes.c_void_p]),
        "pmc_session_read": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t,
                                            ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint64)]),
        "pmc_session_reading_info": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ReadingInfo)]),
        "pmc_session_run_workload": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(WorkloadRun)]),
        "pmc_regions_init": (ctypes.c_int, [ctypes.POINTER(Config), ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t]),
        "pmc_region_begin": (ctypes.c_int, [ctypes.c_char_p]),
        "pmc_region_end": (ctypes.c_int, [ctypes.c_char_p]),
        "pmc_regions_run_workload": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(WorkloadRun)]),
        "pmc_regions_write": (ctypes.c_int, [ctypes.c_char_p]),
    }
    for name, (restype, argtypes) in sig.items():
        f = getattr(lib, name)
        f.restype = restype
        f.argtypes = argtypes
    return lib


def pentium_iii():
    cfg = Config()
    cfg.struct_size = ctypes.sizeof(Config)
    cfg.cpu = b"pentium-iii"  # a bundled CPUID dump, by name
    return cfg


class CApiThroughCtypes(unittest.TestCase):
    def open_hal(self):
        hal = ctypes.c_void_p()
        cfg = pentium_iii()
        self.assertEqual(LIB.pmc_hal_open(ctypes.byref(cfg), ctypes.byref(hal)), PMC_OK, LIB.pmc_last_error())
        self.addCleanup(LIB.pmc_hal_close, hal)
        return hal

    def open_session(self, hal, *events):
        s = ctypes.c_void_p()
        self.assertEqual(LIB.pmc_session_open(hal, None, ctypes.byref(s)), PMC_OK, LIB.pmc_last_error())
        self.addCleanup(LIB.pmc_session_close, s)
        for e in events:
            self.assertEqual(LIB.pmc_session_add(s, e.encode()), PMC_OK, LIB.pmc_last_error())
        return s

    def test_probe(self):
        hal = self.open_hal()
        self.assertEqual(LIB.pmc_version_string(), b"0.1.0")
        self.assertEqual(LIB.pmc_hal_backend(hal), b"p6")
        self.assertEqual(LIB.pmc_hal_cpu(hal), b"GenuineIntel family 6 model 8 stepping 3")
        self.assertIn(b"Pentium III", LIB.pmc_hal_reason(hal))
        names = {}
        for i in range(LIB.pmc_hal_event_count(hal)):
            info = EventInfo()
            info.struct_size = ctypes.sizeof(EventInfo)
            self.assertEqual(LIB.pmc_hal_event(hal, i, ctypes.byref(info)), PMC_OK)
            names[info.name] = (info.pmu, info.generic)
        self.assertEqual(names[b"INST_RETIRED"], (b"p6", b"instructions"))
        self.assertEqual(names[b"task-clock"][0], b"hal")

    def test_counts_a_workload_by_hand(self):
        hal = self.open_hal()
        s = self.open_session(hal, "instructions", "INST_RETIRED:u")
        n = LIB.pmc_session_reading_count(s)
        self.assertEqual(n, 2)
        run = WorkloadRun()
        self.assertEqual(LIB.pmc_session_run_workload(s, b"p6-demo", ctypes.byref(run)), PMC_OK, LIB.pmc_last_error())
        values = (ctypes.c_uint64 * n)()
        enabled = (ctypes.c_uint64 * n)()
        running = (ctypes.c_uint64 * n)()
        self.assertEqual(LIB.pmc_session_read(s, values, n, enabled, running), PMC_OK, LIB.pmc_last_error())
        self.assertEqual(list(values), [7_900_000, 7_550_000])
        self.assertEqual(list(enabled), list(running))
        info = ReadingInfo()
        info.struct_size = ctypes.sizeof(ReadingInfo)
        self.assertEqual(LIB.pmc_session_reading_info(s, 1, ctypes.byref(info)), PMC_OK)
        self.assertEqual(info.event, b"INST_RETIRED:u")
        self.assertEqual(info.generic, b"instructions")
        self.assertEqual(info.cpu, -1)
        # Values only (no times): NULL pointers are allowed.
        self.assertEqual(LIB.pmc_session_read(s, values, n, None, None), PMC_OK)
        self.assertEqual(values[0], 7_900_000)

    def test_an_error_has_its_code_and_message(self):
        hal = self.open_hal()
        s = self.open_session(hal, "instructions")
        self.assertEqual(LIB.pmc_session_add(s, b"L2_LD:NOT_A_MASK"), PMC_ERR_UNIT_MASK)
        self.assertEqual(LIB.pmc_last_status(), PMC_ERR_UNIT_MASK)
        self.assertEqual(LIB.pmc_status_name(PMC_ERR_UNIT_MASK), b"unit_mask")
        message = LIB.pmc_last_error().decode()
        self.assertIn("L2_LD:NOT_A_MASK", message)
        self.assertIn("NOT_A_MASK", message)
        self.assertNotIn("\n", message)
        self.assertEqual(LIB.pmc_session_add(s, b"NO_SUCH_EVENT"), PMC_ERR_NOT_FOUND)
        self.assertIn("NO_SUCH_EVENT", LIB.pmc_last_error().decode())
        # Too small a buffer for the values.
        values = (ctypes.c_uint64 * 1)()
        self.assertEqual(LIB.pmc_session_read(s, values, 0, None, None), PMC_ERR_INVALID_ARGUMENT)

    def test_regions_nest_and_aggregate(self):
        cfg = pentium_iii()
        events = (ctypes.c_char_p * 1)(b"instructions")
        self.assertEqual(LIB.pmc_regions_init(ctypes.byref(cfg), events, 1), PMC_OK, LIB.pmc_last_error())
        # outer { p6-demo; inner { p6-demo } }, then inner { p6-demo } alone.
        for call in [(LIB.pmc_region_begin, b"outer"), (LIB.pmc_regions_run_workload, b"p6-demo"),
                     (LIB.pmc_region_begin, b"inner"), (LIB.pmc_regions_run_workload, b"p6-demo"),
                     (LIB.pmc_region_end, b"inner"), (LIB.pmc_region_end, b"outer"),
                     (LIB.pmc_region_begin, b"inner"), (LIB.pmc_regions_run_workload, b"p6-demo"),
                     (LIB.pmc_region_end, b"inner")]:
            args = (call[1],) if call[0] is not LIB.pmc_regions_run_workload else (call[1], None)
            self.assertEqual(call[0](*args), PMC_OK, LIB.pmc_last_error())
        path = os.path.join(SCRATCH, "ctypes-regions.json")
        self.assertEqual(LIB.pmc_regions_write(path.encode()), PMC_OK, LIB.pmc_last_error())
        with open(path) as f:
            report = json.load(f)
        self.assertEqual(report["format"], "pmchal-regions")
        self.assertEqual(report["backend"], "p6")
        self.assertEqual(report["events"], ["instructions"])
        regions = {r["name"]: r for r in report["regions"]}
        # outer: one call holding two runs of p6-demo (its own and inner's): 2 x 7,900,000.
        outer = regions["outer"]
        self.assertEqual(outer["calls"], 1)
        self.assertEqual(outer["threads"], 1)
        self.assertEqual(outer["events"][0], {"event": "instructions", "sum": 15_800_000, "min": 15_800_000,
                                              "max": 15_800_000})
        # inner: two calls of one run each.
        inner = regions["inner"]
        self.assertEqual(inner["calls"], 2)
        self.assertEqual(inner["events"][0], {"event": "instructions", "sum": 15_800_000, "min": 7_900_000,
                                              "max": 7_900_000})


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: test_capi_ctypes.py LIBPMCHAL SCRATCH_DIR")
    LIB = load(sys.argv[1])
    SCRATCH = sys.argv[2]
    unittest.main(argv=[sys.argv[0], "-v"])
