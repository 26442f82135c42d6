#include <pmc/backend.hpp>
#include <pmc/error.hpp>
#include <pmc/register_file.hpp>

#include <fmt/format.h>

namespace pmc {

RegisterFile::~RegisterFile() = default;
Backend::~Backend() = default;

unsigned PmuInfo::general_count() const {
  unsigned n = 0;
  for (const auto& c : counters) n += c.kind == CounterKind::general;
  return n;
}

const CounterInfo* PmuInfo::general(unsigned index) const {
  for (const auto& c : counters)
    if (c.kind == CounterKind::general && c.index == index) return &c;
  return nullptr;
}

const CounterInfo* PmuInfo::fixed(unsigned index) const {
  for (const auto& c : counters)
    if (c.kind == CounterKind::fixed && c.index == index) return &c;
  return nullptr;
}

std::string Backend::events_file() const { return std::string(name()) + ".toml"; }

Encoding Backend::encode(const EventSpec& spec, const EventCatalog& catalog, const PmuInfo& pmu) const {
  return encode_with_catalog(spec, catalog, pmu);
}

std::uint64_t Backend::read_counter(RegisterFile& regs, const CounterInfo& c) const {
  std::uint64_t v = regs.read(c.counter_msr);
  return c.width >= 64 ? v : v & ((1ull << c.width) - 1);
}

void Backend::write_counter(RegisterFile& regs, const CounterInfo& c, std::uint64_t value) const {
  regs.write(c.counter_msr, value);
}

}  // namespace pmc
