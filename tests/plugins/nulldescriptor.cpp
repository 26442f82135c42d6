// Case (e''): the library exports the descriptor symbol, but as a null pointer. The host must
// report it, not dereference it.
#include <pmc/sdk/backend.hpp>

extern "C" __attribute__((visibility("default"), used)) const void* const pmc_backend_v2 = nullptr;
