// Events, all of them: event strings (event_spec.hpp), register layouts (register_format.hpp),
// the catalog (catalog.hpp) and encodings (encoding.hpp).
#pragma once
#if __cplusplus < 202002L
#error "<pmc/event.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/catalog.hpp>
#include <pmc/encoding.hpp>
#include <pmc/event_spec.hpp>
#include <pmc/register_format.hpp>

#endif  // C++20
