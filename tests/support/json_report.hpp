// A JSON report that a test's pmc wrote (--json -o FILE): parsed, or a test error that shows its
// text, and an empty object so that the checks after it fail by name.
#pragma once

#include "child_process.hpp"

#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>

namespace pmc_test {

inline nlohmann::json read_json_report(const std::filesystem::path& file) {
  try {
    return nlohmann::json::parse(slurp(file));
  } catch (const nlohmann::json::exception& e) {
    BOOST_ERROR("report is not JSON (" << e.what() << "): " << slurp(file));
    return nlohmann::json::object();
  }
}

}  // namespace pmc_test
