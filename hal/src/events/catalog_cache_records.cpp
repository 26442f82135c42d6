// The records of a cache file (catalog_cache.hpp): each structure of a catalog as bytes and back,
// as this machine lays them out (the layout line in every key names it). The shape section is
// the catalog but its events: the register format, CPU tags, files, modifiers, PMU description,
// extra registers.
#include "catalog_cache.hpp"
#include "catalog_cache_file.hpp"

#include <pmc/event.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace pmc::detail {

// The layout the cache files were written with: a change of the structures changes the key.
std::string layout_line() {
  return fmt::format("pmc-catalog 7 {} {} {} {} {} {} {} {} {}\n", sizeof(EventDef), sizeof(UnitMaskGroup),
                     sizeof(UnitMask), sizeof(ModifierDef), sizeof(PmuDescription), sizeof(ProbeRule),
                     sizeof(CounterGroup), sizeof(BitField), sizeof(ExtraRegDef));
}

void put(Writer& w, const SourceRef& s) {
  w.str(s.file);
  w.u32(s.line);
  w.u32(s.column);
}
SourceRef get_source(Reader& r) {
  SourceRef s;
  s.file = r.str();
  s.line = r.u32();
  s.column = r.u32();
  return s;
}

namespace {

void put(Writer& w, const BitField& f) {
  w.u32(f.count);
  for (const auto& r : f.ranges) {
    w.u32(r.low);
    w.u32(r.width);
  }
}
BitField get_bitfield(Reader& r) {
  BitField f;
  f.count = r.u32();
  if (f.count > BitField::kMaxRanges) throw std::runtime_error("bit field of too many ranges");
  for (auto& range : f.ranges) {
    range.low = r.u32();
    range.width = r.u32();
  }
  for (unsigned i = 0; i < f.count; ++i)  // what parse_bit_range accepts: inside a 64-bit register
    if (f.ranges[i].width == 0 || f.ranges[i].low >= 64 || f.ranges[i].width > 64 - f.ranges[i].low)
      throw std::runtime_error("bit range outside the register");
  return f;
}


void put(Writer& w, const std::vector<std::uint32_t>& v) {
  w.u32(static_cast<std::uint32_t>(v.size()));
  for (std::uint32_t x : v) w.u32(x);
}
std::vector<std::uint32_t> get_u32s(Reader& r) {
  std::vector<std::uint32_t> v(r.count());
  for (auto& x : v) x = r.u32();
  return v;
}

void put(Writer& w, const ModifierDef& m) {
  w.str(m.name);
  w.str(m.field);
  w.u32(static_cast<std::uint32_t>(m.kind));
  w.b(m.inverted);
  w.opt(m.max);
  w.str(m.description);
  w.str(m.refusal);
  put(w, m.source);
}
ModifierDef get_modifier(Reader& r) {
  ModifierDef m;
  m.name = r.str();
  m.field = r.str();
  m.kind = static_cast<ModifierDef::Kind>(r.u32());
  m.inverted = r.b();
  m.max = r.opt64();
  m.description = r.str();
  m.refusal = r.str();
  m.source = get_source(r);
  return m;
}

void put(Writer& w, const std::vector<ValueRange>& v) {
  w.u32(static_cast<std::uint32_t>(v.size()));
  for (const auto& x : v) {
    w.u32(x.low);
    w.u32(x.high);
  }
}
std::vector<ValueRange> get_ranges(Reader& r) {
  std::vector<ValueRange> v(r.count());
  for (auto& x : v) {
    x.low = r.u32();
    x.high = r.u32();
  }
  return v;
}

void put(Writer& w, const std::vector<CpuidField>& v) {
  w.u32(static_cast<std::uint32_t>(v.size()));
  for (const auto& f : v) {
    w.u32(f.leaf);
    w.u32(f.subleaf);
    w.u32(f.reg);
    w.u32(f.low);
    w.u32(f.width);
    w.str(f.text);
  }
}
std::vector<CpuidField> get_fields(Reader& r) {
  std::vector<CpuidField> v(r.count());
  for (auto& f : v) {
    f.leaf = r.u32();
    f.subleaf = r.u32();
    f.reg = r.u32();
    f.low = r.u32();
    f.width = r.u32();
    f.text = r.str();
  }
  return v;
}

void put(Writer& w, const PmuDescription& p) {
  w.str(p.description);
  w.str(p.model);
  w.u32(static_cast<std::uint32_t>(p.score));
  w.u64(p.reserved);
  w.strs(p.driver_fields);
  w.opt(p.merge_event);
  w.str(p.unmatched);
  w.u32(static_cast<std::uint32_t>(p.counters.size()));
  for (const auto& g : p.counters) {
    w.u32(static_cast<std::uint32_t>(g.kind));
    for (std::uint32_t v : {g.first, g.count, g.width, g.control, g.control_stride, g.counter, g.counter_stride,
                            g.control_shift, g.control_shift_stride, g.control_bits})
      w.u32(v);
    w.opt(g.rdpmc);
    w.strs(g.cpus);
  }
  w.u32(static_cast<std::uint32_t>(p.registers.size()));
  for (const auto& d : p.registers) {
    w.u32(d.address);
    w.str(d.name);
    w.strs(d.cpus);
  }
  w.u32(static_cast<std::uint32_t>(p.probe.size()));
  for (const auto& rule : p.probe) {
    w.strs(rule.vendors);
    put(w, rule.families);
    put(w, rule.models);
    put(w, rule.steppings);
    put(w, rule.cpuid_set);
    put(w, rule.cpuid_clear);
    w.str(rule.tag);
    w.str(rule.name);
    w.str(rule.refusal);
    put(w, rule.source);
  }
}
PmuDescription get_pmu(Reader& r) {
  PmuDescription p;
  p.description = r.str();
  p.model = r.str();
  p.score = static_cast<int>(r.u32());
  p.reserved = r.u64();
  p.driver_fields = r.strs();
  p.merge_event = r.opt64();
  p.unmatched = r.str();
  p.counters.resize(r.count());
  for (auto& g : p.counters) {
    g.kind = static_cast<CounterKind>(r.u32());
    for (std::uint32_t* v : {&g.first, &g.count, &g.width, &g.control, &g.control_stride, &g.counter,
                             &g.counter_stride, &g.control_shift, &g.control_shift_stride, &g.control_bits})
      *v = r.u32();
    g.rdpmc = r.opt32();
    g.cpus = r.strs();
  }
  p.registers.resize(r.count());
  for (auto& d : p.registers) {
    d.address = r.u32();
    d.name = r.str();
    d.cpus = r.strs();
  }
  p.probe.resize(r.count());
  for (auto& rule : p.probe) {
    rule.vendors = r.strs();
    rule.families = get_ranges(r);
    rule.models = get_ranges(r);
    rule.steppings = get_ranges(r);
    rule.cpuid_set = get_fields(r);
    rule.cpuid_clear = get_fields(r);
    rule.tag = r.str();
    rule.name = r.str();
    rule.refusal = r.str();
    rule.source = get_source(r);
  }
  return p;
}

void put(Writer& w, const UnitMaskGroup& g) {
  w.str(g.name);
  w.b(g.combinable);
  w.u32(static_cast<std::uint32_t>(g.masks.size()));
  for (const auto& m : g.masks) {
    w.str(m.name);
    w.u64(m.value);
    w.str(m.description);
    w.str(m.generic);
  }
  w.strs(g.default_masks);
}
UnitMaskGroup get_group(Reader& r) {
  UnitMaskGroup g;
  g.name = r.str();
  g.combinable = r.b();
  g.masks.resize(r.count());
  for (auto& m : g.masks) {
    m.name = r.str();
    m.value = r.u64();
    m.description = r.str();
    m.generic = r.str();
  }
  g.default_masks = r.strs();
  return g;
}

}  // namespace

void put(Writer& w, const EventDef& e) {
  w.str(e.name);
  w.u64(e.code);
  w.str(e.description);
  w.str(e.generic);
  w.u32(static_cast<std::uint32_t>(e.counters.size()));
  for (unsigned c : e.counters) w.u32(c);
  w.opt(e.fixed);
  w.strs(e.modifiers);
  w.u32(static_cast<std::uint32_t>(e.defaults.size()));
  for (const auto& [k, v] : e.defaults) {
    w.str(k);
    w.u64(v);
  }
  w.strs(e.cpus);
  w.b(e.unit_masks.has_value());
  if (e.unit_masks) put(w, *e.unit_masks);
  w.opt(e.fixed_umask);
  w.b(e.merge);
  w.str(e.reference);
  put(w, e.source);
  w.strs(e.aliases);
  w.u64(e.umask2);
  w.u32(static_cast<std::uint32_t>(e.set.size()));
  for (const auto& [k, v] : e.set) {
    w.str(k);
    w.u64(v);
  }
  w.str(e.extra);
  w.u64(e.extra_value);
  put(w, e.extra_msrs);
  w.opt(e.code2);
  w.b(e.fixed_only);
  w.b(e.exclusive);
  w.b(e.deprecated);
  w.u64(e.period);
  w.u32(e.precise);
  w.str(e.errata);
  w.str(e.topic);
}
EventDef get_event(Reader& r) {
  EventDef e;
  e.name = r.str();
  e.code = r.u64();
  e.description = r.str();
  e.generic = r.str();
  e.counters.resize(r.count());
  for (auto& c : e.counters) c = r.u32();
  e.fixed = r.opt32();
  e.modifiers = r.strs();
  for (std::size_t n = r.count(); n > 0; --n) {
    std::string k = r.str();
    e.defaults[std::move(k)] = r.u64();
  }
  e.cpus = r.strs();
  if (r.b()) e.unit_masks = get_group(r);
  e.fixed_umask = r.opt64();
  e.merge = r.b();
  e.reference = r.str();
  e.source = get_source(r);
  e.aliases = r.strs();
  e.umask2 = r.u64();
  for (std::size_t n = r.count(); n > 0; --n) {
    std::string k = r.str();
    e.set[std::move(k)] = r.u64();
  }
  e.extra = r.str();
  e.extra_value = r.u64();
  e.extra_msrs = get_u32s(r);
  e.code2 = r.opt64();
  e.fixed_only = r.b();
  e.exclusive = r.b();
  e.deprecated = r.b();
  e.period = r.u64();
  e.precise = r.u32();
  e.errata = r.str();
  e.topic = r.str();
  return e;
}

std::uint32_t name_hash(std::string_view name) {
  std::uint32_t h = 2166136261u;  // FNV-1a over the name with A-Z folded, as iequal compares
  for (unsigned char c : name) {
    if (c >= 'A' && c <= 'Z') c = static_cast<unsigned char>(c + 32);
    h = (h ^ c) * 16777619u;
  }
  return h;
}

// The name table of a cache file (after the events), read by CatalogCache::lookup:
//   u32 N; N x u32: where entry i starts in the entries; u32 M; M x (u32 hash, u32 key) sorted;
//   the entries, per event in catalog order: the offset of its record in the events section, the
//   CRC-32C of the record, and what a lookup compares (name, aliases, generic, the unit masks'
//   generics, cpus).
// A key is the entry's index with its kind in bits 31:30 (0 name, 1 alias, 2 generic or a unit
// mask's generic), so the keys of one hash come in the order the lookup rules try them.
void put_name_table(Writer& w, const std::vector<EventDef>& events, const std::vector<std::uint64_t>& records,
                    const std::string& events_section) {
  Writer entries;
  std::vector<std::uint32_t> starts;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> index;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const EventDef& e = events[i];
    const auto n = static_cast<std::uint32_t>(i);
    starts.push_back(static_cast<std::uint32_t>(entries.out.size()));
    entries.u64(records[i]);
    const std::uint64_t end = i + 1 < records.size() ? records[i + 1] : events_section.size();
    entries.u32(checksum(events_section.data() + records[i], end - records[i]));
    entries.str(e.name);
    entries.strs(e.aliases);
    entries.str(e.generic);
    index.emplace_back(name_hash(e.name), n);
    for (const auto& a : e.aliases) index.emplace_back(name_hash(a), n | 1u << 30);
    if (!e.generic.empty()) index.emplace_back(name_hash(e.generic), n | 2u << 30);
    std::uint32_t masks = 0;
    if (e.unit_masks)
      for (const auto& m : e.unit_masks->masks) masks += !m.generic.empty();
    entries.u32(masks);
    if (e.unit_masks)
      for (std::size_t m = 0; m < e.unit_masks->masks.size(); ++m)
        if (!e.unit_masks->masks[m].generic.empty()) {
          entries.u32(static_cast<std::uint32_t>(m));
          entries.str(e.unit_masks->masks[m].generic);
          index.emplace_back(name_hash(e.unit_masks->masks[m].generic), n | 2u << 30);
        }
    entries.strs(e.cpus);
  }
  std::sort(index.begin(), index.end());
  index.erase(std::unique(index.begin(), index.end()), index.end());
  w.u32(static_cast<std::uint32_t>(starts.size()));
  for (std::uint32_t s : starts) w.u32(s);
  w.u32(static_cast<std::uint32_t>(index.size()));
  for (const auto& [hash, key] : index) {
    w.u32(hash);
    w.u32(key);
  }
  w.out += entries.out;
}

void CatalogCache::put_shape(Writer& shape, const EventCatalog& cat) {
  shape.u32(static_cast<std::uint32_t>(cat.format_.fields().size()));
  for (const auto& [name, field] : cat.format_.fields()) {
    shape.str(name);
    put(shape, field);
  }
  shape.u32(static_cast<std::uint32_t>(cat.format_.terms().size()));
  for (const auto& [name, field] : cat.format_.terms()) {
    shape.str(name);
    put(shape, field);
  }
  shape.u32(static_cast<std::uint32_t>(cat.cpus_.size()));
  for (const auto& t : cat.cpus_) {
    shape.str(t.name);
    shape.str(t.description);
  }
  shape.strs(cat.files_);
  shape.strs(cat.default_modifiers_);
  shape.u32(static_cast<std::uint32_t>(cat.modifiers_.size()));
  for (const auto& m : cat.modifiers_) put(shape, m);
  put(shape, cat.pmu_);
  shape.str(cat.description_);
  shape.str(cat.backend_);
  shape.u32(static_cast<std::uint32_t>(cat.extra_regs_.size()));
  for (const auto& d : cat.extra_regs_) {
    shape.str(d.name);
    put(shape, d.msrs);
    shape.str(d.description);
    put(shape, d.source);
  }
}

bool CatalogCache::get_shape(Reader& r, EventCatalog& c) {
  for (std::size_t n = r.count(); n > 0; --n) {
    std::string name = r.str();
    c.format_.add(std::move(name), get_bitfield(r));
  }
  for (std::size_t n = r.count(); n > 0; --n) {
    std::string name = r.str();
    c.format_.add_term(std::move(name), get_bitfield(r));
  }
  c.cpus_.resize(r.count());
  for (auto& t : c.cpus_) {
    t.name = r.str();
    t.description = r.str();
  }
  c.files_ = r.strs();
  c.default_modifiers_ = r.strs();
  c.modifiers_.resize(r.count());
  for (auto& m : c.modifiers_) m = get_modifier(r);
  c.pmu_ = get_pmu(r);
  c.description_ = r.str();
  c.backend_ = r.str();
  c.extra_regs_.resize(r.count());
  for (auto& d : c.extra_regs_) {
    d.name = r.str();
    d.msrs = get_u32s(r);
    d.description = r.str();
    d.source = get_source(r);
  }
  return r.p == r.end;
}

void put_pmu(Writer& w, const PmuDescription& p) { put(w, p); }
PmuDescription read_pmu(Reader& r) { return get_pmu(r); }

}  // namespace pmc::detail
