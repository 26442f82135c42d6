// Register layouts as data: bit fields and the named fields of a control register.
#pragma once
#if __cplusplus < 202002L
#error "<pmc/register_format.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/export.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace pmc {

// Register layouts as data: "event = 0-7" means bits 7:0 of the register hold the event code;
// "event = 0-7,32-35" is one 12-bit field in two ranges, the value's low bits in the first.
struct BitRange {
  unsigned low = 0;
  unsigned width = 0;
};

struct PMC_API BitField {
  static constexpr unsigned kMaxRanges = 4;
  std::array<BitRange, kMaxRanges> ranges{};
  unsigned count = 0;  // ranges in use; 0 = absent

  [[nodiscard]] bool present() const { return count != 0; }
  [[nodiscard]] unsigned width() const;           // bits in all ranges
  [[nodiscard]] unsigned low() const { return count ? ranges[0].low : 0; }  // the first range's
  [[nodiscard]] std::uint64_t mask() const;       // the register bits the field occupies
  [[nodiscard]] std::uint64_t max_value() const;  // 2^width() - 1
  // The register bits holding value (which must fit: value <= max_value()).
  [[nodiscard]] std::uint64_t place(std::uint64_t value) const;
  // The field's value in reg.
  [[nodiscard]] std::uint64_t extract(std::uint64_t reg) const;
  [[nodiscard]] std::string str() const;          // "0-7,32-35", "22"
};

// Parses "7", "0-7", "24-31" or several of them separated by commas, low bits first
// ("0-7,32-35"). Ranges may not overlap; at most 64 bits in all. Throws invalid_argument.
PMC_API BitField parse_bit_range(std::string_view text);

class PMC_API RegisterFormat {
 public:
  void add(std::string name, BitField field);
  [[nodiscard]] std::optional<BitField> field(std::string_view name) const;
  [[nodiscard]] const std::map<std::string, BitField, std::less<>>& fields() const { return fields_; }
  // Places value into the named field of reg. Throws attribute_value when the value does not
  // fit ("cmask 300 does not fit field 24-31 (8 bits)"), not_supported when the field is absent.
  void set(std::uint64_t& reg, std::string_view name, std::uint64_t value) const;
  [[nodiscard]] std::uint64_t get(std::uint64_t reg, std::string_view name) const;

  // Linux perf's format terms of the PMU (sysfs .../format/NAME, "config:0-7"): the bits of the
  // config value each term of "cpu/event=0x3c,umask=0/" writes ([perf_format] of the data).
  void add_term(std::string name, BitField field);
  [[nodiscard]] std::optional<BitField> term(std::string_view name) const;
  [[nodiscard]] const std::map<std::string, BitField, std::less<>>& terms() const { return terms_; }

 private:
  std::map<std::string, BitField, std::less<>> fields_;
  std::map<std::string, BitField, std::less<>> terms_;
};

}  // namespace pmc

#endif  // C++20
