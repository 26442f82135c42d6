// Metric files written inline in a test: the error loading one gives.
#pragma once

#include <pmc/pmc.hpp>

#include <string>

namespace pmc_test {

// The message of the pmc::Error that loading the document as "inline.toml" throws; "" when it loads.
inline std::string metric_load_error(const std::string& toml) {
  try {
    pmc::MetricCatalog c;
    c.load_string(toml, "inline.toml");
  } catch (const pmc::Error& e) {
    return e.what();
  }
  return {};
}

}  // namespace pmc_test
