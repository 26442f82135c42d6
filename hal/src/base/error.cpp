#include <pmc/error.hpp>

#include <utility>

namespace pmc {

namespace {
class Category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "pmc"; }
  std::string message(int code) const override {
    switch (static_cast<errc>(code)) {
      case errc::ok: return "success";
      case errc::not_supported: return "not supported";
      case errc::invalid_argument: return "invalid argument";
      case errc::not_found: return "not found";
      case errc::feature_combination: return "invalid combination of features";
      case errc::unit_mask: return "invalid unit mask";
      case errc::attribute: return "unknown attribute";
      case errc::attribute_value: return "attribute value out of range";
      case errc::no_counter: return "no counter can take the event";
      case errc::plugin: return "backend plugin failed";
      case errc::plugin_abi: return "backend plugin ABI mismatch";
      case errc::parse: return "parse error";
      case errc::register_fault: return "register access fault";
      case errc::permission: return "permission denied";
      case errc::io: return "input/output error";
    }
    return "unknown error";
  }
};
}  // namespace

const std::error_category& category() noexcept {
  static const Category instance;
  return instance;
}

Error::Error(errc code, std::string message)
    : std::system_error(make_error_code(code), message), message_(std::move(message)) {}

Error::~Error() = default;

const char* Error::what() const noexcept { return message_.c_str(); }

}  // namespace pmc
