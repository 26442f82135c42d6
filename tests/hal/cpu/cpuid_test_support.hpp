// What the CPUID tests (test_cpuid.cpp, test_cpuid_decode.cpp, test_cpuid_dumps.cpp) share: one
// register of a table's leaf, and the check that a call throws pmc::Error of a kind whose message
// holds every part.
#pragma once

#include <boost/test/unit_test.hpp>

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>

#include <cstdint>
#include <initializer_list>
#include <ios>
#include <string>
#include <string_view>

namespace cpuid_test {

using pmc::CpuidTable;

// Runs f, which must throw pmc::Error of the given kind whose message contains every part.
template <class F>
void expect_error(F&& f, pmc::errc kind, std::initializer_list<std::string_view> parts) {
  try {
    f();
    BOOST_ERROR("no pmc::Error thrown");
  } catch (const pmc::Error& e) {
    const std::string msg = e.what();
    BOOST_TEST((e.kind() == kind), "error kind " << static_cast<int>(e.kind()) << " for: " << msg);
    for (auto part : parts) {
      BOOST_TEST((msg.find(part) != std::string::npos), "'" << part << "' not in: " << msg);
    }
  }
}

inline std::uint32_t reg(const CpuidTable& t, std::uint32_t leaf, std::uint32_t subleaf, char which) {
  const auto r = t.get(leaf, subleaf);
  BOOST_TEST_REQUIRE(r.has_value(), "leaf " << std::hex << leaf << " subleaf " << subleaf << " missing");
  switch (which) {
    case 'a': return r->eax;
    case 'b': return r->ebx;
    case 'c': return r->ecx;
    default: return r->edx;
  }
}

}  // namespace cpuid_test
