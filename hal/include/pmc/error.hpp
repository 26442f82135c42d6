// The one error vocabulary of pmchal: a closed set of codes and one exception type.
#pragma once
#if __cplusplus < 202002L
#error "<pmc/error.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/export.hpp>

#include <string>
#include <system_error>

namespace pmc {

enum class errc {
  ok = 0,
  not_supported = 1,      // the CPU, backend or access method cannot do this
  invalid_argument,       // a value out of range or of the wrong kind
  not_found,              // unknown event, unit mask, backend, file
  feature_combination,    // modifiers or unit masks that cannot go together
  unit_mask,              // a unit mask problem (unknown, not combinable, empty)
  attribute,              // unknown modifier
  attribute_value,        // modifier value out of range
  no_counter,             // no assignment of events to counters exists
  plugin,                 // a backend library failed to load or to initialise
  plugin_abi,             // a backend library was built for another ABI version
  parse,                  // malformed TOML, CPUID dump or event string
  register_fault,         // an access the hardware would refuse (#GP)
  permission,             // the OS refused access
  io,                     // a file could not be read
};

PMC_API const std::error_category& category() noexcept;

inline std::error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), category()};
}

// Thrown by the library and by backends. what() is exactly the message: one line that names
// the thing at fault (file:line:column for input files, the event string and column for
// event strings). code() gives the errc for programs that branch on it.
class PMC_API Error : public std::system_error {
 public:
  Error(errc code, std::string message);
  Error(const Error&) = default;
  Error& operator=(const Error&) = default;
  // Out of line on purpose: the vtable then lives in libpmchal, not in each backend that throws,
  // so an Error thrown by a plugin stays valid after that plugin is unloaded.
  ~Error() override;
  [[nodiscard]] const char* what() const noexcept override;
  [[nodiscard]] errc kind() const noexcept { return static_cast<errc>(code().value()); }

 private:
  std::string message_;
};

}  // namespace pmc

namespace std {
template <>
struct is_error_code_enum<pmc::errc> : true_type {};
}  // namespace std

#endif  // C++20
