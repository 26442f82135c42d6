// The plugin SDK's defaults: a backend that is only data (probe table, counters, register
// format) works with these; backends override the operations their quirks need.
#include "plugins.hpp"
#include "probe_rule.hpp"

#include <pmc/error.hpp>
#include <pmc/sdk/backend.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/sdk/profiling.hpp>
#include <pmc/sdk/register_file.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace pmc {

RegisterFile::~RegisterFile() = default;
Backend::~Backend() = default;
ProfilingDriver::~ProfilingDriver() = default;

void Device::configure(std::string_view setting, std::uint64_t) {
  throw Error(errc::not_found, fmt::format("device model '{}' has no setting '{}'", name(), setting));
}

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

// ---------------------------------------------------------------------------------------------
// Probing from the data file's [[probe]] table.

namespace {

bool applies_to(const std::vector<std::string>& cpus, std::string_view tag) {
  return cpus.empty() || std::find(cpus.begin(), cpus.end(), tag) != cpus.end();
}

}  // namespace

std::string probe_subject(const CpuInfo& cpu) {
  // The CPU as its own identification says it: family/model for x86, the MIDR part for Arm.
  switch (cpu.isa) {
    case Isa::aarch64:
      return fmt::format("{} part {:#05x} r{}p{}", cpu.vendor.empty() ? "unknown implementer" : cpu.vendor,
                         cpu.arm.part, cpu.arm.variant, cpu.arm.revision);
    case Isa::other:
      return fmt::format("{} ({})", cpu.brand.empty() ? "an unknown CPU" : cpu.brand,
                         cpu.vendor.empty() ? "not x86" : cpu.vendor);
    case Isa::x86:
      break;
  }
  return fmt::format("{} family {} model {}", cpu.vendor.empty() ? "unknown vendor" : cpu.vendor, cpu.family, cpu.model);
}

namespace detail {

Match probe_with_table(const CpuInfo& cpu, const PmuDescription& pmu, std::string_view backend) {
  const std::string who = probe_subject(cpu);
  for (const ProbeRule& r : pmu.probe) {
    if (!detail::probe_rule_matches(r, cpu)) continue;
    Match m;
    if (!r.refusal.empty()) {
      m.reason = fmt::format("{}: {}", who, r.refusal);
      return m;
    }
    m.score = pmu.score;
    m.cpu_tag = r.tag;
    m.part = r.name;
    m.reason = fmt::format("{}: {}", who, r.name);
    return m;
  }
  Match m;
  m.reason = pmu.unmatched.empty() ? fmt::format("{}: not in the {} probe table", who, backend)
                                   : fmt::format("{}: {}", who, pmu.unmatched);
  return m;
}

}  // namespace detail

Match probe_table(const CpuInfo& cpu, const EventCatalog& data) {
  return detail::probe_with_table(cpu, data.pmu(), data.backend());
}

PmuInfo pmu_from_data(const CpuInfo& cpu, const EventCatalog& data, std::string_view tag) {
  const PmuDescription& d = data.pmu();
  PmuInfo p;
  p.name = data.backend();
  p.description = d.description.empty() ? data.description() : d.description;
  p.cpu_tag = std::string(tag);
  p.device_model = d.model;
  p.reserved = d.reserved;
  p.cpu = describe(cpu);
  for (const CounterGroup& g : d.counters) {
    if (!tag.empty() && !applies_to(g.cpus, tag)) continue;
    for (unsigned i = 0; i < g.count; ++i) {
      CounterInfo c;
      c.kind = g.kind;
      c.index = g.first + i;
      c.width = g.width;
      c.control_msr = g.control + i * g.control_stride;
      c.counter_msr = g.counter + i * g.counter_stride;
      c.control_bits = g.control_bits;
      c.control_shift = g.control_shift + i * g.control_shift_stride;
      if (g.rdpmc) c.rdpmc = *g.rdpmc + i;
      p.counters.push_back(c);
      for (std::uint32_t r : {c.control_msr, c.counter_msr})
        if (std::find(p.registers.begin(), p.registers.end(), r) == p.registers.end()) p.registers.push_back(r);
    }
  }
  for (const RegisterDecl& r : d.registers)
    if ((tag.empty() || applies_to(r.cpus, tag)) &&
        std::find(p.registers.begin(), p.registers.end(), r.address) == p.registers.end())
      p.registers.push_back(r.address);
  std::sort(p.registers.begin(), p.registers.end());
  return p;
}

// ---------------------------------------------------------------------------------------------
// Backend defaults

Match Backend::probe(const CpuInfo& cpu, const EventCatalog& data) const {
  return probe_table(cpu, data);
}

PmuInfo Backend::pmu(const CpuInfo& cpu, const EventCatalog& data, const Match& verdict) const {
  return pmu_from_data(cpu, data, verdict.cpu_tag);
}

Encoding Backend::encode(const EventSpec& spec, const PmuContext& ctx) const {
  return encode_with_catalog(spec, ctx.catalog, ctx.pmu);
}

const ProfilingDriver* Backend::profiling() const noexcept { return nullptr; }

void Backend::write_control(RegisterFile& regs, const CounterInfo& c, std::uint64_t value) {
  if (c.control_bits == 0) {
    regs.write(c.control_msr, value);
    return;
  }
  const std::uint64_t mask = c.control_mask();
  const std::uint64_t old = regs.read(c.control_msr);
  regs.write(c.control_msr, (old & ~mask) | ((value << c.control_shift) & mask));
}

namespace {

std::uint64_t enable_bits(const PmuContext& ctx) {
  const auto en = ctx.catalog.format().field("en");
  return en ? en->mask() : 0;
}

// The session's assignments ordered by counter index (start and stop in numerical order, as
// the Pentium needs and no PMU minds).
std::vector<Assignment> by_index(std::span<const Assignment> set) {
  std::vector<Assignment> out(set.begin(), set.end());
  std::sort(out.begin(), out.end(),
            [](const Assignment& a, const Assignment& b) { return a.counter->index < b.counter->index; });
  return out;
}

}  // namespace

void Backend::program(RegisterFile& regs, const PmuContext& ctx, std::span<const Assignment> set) const {
  const std::uint64_t en = enable_bits(ctx);
  for (const CounterInfo& c : ctx.pmu.counters) {
    if (c.kind != CounterKind::general) continue;
    std::uint64_t sel = 0;
    for (const auto& a : set)
      if (a.counter->kind == CounterKind::general && a.counter->index == c.index) sel = en ? a.encoding->config & ~en : 0;
    write_control(regs, c, sel);
  }
}

void Backend::start(RegisterFile& regs, const PmuContext& ctx, std::span<const Assignment> set) const {
  const std::uint64_t en = enable_bits(ctx);
  for (const auto& a : by_index(set)) write_control(regs, *a.counter, a.encoding->config | en);
}

void Backend::stop(RegisterFile& regs, const PmuContext& ctx, std::span<const Assignment> set) const {
  const std::uint64_t en = enable_bits(ctx);
  for (const auto& a : by_index(set)) write_control(regs, *a.counter, en ? a.encoding->config & ~en : 0);
}

std::uint64_t Backend::read_counter(RegisterFile& regs, const PmuContext&, const CounterInfo& c) const {
  return regs.read(c.counter_msr) & c.width_mask();
}

void Backend::write_counter(RegisterFile& regs, const PmuContext&, const CounterInfo& c, std::uint64_t value) const {
  regs.write(c.counter_msr, value & c.width_mask());
}

}  // namespace pmc
