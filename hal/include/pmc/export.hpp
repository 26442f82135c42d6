// Symbol visibility for the public API and the plugin SDK. Everything else is hidden
// (the build uses -fvisibility=hidden), so only what carries PMC_API is part of the ABI.
// PMC_INTERNAL hides a member of an exported class (constructors that take internal types).
#pragma once

#if defined(_WIN32)
#define PMC_API __declspec(dllexport)
#define PMC_INTERNAL
#else
#define PMC_API __attribute__((visibility("default")))
#define PMC_INTERNAL __attribute__((visibility("hidden")))
#endif
