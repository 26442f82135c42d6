#define BOOST_TEST_MODULE emulate_events
#include <boost/test/unit_test.hpp>

// The catalog events emulated counting maps per model (docs/emulation.md, "Catalog events, per
// model"; the data: sim/models/<model>/emulation-events.toml): which signals, named after the
// catalog events, come out of the rules for a CPU and its caches, which events are refused and
// why, and the segments one source line's activity becomes. Expected values are the catalogs'
// own names and the cachegrind quantities each event is documented to stand for (the table in
// docs/emulation.md), worked by hand; never the output of the code under test.

#include <pmc/pmc.hpp>

#include "model_counting.hpp"
#include "support/emulate.hpp"
#include "text.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using pmc::Quantity;
using pmc_test::bundled;
using pmc_test::emulate_data;
using pmc_test::open_hal;
using Terms = std::vector<Quantity>;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const pmc::EmulatedSignal* find_signal(const pmc::SignalMap& map, const std::string& name) {
  for (const auto& s : map.signals)
    if (s.signal == name) return &s;
  return nullptr;
}

const pmc::WithheldSignal* find_withheld(const pmc::SignalMap& map, const std::string& name) {
  for (const auto& s : map.withheld)
    if (s.signal == name) return &s;
  return nullptr;
}

struct Mapped {
  pmc::Hal hal;
  pmc::SignalMap map;
  explicit Mapped(const std::string& dump) : hal(open_hal(dump)), map(pmc::emulated_signals(hal, pmc::cache_hierarchy(hal.cpu()))) {}
  // The signal named after the event, with exactly these quantities, marked as an event's own.
  [[nodiscard]] bool maps(const std::string& event, const Terms& terms) const {
    const pmc::EmulatedSignal* s = find_signal(map, event);
    return s && s->event_signal && s->terms == terms && !s->meaning.empty() && !s->note.empty();
  }
  [[nodiscard]] std::string refusal(const std::string& event) const {
    const pmc::EmulationVerdict v = pmc::check_emulated_event(hal, map, event);
    BOOST_TEST(!v.producible, event);
    return v.reason;
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(rules)

BOOST_AUTO_TEST_CASE(skylake_events_become_signals_named_after_them) {
  // intel-skl has no cache leaves: the default hierarchy, whose last level stands for an L2.
  const Mapped skl(bundled("intel-skl.txt"));
  BOOST_TEST(skl.map.model == "archperf");
  BOOST_TEST(skl.maps("MEM_INST_RETIRED.ALL_LOADS", {Quantity::Dr}));
  BOOST_TEST(skl.maps("MEM_INST_RETIRED.ALL_STORES", {Quantity::Dw}));
  BOOST_TEST(skl.maps("MEM_INST_RETIRED.ANY", (Terms{Quantity::Dr, Quantity::Dw})));
  BOOST_TEST(skl.maps("L1D.REPLACEMENT", (Terms{Quantity::D1mr, Quantity::D1mw})));
  BOOST_TEST(skl.maps("MEM_LOAD_RETIRED.L1_MISS", {Quantity::D1mr}));
  BOOST_TEST(skl.maps("MEM_LOAD_RETIRED.L2_MISS", {Quantity::DLmr}));  // the last level is the L2 here
  BOOST_TEST(skl.maps("ICACHE_64B.IFTAG_MISS", {Quantity::I1mr}));
  BOOST_TEST(skl.maps("INST_RETIRED.ANY_P", {Quantity::Ir}));
  BOOST_TEST(skl.maps("BR_INST_RETIRED.ALL_BRANCHES", (Terms{Quantity::Bc, Quantity::Bi})));
  BOOST_TEST(skl.maps("BR_INST_RETIRED.CONDITIONAL", {Quantity::Bc}));
  BOOST_TEST(skl.maps("BR_MISP_RETIRED.ALL_BRANCHES", (Terms{Quantity::Bcm, Quantity::Bim})));
  BOOST_TEST(skl.maps("BR_MISP_RETIRED.CONDITIONAL", {Quantity::Bcm}));
  // The shared notes of data/emulation.toml.
  BOOST_TEST(contains(find_signal(skl.map, "MEM_INST_RETIRED.ALL_LOADS")->note, "read-modify-write"));
  BOOST_TEST(contains(find_signal(skl.map, "L1D.REPLACEMENT")->note, "simulated caches"));
  // Other catalogs' names are not this CPU's: Ice Lake's COND, Sandy Bridge's ICACHE.MISSES.
  BOOST_TEST(!find_signal(skl.map, "BR_INST_RETIRED.COND"));
  BOOST_TEST(!find_signal(skl.map, "ICACHE.MISSES"));
  // L3 misses with a two-level simulation: withheld, with the reason.
  BOOST_TEST(!find_signal(skl.map, "MEM_LOAD_RETIRED.L3_MISS"));
  const pmc::WithheldSignal* l3 = find_withheld(skl.map, "MEM_LOAD_RETIRED.L3_MISS");
  BOOST_REQUIRE(l3);
  BOOST_TEST(contains(l3->reason, "L3 misses"));
  BOOST_TEST(contains(skl.refusal("MEM_LOAD_RETIRED.L3_MISS"), "L3 misses"));
  // The model's own signals stay, not marked as an event's.
  const pmc::EmulatedSignal* inst = find_signal(skl.map, "instructions");
  BOOST_REQUIRE(inst);
  BOOST_TEST(!inst->event_signal);
}

BOOST_AUTO_TEST_CASE(an_l3_cpu_maps_l3_misses_and_withholds_l2_misses) {
  // skylake-leaf4: leaf 4 gives an L3 (level 3) with the L2 between.
  const Mapped sky(emulate_data("skylake-leaf4.txt"));
  BOOST_TEST(sky.maps("MEM_LOAD_RETIRED.L3_MISS", {Quantity::DLmr}));
  BOOST_TEST(!find_signal(sky.map, "MEM_LOAD_RETIRED.L2_MISS"));
  const std::string why = sky.refusal("MEM_LOAD_RETIRED.L2_MISS");
  BOOST_TEST(contains(why, "MEM_LOAD_RETIRED.L2_MISS"));
  BOOST_TEST(contains(why, "its L3, with an L2 between"));
}

BOOST_AUTO_TEST_CASE(each_intel_generation_by_its_own_names) {
  const Mapped nhm(bundled("intel-nhm-ep.txt"));
  BOOST_TEST(nhm.maps("MEM_INST_RETIRED.LOADS", {Quantity::Dr}));
  BOOST_TEST(nhm.maps("MEM_INST_RETIRED.STORES", {Quantity::Dw}));
  BOOST_TEST(nhm.maps("L1D.REPL", (Terms{Quantity::D1mr, Quantity::D1mw})));
  const Mapped snb(bundled("intel-snb.txt"));
  BOOST_TEST(snb.maps("MEM_UOPS_RETIRED.ALL_LOADS", {Quantity::Dr}));
  BOOST_TEST(snb.maps("ICACHE.MISSES", {Quantity::I1mr}));
  const Mapped icl(bundled("intel-icl.txt"));
  BOOST_TEST(icl.maps("BR_INST_RETIRED.COND", {Quantity::Bc}));
  BOOST_TEST(icl.maps("BR_INST_RETIRED.INDIRECT", {Quantity::Bi}));
  BOOST_TEST(icl.maps("BR_MISP_RETIRED.INDIRECT", {Quantity::Bim}));
  BOOST_TEST(!find_signal(icl.map, "BR_INST_RETIRED.CONDITIONAL"));
  const Mapped glm(bundled("intel-glm.txt"));  // Goldmont (an Atom)
  BOOST_TEST(glm.maps("BR_INST_RETIRED.JCC", {Quantity::Bc}));
  BOOST_TEST(glm.maps("BR_MISP_RETIRED.JCC", {Quantity::Bcm}));
  BOOST_TEST(glm.maps("MEM_UOPS_RETIRED.ALL_STORES", {Quantity::Dw}));
}

BOOST_AUTO_TEST_CASE(zen_1_to_5_events_and_unit_masks) {
  for (const char* dump : {"amd-zen1.txt", "amd-zen2.txt", "amd-zen3.txt", "amd-zen4-genoa.txt", "amd-zen5.txt"}) {
    const Mapped zen(bundled(dump));
    BOOST_TEST(zen.map.model == "amd", dump);
    BOOST_TEST(zen.maps("LS_DISPATCH:LD_DISPATCH", {Quantity::Dr}), dump);
    BOOST_TEST(zen.maps("LS_DISPATCH:STORE_DISPATCH", {Quantity::Dw}), dump);
    BOOST_TEST(zen.maps("RETIRED_INDIRECT_BRANCH_INSTRUCTIONS_MISPREDICTED", {Quantity::Bim}), dump);
    // Valgrind counts a read-modify-write as a read: the load-op-store mask cannot be told apart
    // (the name given in lower case, as the catalog's lookups allow).
    BOOST_TEST(contains(zen.refusal("ls_dispatch:ld_st_dispatch"), "read-modify-write"), dump);
    BOOST_TEST(contains(zen.refusal("INSTRUCTION_CACHE_REFILLS_FROM_L2"), "between the L1 and the last level"), dump);
  }
  const Mapped zen1(bundled("amd-zen1.txt"));
  BOOST_TEST(zen1.maps("RETIRED_CONDITIONAL_BRANCH_INSTRUCTIONS_MISPREDICTED", {Quantity::Bcm}));
  const Mapped zen3(bundled("amd-zen3.txt"));
  BOOST_TEST(zen3.maps("RETIRED_INDIRECT_BRANCH_INSTRUCTIONS", {Quantity::Bi}));
  BOOST_TEST(zen3.maps("IC_TAG_HIT_MISS:IC_MISS", {Quantity::I1mr}));
  BOOST_TEST(zen3.maps("MAB_ALLOCATION_BY_TYPE:LOADS", {Quantity::D1mr}));
  BOOST_TEST(contains(zen3.refusal("RETIRED_TAKEN_BRANCH_INSTRUCTIONS"), "direction"));
  // Zen 1 has no event CCH: no such signal there.
  BOOST_TEST(!find_signal(zen1.map, "RETIRED_INDIRECT_BRANCH_INSTRUCTIONS"));
}

BOOST_AUTO_TEST_CASE(models_without_event_rules_get_none) {
  const Mapped p6(bundled("pentium-iii.txt"));
  BOOST_TEST(p6.map.refused.empty());
  BOOST_TEST(std::none_of(p6.map.signals.begin(), p6.map.signals.end(),
                          [](const pmc::EmulatedSignal& s) { return s.event_signal; }));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(refusals)

BOOST_AUTO_TEST_CASE(what_cachegrind_cannot_answer_is_refused_with_its_reason) {
  const Mapped skl(bundled("intel-skl.txt"));
  BOOST_TEST(contains(skl.refusal("BR_INST_RETIRED.NEAR_TAKEN"), "does not record a branch's direction"));
  BOOST_TEST(contains(skl.refusal("MEM_LOAD_RETIRED.L2_HIT"), "the L1 caches and the last level only"));
  BOOST_TEST(contains(skl.refusal("MEM_LOAD_RETIRED.L1_HIT"), "never subtracts"));
  BOOST_TEST(contains(skl.refusal("BR_MISP_RETIRED.NEAR_CALL"), "indirect call from an indirect jump"));
  BOOST_TEST(contains(skl.refusal("ICACHE_64B.IFTAG_HIT"), "hits"));
  // Not in the rules: the model's probes decide (uops are no activity the emulation produces).
  BOOST_TEST(contains(skl.refusal("UOPS_ISSUED.ANY"), "none of the activity"));
}

BOOST_AUTO_TEST_CASE(one_message_names_every_refused_event) {
  const Mapped skl(bundled("intel-skl.txt"));
  try {
    pmc::require_emulated_events(skl.hal, skl.map, {"INST_RETIRED.ANY", "MEM_LOAD_RETIRED.L2_HIT",
                                                    "BR_INST_RETIRED.NEAR_TAKEN"});
    BOOST_FAIL("refused events accepted");
  } catch (const pmc::Error& e) {
    const std::string m = e.what();
    BOOST_TEST(static_cast<int>(e.kind()) == static_cast<int>(pmc::errc::not_supported));
    BOOST_TEST(contains(m, "cannot emulate MEM_LOAD_RETIRED.L2_HIT: it counts hits, misses or fills at a cache level"));
    BOOST_TEST(contains(m, "; cannot emulate BR_INST_RETIRED.NEAR_TAKEN: it tells taken from not-taken branches"));
    BOOST_TEST(!contains(m, "cannot emulate INST_RETIRED.ANY:"));
  }
}

BOOST_AUTO_TEST_CASE(a_mapped_event_counts_its_own_signal_or_says_the_model_does_not) {
  // Never a silent 0: either the model counts the event's signal once per occurrence, or the
  // event is refused naming the signal and the quantities it stands for.
  const Mapped skl(bundled("intel-skl.txt"));
  for (const char* e : {"MEM_INST_RETIRED.ALL_LOADS", "mem_inst_retired.all_stores:u", "L1D.REPLACEMENT"}) {
    const pmc::EmulationVerdict v = pmc::check_emulated_event(skl.hal, skl.map, e);
    if (v.producible) {
      BOOST_TEST(v.reads.size() == 1u, e);
      BOOST_TEST(v.reads.at(0).second == 1u, e);
      BOOST_TEST(pmc::detail::iequal(v.reads.at(0).first, std::string(e).substr(0, std::string(e).find(':'))), e);
    } else {
      BOOST_TEST(contains(v.reason, "the archperf device model counts nothing"), e << ": " << v.reason);
    }
  }
  // An event the model counts from its own signals keeps them (never both: no double count).
  const pmc::EmulationVerdict inst = pmc::check_emulated_event(skl.hal, skl.map, "INST_RETIRED.ANY");
  BOOST_TEST(inst.producible);
  BOOST_TEST(inst.reads.size() == 1u);
  BOOST_TEST(inst.reads.at(0).first == "instructions");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(segments)

BOOST_AUTO_TEST_CASE(an_event_is_fed_its_own_signal_alone_as_a_staircase) {
  const Mapped skl(bundled("intel-skl.txt"));
  // What an event reading the loads signal gets: that signal only, not the model's others.
  pmc::EmulatedEvent loads;
  loads.event = "MEM_INST_RETIRED.ALL_LOADS";
  loads.reads = {{"MEM_INST_RETIRED.ALL_LOADS", 1}};
  const auto used = pmc::detail::signals_read(skl.map, loads);
  BOOST_REQUIRE(used.size() == 1u);
  BOOST_TEST(used[0]->signal == "MEM_INST_RETIRED.ALL_LOADS");
  // A line with Dr 10, D1mr 3, D1mw 1 (and instructions, which this event does not read), for
  // the loads and the L1D replacement signals: totals 10 and 3 + 1 = 4, so 4 cycles with both
  // once per cycle, then 6 with the loads alone.
  pmc::Activity a;
  a[Quantity::Ir] = 99;
  a[Quantity::Dr] = 10;
  a[Quantity::D1mr] = 3;
  a[Quantity::D1mw] = 1;
  const pmc::EmulatedSignal* repl = find_signal(skl.map, "L1D.REPLACEMENT");
  BOOST_REQUIRE(repl);
  pmc::Workload w;
  pmc::detail::line_segments({used[0], repl}, a, w);
  BOOST_REQUIRE(w.size() == 2u);
  BOOST_TEST(w.segment(0).cycles == 4u);
  BOOST_TEST(w.segment(0).per_cycle("MEM_INST_RETIRED.ALL_LOADS") == 1u);
  BOOST_TEST(w.segment(0).per_cycle("L1D.REPLACEMENT") == 1u);
  BOOST_TEST(w.segment(1).cycles == 6u);
  BOOST_TEST(w.segment(1).per_cycle("MEM_INST_RETIRED.ALL_LOADS") == 1u);
  BOOST_TEST(w.segment(1).per_cycle("L1D.REPLACEMENT") == 0u);
  BOOST_TEST((w.segment(0).mode == pmc::Mode::user && w.segment(1).mode == pmc::Mode::user));
  BOOST_TEST(w.total("MEM_INST_RETIRED.ALL_LOADS") == 10u);
  BOOST_TEST(w.total("L1D.REPLACEMENT") == 4u);
  BOOST_TEST(w.total("instructions") == 0u);
  // A line without loads or misses: no segment.
  pmc::Activity none;
  none[Quantity::Ir] = 5;
  pmc::detail::line_segments({used[0], repl}, none, w);
  BOOST_TEST(w.empty());
}

BOOST_AUTO_TEST_SUITE_END()
