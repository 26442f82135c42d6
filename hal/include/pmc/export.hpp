// Symbol visibility for the public API and the plugin SDK. Everything else is hidden
// (the build uses -fvisibility=hidden), so only what carries PMC_API is part of the ABI.
#pragma once

#if defined(_WIN32)
#define PMC_API __declspec(dllexport)
#else
#define PMC_API __attribute__((visibility("default")))
#endif
