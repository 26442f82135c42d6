#include <pmc/error.hpp>
#include <pmc/event.hpp>

#include <fmt/format.h>

#include <charconv>

namespace pmc {

BitField parse_bit_range(std::string_view text) {
  auto number = [&](std::string_view s) {
    unsigned v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v > 63)
      throw Error(errc::invalid_argument,
                  fmt::format("bit range '{}' must be \"N\" or \"LOW-HIGH\" with bits 0 to 63", text));
    return v;
  };
  auto dash = text.find('-');
  unsigned low = number(text.substr(0, dash));
  unsigned high = dash == std::string_view::npos ? low : number(text.substr(dash + 1));
  if (high < low)
    throw Error(errc::invalid_argument, fmt::format("bit range '{}' has its high bit below its low bit", text));
  return BitField{low, high - low + 1};
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
    throw Error(errc::attribute_value,
                fmt::format("{} {} does not fit field {}-{} ({} bits, at most {})", name, value, f->low,
                            f->low + f->width - 1, f->width, f->max_value()));
  reg = (reg & ~f->mask()) | (value << f->low);
}

std::uint64_t RegisterFormat::get(std::uint64_t reg, std::string_view name) const {
  auto f = field(name);
  if (!f) return 0;
  return (reg & f->mask()) >> f->low;
}

std::string SourceRef::str() const {
  if (line == 0) return file;
  return fmt::format("{}:{}:{}", file, line, column);
}

}  // namespace pmc
