#include <pmc/error.hpp>
#include <pmc/event.hpp>

#include <fmt/format.h>

#include <charconv>

namespace pmc {

unsigned BitField::width() const {
  unsigned w = 0;
  for (unsigned i = 0; i < count; ++i) w += ranges[i].width;
  return w;
}

namespace {
constexpr std::uint64_t low_bits(unsigned n) { return n >= 64 ? ~0ull : (1ull << n) - 1; }
}  // namespace

std::uint64_t BitField::mask() const {
  std::uint64_t m = 0;
  for (unsigned i = 0; i < count; ++i) m |= low_bits(ranges[i].width) << ranges[i].low;
  return m;
}

std::uint64_t BitField::max_value() const { return low_bits(width()); }

std::uint64_t BitField::place(std::uint64_t value) const {
  std::uint64_t reg = 0;
  for (unsigned i = 0; i < count; ++i) {
    reg |= (value & low_bits(ranges[i].width)) << ranges[i].low;
    value = ranges[i].width >= 64 ? 0 : value >> ranges[i].width;
  }
  return reg;
}

std::uint64_t BitField::extract(std::uint64_t reg) const {
  std::uint64_t value = 0;
  unsigned at = 0;
  for (unsigned i = 0; i < count; ++i) {
    value |= ((reg >> ranges[i].low) & low_bits(ranges[i].width)) << at;
    at += ranges[i].width;
  }
  return value;
}

std::string BitField::str() const {
  std::string s;
  for (unsigned i = 0; i < count; ++i) {
    if (i) s += ",";
    const BitRange& r = ranges[i];
    s += r.width == 1 ? fmt::format("{}", r.low) : fmt::format("{}-{}", r.low, r.low + r.width - 1);
  }
  return s;
}

BitField parse_bit_range(std::string_view text) {
  auto fail = [&](std::string_view why) -> Error {
    return Error(errc::invalid_argument, fmt::format("bit range '{}' {}", text, why));
  };
  auto number = [&](std::string_view s) {
    unsigned v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v > 63)
      throw fail("must be \"N\" or \"LOW-HIGH\" with bits 0 to 63, or several of them separated by commas "
                 "(\"0-7,32-35\")");
    return v;
  };
  BitField field;
  std::uint64_t used = 0;
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = text.find(',', pos);
    const std::string_view part = text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    if (field.count == BitField::kMaxRanges)
      throw fail(fmt::format("has more than {} ranges", BitField::kMaxRanges));
    const auto dash = part.find('-');
    const unsigned low = number(part.substr(0, dash));
    const unsigned high = dash == std::string_view::npos ? low : number(part.substr(dash + 1));
    if (high < low) throw fail("has its high bit below its low bit");
    const BitRange r{low, high - low + 1};
    const std::uint64_t bits = low_bits(r.width) << r.low;
    if (used & bits) throw fail("has overlapping ranges");
    used |= bits;
    field.ranges[field.count++] = r;
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return field;
}

void RegisterFormat::add(std::string name, BitField field) { fields_[std::move(name)] = field; }

std::optional<BitField> RegisterFormat::field(std::string_view name) const {
  auto it = fields_.find(name);
  if (it == fields_.end()) return std::nullopt;
  return it->second;
}

void RegisterFormat::set(std::uint64_t& reg, std::string_view name, std::uint64_t value) const {
  auto f = field(name);
  if (!f) throw Error(errc::not_supported, fmt::format("the register format has no '{}' field", name));
  if (value > f->max_value())
    throw Error(errc::attribute_value, fmt::format("{} {} does not fit field {} ({} bits, at most {})", name, value,
                                                   f->str(), f->width(), f->max_value()));
  reg = (reg & ~f->mask()) | f->place(value);
}

std::uint64_t RegisterFormat::get(std::uint64_t reg, std::string_view name) const {
  auto f = field(name);
  if (!f) return 0;
  return f->extract(reg);
}

void RegisterFormat::add_term(std::string name, BitField field) { terms_[std::move(name)] = field; }

std::optional<BitField> RegisterFormat::term(std::string_view name) const {
  auto it = terms_.find(name);
  if (it == terms_.end()) return std::nullopt;
  return it->second;
}

std::string SourceRef::str() const {
  if (line == 0) return file;
  return fmt::format("{}:{}:{}", file, line, column);
}

}  // namespace pmc
