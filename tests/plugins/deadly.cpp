// Plugins that take the process down with them (issue 26, item 11), one per PMC_DEADLY_CASE:
//   1 ctorabort: a constructor that runs at load calls abort();
//   2 ctorexit:  a constructor that runs at load calls exit(7);
//   3 hangfactory: the backend factory never returns;
//   4 garbagename: the descriptor's name pointer points at no memory (reading it faults).
// Nothing can catch these in the host; with PMC_DEBUG=plugins the loader names the file before
// each step, so the last line on stderr says which one did it. Built only into
// test-plugins/<case>/, never into mixed/.
#include <pmc/sdk/backend.hpp>

#include <unistd.h>

#include <cstdint>
#include <cstdlib>

namespace pmc::test_deadly {

namespace {
#if PMC_DEADLY_CASE == 1
__attribute__((constructor)) void on_load() { std::abort(); }
#elif PMC_DEADLY_CASE == 2
__attribute__((constructor)) void on_load() { std::exit(7); }
#endif

Backend* create(char* /*error*/, std::size_t /*error_size*/) noexcept {
#if PMC_DEADLY_CASE == 3
  for (;;) ::pause();
#endif
  return nullptr;
}
}  // namespace

#if PMC_DEADLY_CASE == 4
const pmc_backend_descriptor descriptor{kAbiVersion, sizeof(pmc_backend_descriptor),
                                        reinterpret_cast<const char*>(std::uintptr_t{16}), 0, &create};
#else
const pmc_backend_descriptor descriptor{kAbiVersion, sizeof(pmc_backend_descriptor), "deadly", 0, &create};
#endif

}  // namespace pmc::test_deadly

PMC_EXPORT_BACKEND(pmc::test_deadly::descriptor);
