// Symbol visibility for the public API and the plugin SDK. Everything else is hidden
// (the build uses -fvisibility=hidden), so only what carries PMC_API is part of the ABI.
// PMC_INTERNAL hides a member of an exported class (constructors that take internal types).
#pragma once
#if __cplusplus < 202002L
#error "<pmc/export.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#if defined(_WIN32)
#define PMC_API __declspec(dllexport)
#define PMC_INTERNAL
#else
#define PMC_API __attribute__((visibility("default")))
#define PMC_INTERNAL __attribute__((visibility("hidden")))
#endif

#endif  // C++20
