// Catalog queries by name: the hashed lookup tables (CatalogState, catalog_state.hpp), built
// whenever the events change, and find(), find_generic(), for_cpu() over them.
#include "catalog_cache.hpp"
#include "catalog_state.hpp"
#include "encode_tables.hpp"
#include "text.hpp"

#include <pmc/event.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace pmc {

namespace {

using detail::applies;

// Case-insensitive (ASCII) FNV-1a: the lookup tables' hash.
std::uint64_t folded_hash(std::string_view s) {
  std::uint64_t h = 14695981039346656037ull;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    h = (h ^ (u >= 'A' && u <= 'Z' ? u + 32u : u)) * 1099511628211ull;
  }
  return h;
}

bool folded_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  if (a == b) return true;  // names are mostly written as the catalog spells them
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto x = static_cast<unsigned char>(a[i]), y = static_cast<unsigned char>(b[i]);
    if (x >= 'A' && x <= 'Z') x = static_cast<unsigned char>(x + 32);
    if (y >= 'A' && y <= 'Z') y = static_cast<unsigned char>(y + 32);
    if (x != y) return false;
  }
  return true;
}

// A power of two at least twice n (at most half full), at least 8.
std::size_t table_size(std::size_t n) {
  std::size_t size = 8;
  while (size < 2 * n) size *= 2;
  return size;
}

// Inserts value (never 0) at the first free slot of key's probe sequence: entries of one key
// are met in the order they were inserted.
template <class T>
void insert_slot(std::vector<T>& table, std::string_view key, T value, const T& empty) {
  const std::size_t mask = table.size() - 1;
  for (std::size_t i = folded_hash(key) & mask;; i = (i + 1) & mask)
    if (table[i] == empty) {
      table[i] = value;
      return;
    }
}
}  // namespace

void EventCatalog::build_index() const {
  std::size_t aliases = 0, generics = 0;
  for (const auto& e : events_) {
    aliases += e.aliases.size();
    generics += !e.generic.empty();
    if (e.unit_masks)
      for (const auto& m : e.unit_masks->masks) generics += !m.generic.empty();
  }
  detail::CatalogState& s = detail::CatalogState::of(*this);
  s.name_index.assign(table_size(events_.size()), 0);
  s.alias_index.assign(table_size(aliases), 0);
  s.generic_index.assign(table_size(generics), {0, 0});
  // An entry keeps the upper half of its key's hash beside the position, so that a probe compares
  // strings only where the hashes agree.
  auto entry = [](std::string_view key, std::size_t i) {
    return (folded_hash(key) >> 32 << 32) | static_cast<std::uint64_t>(i + 1);
  };
  for (std::size_t i = 0; i < events_.size(); ++i) {
    const EventDef& e = events_[i];
    const auto at = static_cast<std::uint32_t>(i + 1);
    insert_slot<std::uint64_t>(s.name_index, e.name, entry(e.name, i), 0);
    for (const auto& a : e.aliases) insert_slot<std::uint64_t>(s.alias_index, a, entry(a, i), 0);
    // Generic names in event order; an event's own before its unit masks' (find_generic's order).
    if (!e.generic.empty()) insert_slot<std::pair<std::uint32_t, std::uint32_t>>(s.generic_index, e.generic, {at, 0}, {0, 0});
    if (e.unit_masks)
      for (std::size_t m = 0; m < e.unit_masks->masks.size(); ++m)
        if (!e.unit_masks->masks[m].generic.empty())
          insert_slot<std::pair<std::uint32_t, std::uint32_t>>(s.generic_index, e.unit_masks->masks[m].generic,
                                                               {at, static_cast<std::uint32_t>(m + 1)}, {0, 0});
  }
  detail::EncodeTables::build(*this);
}

const std::vector<EventDef>& EventCatalog::events() const {
  materialize();
  return events_;
}

// A name has at most one definition per CPU tag (the loader keeps definitions of one name on
// disjoint CPUs), so with a tag the first match is the only one; with no tag it is the first
// definition in catalog order (the probe sequence meets a name's definitions in that order).
const EventDef* EventCatalog::find(std::string_view name, std::string_view tag) const {
  const detail::CatalogState* s = state_.get();
  if (!s) return nullptr;  // nothing loaded
  if (s->pending.load(std::memory_order_acquire)) [[unlikely]] {  // restored from the parse cache, not decoded
    bool answered = false;
    const EventDef* e = detail::CatalogCache::lookup(*this, detail::CatalogCache::Lookup::name, name, tag, nullptr, answered);
    if (answered) return e;
    materialize();
  }
  const auto& name_index = s->name_index;
  const auto& alias_index = s->alias_index;
  if (name_index.empty()) return nullptr;
  const std::uint64_t h = folded_hash(name), high = h >> 32 << 32;
  for (std::size_t mask = name_index.size() - 1, i = h & mask; name_index[i]; i = (i + 1) & mask) {
    if ((name_index[i] >> 32 << 32) != high) continue;
    const EventDef& e = events_[(name_index[i] & 0xFFFFFFFFu) - 1];
    if (applies(e, tag) && folded_equal(e.name, name)) return &e;
  }
  // Names first, so an event of a later file named like an earlier event's alias wins.
  const EventDef* best = nullptr;
  for (std::size_t mask = alias_index.size() - 1, i = h & mask; alias_index[i]; i = (i + 1) & mask) {
    if ((alias_index[i] >> 32 << 32) != high) continue;
    const EventDef& e = events_[(alias_index[i] & 0xFFFFFFFFu) - 1];
    if (!applies(e, tag) || (best && best < &e)) continue;
    for (const auto& a : e.aliases)
      if (folded_equal(a, name)) best = &e;
  }
  return best;
}

const EventDef* EventCatalog::find_generic_mask(std::string_view given, std::string_view tag,
                                                const UnitMask** mask) const {
  const detail::CatalogState* s = state_.get();
  if (mask) *mask = nullptr;
  if (!s) return nullptr;  // nothing loaded
  if (s->pending.load(std::memory_order_acquire)) [[unlikely]] {  // restored from the parse cache, not decoded
    bool answered = false;
    const EventDef* e =
        detail::CatalogCache::lookup(*this, detail::CatalogCache::Lookup::generic, given, tag, mask, answered);
    if (answered) return e;
    materialize();
    if (mask) *mask = nullptr;
  }
  const auto& generic_index = s->generic_index;
  if (generic_index.empty()) return nullptr;
  const std::string_view generic = detail::perf_generic_name(given);
  // The first event in catalog order with the name as its own generic or a unit mask's.
  std::pair<std::uint32_t, std::uint32_t> best{0, 0};
  for (std::size_t m = generic_index.size() - 1, i = folded_hash(generic) & m; generic_index[i].first;
       i = (i + 1) & m) {
    const auto [at, unit] = generic_index[i];
    const EventDef& e = events_[at - 1];
    if (!applies(e, tag)) continue;
    const std::string& name = unit ? e.unit_masks->masks[unit - 1].generic : e.generic;
    if (!folded_equal(name, generic)) continue;
    if (best.first == 0 || at < best.first || (at == best.first && unit < best.second)) best = {at, unit};
  }
  if (best.first == 0) return nullptr;
  const EventDef& e = events_[best.first - 1];
  if (mask && best.second) *mask = &e.unit_masks->masks[best.second - 1];
  return &e;
}

const EventDef* EventCatalog::find_generic(std::string_view given, std::string_view tag,
                                           std::vector<std::string>* masks) const {
  const UnitMask* mask = nullptr;
  const EventDef* e = find_generic_mask(given, tag, &mask);
  if (e && masks) {
    masks->clear();
    if (mask) masks->push_back(mask->name);
  }
  return e;
}

std::vector<const EventDef*> EventCatalog::for_cpu(std::string_view tag) const {
  materialize();
  std::vector<const EventDef*> out;
  for (const auto& e : events_)
    if (applies(e, tag)) out.push_back(&e);
  return out;
}

}  // namespace pmc
