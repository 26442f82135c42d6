#!/usr/bin/env python3
"""Writes the catalog events the emulation maps (docs/emulation.md, "Catalog events, per model"):
sim/models/archperf/emulation-events.toml from the Intel core catalogs
(backends/archperf/events/cpu/*.toml) and sim/models/amd/emulation-events.toml from the AMD Zen
catalogs (backends/amd/events/: zen1.toml to zen5.toml, perf-zen1.toml to perf-zen5.toml).

The mapping is by exact catalog name: the tables below say, per event name (Intel) or event and
unit mask (AMD), which cachegrind quantities drive it, or why it cannot be emulated. For each
catalog the script writes the entries whose names that catalog has, so the data names only events
that exist. Run it after the catalogs change (scripts/regen-catalogs.sh) and check in the output:

    python3 scripts/gen_emulation_events.py            # rewrites both files
    python3 scripts/gen_emulation_events.py --check    # exits 1 when they are out of date
"""
import argparse
import pathlib
import re
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Refusal texts, by name (the output's [reasons]; an entry of `cannot` names one).
REASONS = {
    "level": "it counts hits, misses or fills at a cache level between the L1 and the last level (or by where a "
             "fill came from), and Valgrind simulates the L1 caches and the last level only",
    "hit": "it counts cache hits, a difference (references minus misses), and a rule adds cachegrind's quantities "
           "up, never subtracts them",
    "taken": "it tells taken from not-taken branches, and Valgrind does not record a branch's direction",
    "kind": "it counts a kind of branch Valgrind does not count or tell apart (it counts conditional branches and "
            "indirect jumps and calls, not direct jumps and calls, returns or far branches, and does not tell an "
            "indirect call from an indirect jump)",
    "rmw": "it tells read-modify-write operations apart, and Valgrind counts one as a read only",
    "fetch": "it counts instruction fetches or fetch blocks, and Valgrind counts instructions, not the front end's "
             "fetches",
}

# A mapped event: quantities, meaning, and how it differs (a shared note of data/emulation.toml or
# its own text), and an optional condition on the simulated caches.
def rule(quantities, meaning, shared_note=None, note=None, when=None):
    r = {"quantities": quantities, "meaning": meaning}
    if shared_note:
        r["shared_note"] = shared_note
    if note:
        r["note"] = note
    if when:
        r["when"] = when
    return r


LOADS = rule(["Dr"], "retired loads (data reads)", "memory")
STORES = rule(["Dw"], "retired stores (data writes)", "memory")
MEMREFS = rule(["Dr", "Dw"], "retired loads and stores (data references)", "memory")
L1D_MISSES = rule(["D1mr", "D1mw"], "lines brought into the L1 data cache (its read and write misses)", "cache")
LOAD_L1_MISS = rule(["D1mr"], "retired loads that missed the L1 data cache", "cache")
LOAD_LL_MISS_L3 = rule(["DLmr"], "retired loads that missed the L3 (the last level)", "cache", when="ll_is_l3")
LOAD_LL_MISS_L2 = rule(["DLmr"], "retired loads that missed the L2 (the last level)", "cache", when="ll_is_l2")
ICACHE_MISS = rule(["I1mr"], "instruction fetches that missed the L1 instruction cache", "cache")
INSTRUCTIONS = rule(["Ir"], "retired instructions", "instruction")
BRANCHES = rule(["Bc", "Bi"], "retired conditional branches, indirect jumps and calls", "branch")
MISPREDICTS = rule(["Bcm", "Bim"], "mispredicted conditional branches, indirect jumps and calls", "mispredict")
COND = rule(["Bc"], "retired conditional branches", "conditional")
COND_MISP = rule(["Bcm"], "mispredicted conditional branches", "mispredict")
INDIRECT = rule(["Bi"], "retired indirect jumps and calls (returns excluded)", "indirect")
INDIRECT_MISP = rule(["Bim"], "mispredicted indirect jumps and calls (returns excluded)", "mispredict")

# Intel core catalogs: exact names (regular expressions, matched whole) to a rule or a reason.
INTEL = [
    (r"INST_RETIRED\.(ANY|ANY_P|PREC_DIST)", INSTRUCTIONS),
    (r"MEM_INST_RETIRED\.(ALL_LOADS|LOADS)|MEM_UOPS_RETIRED\.ALL_LOADS", LOADS),
    (r"MEM_INST_RETIRED\.(ALL_STORES|STORES)|MEM_UOPS_RETIRED\.ALL_STORES", STORES),
    (r"MEM_INST_RETIRED\.ANY|MEM_UOPS_RETIRED\.ALL", MEMREFS),
    (r"L1D\.(REPLACEMENT|REPL)", L1D_MISSES),
    (r"MEM_LOAD_(UOPS_)?RETIRED\.(L1_MISS|L1D_MISS)", LOAD_L1_MISS),
    (r"MEM_LOAD_(UOPS_)?RETIRED\.(L3_MISS|LLC_MISS)", LOAD_LL_MISS_L3),
    (r"MEM_LOAD_(UOPS_)?RETIRED\.L2_MISS", LOAD_LL_MISS_L2),
    (r"ICACHE\.MISSES|ICACHE_64B\.IFTAG_MISS", ICACHE_MISS),
    (r"BR_INST_RETIRED\.(ALL_BRANCHES|ALL_BRANCHES_PEBS)", BRANCHES),
    (r"BR_MISP_RETIRED\.(ALL_BRANCHES|ALL_BRANCHES_PEBS)", MISPREDICTS),
    (r"BR_INST_RETIRED\.(CONDITIONAL|COND|JCC)", COND),
    (r"BR_MISP_RETIRED\.(CONDITIONAL|COND|JCC)", COND_MISP),
    (r"BR_INST_RETIRED\.(INDIRECT|NON_RETURN_IND)", INDIRECT),
    (r"BR_MISP_RETIRED\.(INDIRECT|NON_RETURN_IND)", INDIRECT_MISP),
    (r"MEM_LOAD_(UOPS_)?(LLC_HIT_|L3_HIT_|L3_MISS_|MISC_)?RETIRED\..*(L2|L3|LLC|FB|XSNP|HITM|SNOOP|DRAM|PMM|REMOTE|LOCAL).*|"
     r"L2_RQSTS\..*|L2_LINES_(IN|OUT)\..*|OFFCORE_REQUESTS\..*|MEM_LOAD_L3_MISS_RETIRED\..*|"
     r"MEM_LOAD_L2_MISS_RETIRED\..*|LONGEST_LAT_CACHE\.(MISS|REFERENCE)_?.+", "level"),
    (r"MEM_LOAD_(UOPS_)?RETIRED\.(L1_HIT|L1D_HIT|HIT_LFB)|ICACHE(_64B)?\.(HIT|IFTAG_HIT)", "hit"),
    (r"BR_(INST|MISP)_RETIRED\..*(TAKEN|NTAKEN|NOT_TAKEN).*", "taken"),
    (r"BR_(INST|MISP)_RETIRED\.(NEAR_CALL|NEAR_RETURN|FAR_BRANCH|REL_CALL|RET|RETURN|CALL|IND_CALL|INDIRECT_CALL|"
     r"INDIRECT_JMP|REL_JMP|NEAR_JMP|NEAR_DIRECT_JMP|NEAR_DIRECT_CALL|NEAR_INDIRECT_JMP|NEAR_INDIRECT_CALL|"
     r"NEAR_INDIRECT|RETURN_PS)", "kind"),
    (r"ICACHE\.ACCESSES|ICACHE_64B\.IFTAG_STALL|ICACHE_16B\..*", "fetch"),
]

# AMD Zen catalogs: event (or event:MASK) names to a rule or a reason.
AMD = [
    (r"LS_DISPATCH:LD_DISPATCH", rule(["Dr"], "dispatched loads", note=(
        "Valgrind counts a read-modify-write as a read, the CPU as a load-op-store dispatch (LD_ST_DISPATCH), "
        "not here; the CPU also counts ops dispatched on a mispredicted path"))),
    (r"LS_DISPATCH:STORE_DISPATCH", rule(["Dw"], "dispatched stores", note=(
        "a read-modify-write counts as a read in Valgrind, as a load-op-store dispatch on the CPU: neither here; "
        "the CPU also counts ops dispatched on a mispredicted path"))),
    (r"all_data_cache_accesses", rule(["Dr", "Dw"], "dispatched loads and stores (data cache accesses)", note=(
        "a read-modify-write counts once in both; the CPU also counts ops dispatched on a mispredicted path"))),
    (r"LS_DISPATCH:LD_ST_DISPATCH", "rmw"),
    (r"RETIRED_INDIRECT_BRANCH_INSTRUCTIONS", INDIRECT),
    (r"RETIRED_INDIRECT_BRANCH_INSTRUCTIONS_MISPREDICTED", INDIRECT_MISP),
    (r"RETIRED_CONDITIONAL_BRANCH_INSTRUCTIONS_MISPREDICTED", COND_MISP),
    (r"IC_TAG_HIT_MISS:IC_MISS|ic_tag_hit_miss\.instruction_cache_miss", rule(
        ["I1mr"], "instruction cache misses", "cache")),
    (r"MAB_ALLOCATION_BY_TYPE:LOADS", rule(["D1mr"], "miss address buffers allocated for loads (L1D read misses)",
                                           "cache")),
    (r"MAB_ALLOCATION_BY_TYPE:STORES", rule(["D1mw"], "miss address buffers allocated for stores (L1D write misses)",
                                            "cache")),
    (r"MAB_ALLOCATION_BY_TYPE:LS|ls_mab_alloc\.load_store_allocations", rule(
        ["D1mr", "D1mw"], "miss address buffers allocated for loads and stores (L1D misses)", "cache")),
    (r"ls_dmnd_fills_from_sys\.all", rule(["D1mr", "D1mw"], "demand fills of the L1 data cache (its misses)",
                                          "cache")),
    (r"INSTRUCTION_CACHE_REFILLS_FROM_(L2|SYSTEM)|DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM(:.*)?|"
     r"ANY_DATA_CACHE_FILLS_FROM_SYSTEM(:.*)?|ls_(dmnd|any)_fills_from_sys\..*|l2_.*|REQUESTS_TO_L2_GROUP1(:.*)?|"
     r"CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS(:.*)?|L2_PREFETCH_.*", "level"),
    (r"IC_TAG_HIT_MISS:IC_HIT|ic_tag_hit_miss\.instruction_cache_hit", "hit"),
    (r"RETIRED_TAKEN_BRANCH_INSTRUCTIONS(_MISPREDICTED)?|RETIRED_BRANCH_MISPREDICTED_DIRECTION_MISMATCH", "taken"),
    (r"RETIRED_NEAR_RETURNS(_MISPREDICTED)?|RETIRED_FAR_CONTROL_TRANSFERS|RETIRED_UNCONDITIONAL_.*", "kind"),
    (r"IC_TAG_HIT_MISS(:ALL_IC_ACCESS)?|ic_tag_hit_miss\.all_instruction_cache_accesses|32_BYTE_INSTRUCTION_CACHE_.*",
     "fetch"),
]


def names(catalog):
    """Every event name of a catalog, and event:MASK for each unit mask."""
    out = []
    for e in catalog.get("event", []):
        out.append(e["name"])
        group = e.get("umasks")
        for m in group.get("masks", []) if isinstance(group, dict) else []:
            out.append(f'{e["name"]}:{m["name"]}')
    return list(dict.fromkeys(out))


def entries(catalog, table):
    mapped, cannot = [], []
    for name in names(catalog):
        for pattern, what in table:
            if re.fullmatch(pattern, name):
                (cannot if isinstance(what, str) else mapped).append((name, what))
                break
    return mapped, cannot


def q(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def emit(header, catalogs, table):
    lines = [header, "", "[reasons]"]
    lines += [f"{k} = {q(v)}" for k, v in REASONS.items()]
    count_m = count_c = 0
    for path in catalogs:
        cat = tomllib.loads(path.read_text())
        mapped, cannot = entries(cat, table)
        if not mapped and not cannot:
            continue
        count_m += len(mapped)
        count_c += len(cannot)
        lines += ["", "[[catalog]]", f"file = {q(path.name)}", f"# {cat.get('description', '')}", "events = ["]
        for name, r in mapped:
            fields = [f"name = {q(name)}", "quantities = [" + ", ".join(q(x) for x in r["quantities"]) + "]",
                      f"meaning = {q(r['meaning'])}"]
            for key in ("shared_note", "note", "when"):
                if key in r:
                    fields.append(f"{key} = {q(r[key])}")
            lines.append("  { " + ", ".join(fields) + " },")
        lines.append("]")
        lines.append("cannot = [")
        for name, reason in cannot:
            lines.append(f"  {{ name = {q(name)}, reason = {q(reason)} }},")
        lines.append("]")
    return "\n".join(lines) + "\n", count_m, count_c


HEADER = """# Generated by scripts/gen_emulation_events.py from {source};
# do not edit: change the script's tables and rerun it. The catalog events emulated counting maps on the {model} model
# (docs/emulation.md, "Catalog events, per model"); read by hal/src/emulate/rules.cpp, installed as
# share/pmchal/emulation/{model}-events.toml.
#
# [reasons]: NAME = "text", why an event cannot be emulated (a `cannot` entry names one).
# [[catalog]]: file (the catalog file's name), events and cannot. Each entry of `events` is the
# signal of one catalog event, named exactly as the event (with ":MASK" for a unit mask): the
# device model counts a signal of that name for that event only. Its keys are those of a
# [[signal]] rule (data/emulation.toml): quantities, meaning, note or shared_note, when
# ("ll_is_l2", "ll_is_l3"). Each entry of `cannot` names an event that cannot be emulated and the
# reason. Events in neither list are checked on the model like any other event."""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when the checked-in files differ")
    args = ap.parse_args()
    intel = sorted(p for p in (ROOT / "backends/archperf/events/cpu").glob("*.toml") if not p.name.startswith("index"))
    amd = sorted((ROOT / "backends/amd/events").glob("zen*.toml")) + sorted(
        (ROOT / "backends/amd/events").glob("perf-zen*.toml"))
    jobs = [
        (ROOT / "sim/models/archperf/emulation-events.toml",
         HEADER.format(source="backends/archperf/events/cpu/*.toml", model="archperf"), intel, INTEL),
        (ROOT / "sim/models/amd/emulation-events.toml",
         HEADER.format(source="the Zen catalogs of backends/amd/events/", model="amd"), amd, AMD),
    ]
    stale = False
    for out, header, catalogs, table in jobs:
        text, m, c = emit(header, catalogs, table)
        if args.check:
            if not out.exists() or out.read_text() != text:
                print(f"{out.relative_to(ROOT)} is out of date: rerun scripts/gen_emulation_events.py", file=sys.stderr)
                stale = True
        else:
            out.write_text(text)
            print(f"{out.relative_to(ROOT)}: {m} events mapped, {c} refused with a reason")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
