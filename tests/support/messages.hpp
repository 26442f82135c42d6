// What tests ask of a message: whether it holds a part, and what a call that should be refused
// throws.
#pragma once

#include <pmc/error.hpp>

#include <functional>
#include <string>

namespace pmc_test {

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The message of the pmc::Error f throws; "(no error)" when it throws none.
inline std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const pmc::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace pmc_test
