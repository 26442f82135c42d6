// Case (c): a backend built against a future plugin SDK: ABI major version 2. The host must
// refuse it before calling anything in it.
#include <pmc/backend.hpp>
#include <pmc/backend_export.hpp>

#include <cstdlib>

namespace pmc::test_abi2 {

namespace {
Backend* create() { std::abort(); }  // must never be called
}  // namespace

const pmc_backend_descriptor descriptor{2u << 24, sizeof(pmc_backend_descriptor), "abi2", &create};

}  // namespace pmc::test_abi2

PMC_EXPORT_BACKEND(pmc::test_abi2::descriptor)
