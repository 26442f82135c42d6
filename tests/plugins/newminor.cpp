// Case (c'): a backend built against a newer minor of this ABI (kAbiMinor + 1). It may rely on
// what this host lacks, so the host must refuse it before calling anything in it.
#include <pmc/sdk/backend.hpp>

#include <cstdlib>

namespace pmc::test_newminor {

namespace {
Backend* create(char* /*error*/, std::size_t /*error_size*/) noexcept { std::abort(); }  // must never be called
}  // namespace

const pmc_backend_descriptor descriptor{(kAbiMajor << 24) | ((kAbiMinor + 1) << 16), sizeof(pmc_backend_descriptor),
                                        "newminor", 0, &create};

}  // namespace pmc::test_newminor

PMC_EXPORT_BACKEND(pmc::test_newminor::descriptor);
