// Plugin SDK: the ABI version every plugin (backend or device model) is built for, and the
// macro that exports a plugin's descriptor.
//
// The rule (docs/writing-a-backend.md, "The ABI rule"), after FreeBSD's PMC_VERSION: the version
// is MMmmpppp (major << 24 | minor << 16 | patch).
//  - A new MAJOR is an incompatible change: a virtual function added, removed or changed in
//    Backend, Device, ProfilingDriver or RegisterFile, a change in the layout of a type that
//    crosses the boundary (PmuInfo, CounterInfo, Encoding, EventDef, Segment, CpuInfo, ...), a
//    descriptor field moved. The host refuses a plugin of another major.
//  - A new MINOR is an addition old plugins cannot notice: a field appended to a descriptor
//    (struct_size tells the host whether a plugin has it), a new non-virtual helper, a new flag.
//    The host accepts plugins of its own or an older minor, and refuses a newer minor (the
//    plugin may rely on what this host lacks).
//  - A PATCH changes nothing a plugin can see.
#pragma once
#if __cplusplus < 202002L
#error "<pmc/sdk/abi.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/export.hpp>

#include <cstdint>

namespace pmc {

inline constexpr std::uint32_t kAbiMajor = 7;  // 7.0: Encoding::frequency (docs/writing-a-backend.md)
inline constexpr std::uint32_t kAbiMinor = 0;
inline constexpr std::uint32_t kAbiPatch = 0;
inline constexpr std::uint32_t kAbiVersion = (kAbiMajor << 24) | (kAbiMinor << 16) | kAbiPatch;

}  // namespace pmc

// Exports a descriptor object under a fixed symbol name: a pointer to it, as Boost.DLL's
// aliases are, so the host reads it with boost::dll::shared_library::get_alias (or dlsym).
// Pass the descriptor's qualified name.
#define PMC_DETAIL_EXPORT_DESCRIPTOR(symbol, qualified_descriptor) \
  extern "C" __attribute__((visibility("default"), used)) const void* const symbol = &(qualified_descriptor)

#endif  // C++20
