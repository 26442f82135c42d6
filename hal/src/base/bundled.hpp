// The bundled data by bare name (share/pmchal/cpuid/*.txt, share/pmchal/workloads/*.toml): the
// names resolve_data (<pmc/paths.hpp>) takes, for the "did you mean" of a mistyped one.
#pragma once

#include <pmc/paths.hpp>

#include <string>
#include <vector>

namespace pmc::detail {

// The bare names of the bundled files of a kind ("pentium-iii", ...), sorted.
[[nodiscard]] std::vector<std::string> bundled_names(DataKind kind);

}  // namespace pmc::detail
