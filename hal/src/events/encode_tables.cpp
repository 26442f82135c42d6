// The encoder's tables (encode_tables.hpp): a catalog's [format] fields and its events' modifiers
// worked out by index, once per change of the catalog.
#include "catalog_state.hpp"
#include "encode_tables.hpp"

#include <pmc/event.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace pmc {

namespace detail {

const EncodeTables* EncodeTables::of(const EventCatalog& c) {
  // Events not decoded yet (found one by one, CatalogCache::lookup): none, the encoder goes by name.
  const CatalogState* s = CatalogState::find(c);
  if (!s || s->pending.load(std::memory_order_acquire)) return nullptr;
  return s->encode_tables.get();
}

const ModifierDef& EncodeTables::definition(const EventCatalog& c, const Modifier& m) {
  return m.def < c.modifiers_.size() ? c.modifiers_[m.def] : builtin_modifiers()[m.def - c.modifiers_.size()];
}

std::size_t EncodeTables::position(const EventCatalog& c, const EventDef* def) {
  if (c.events_.empty() || def < c.events_.data() || def >= c.events_.data() + c.events_.size())
    return std::string_view::npos;
  return static_cast<std::size_t>(def - c.events_.data());
}

EncodeTables::Field EncodeTables::Field::of(const std::optional<BitField>& f) {
  Field out;
  if (!f || !f->present()) return out;
  out.present = true;
  out.contiguous = f->count == 1;
  out.low = f->low();
  out.mask = f->mask();
  out.max = f->max_value();
  out.bits = *f;
  return out;
}

void EncodeTables::build(const EventCatalog& c) {
  auto t = std::make_shared<EncodeTables>();
  t->event = Field::of(c.format_.field("event"));
  t->umask = Field::of(c.format_.field("umask"));
  t->umask2 = Field::of(c.format_.field("umask2"));
  for (const auto& f : c.pmu_.driver_fields)
    if (auto field = c.format_.field(f)) t->driver_mask |= field->mask();
  // The modifiers by name, as EventCatalog::modifier() finds them: declared, then built in.
  std::vector<std::string_view> names;
  auto add = [&](const ModifierDef& m, std::size_t def) {
    Modifier r;
    r.def = static_cast<std::uint32_t>(def);
    if (!m.field.empty()) r.field = Field::of(c.format_.field(m.field));
    t->modifiers.push_back(r);
    names.push_back(m.name);
  };
  for (std::size_t i = 0; i < c.modifiers_.size(); ++i)
    if (std::find(names.begin(), names.end(), c.modifiers_[i].name) == names.end()) add(c.modifiers_[i], i);
  const auto& builtins = builtin_modifiers();
  for (std::size_t i = 0; i < builtins.size(); ++i)
    if (std::find(names.begin(), names.end(), builtins[i].name) == names.end())
      add(builtins[i], c.modifiers_.size() + i);
  t->first.reserve(c.events_.size());
  for (const auto& e : c.events_) {
    t->first.push_back(static_cast<std::uint32_t>(t->ids.size()));
    for (const auto& m : e.modifiers) {
      const auto it = std::find(names.begin(), names.end(), m);
      t->ids.push_back(it == names.end() ? kUnknown : static_cast<std::uint16_t>(it - names.begin()));
    }
  }
  CatalogState::of(c).encode_tables = std::move(t);
}

}  // namespace detail

}  // namespace pmc
