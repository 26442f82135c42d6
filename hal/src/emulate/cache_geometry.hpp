// The emulate layer's cache fitting, shared by cache_hierarchy() (cache_geometry.cpp) and
// run_under_valgrind() (valgrind.cpp), which fits a hierarchy made by hand again.
#pragma once

#include <pmc/emulate.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace pmc::detail {

// One cache fitted to Valgrind: a power-of-two line of at least 16 bytes (else invalid_argument
// naming `what`), a power-of-two number of sets (rounded down, with a note added to `notes`).
CacheGeometry fit_for_valgrind(CacheGeometry g, std::string_view what, std::vector<std::string>& notes);

}  // namespace pmc::detail
