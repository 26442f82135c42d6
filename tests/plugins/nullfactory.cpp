// Case (e): the factory returns nullptr (as a factory using new (std::nothrow) does when out of
// memory).
#include <pmc/backend.hpp>
#include <pmc/backend_export.hpp>

namespace pmc::test_nullfactory {

namespace {
Backend* create() { return nullptr; }
}  // namespace

const pmc_backend_descriptor descriptor{kBackendAbiVersion, sizeof(pmc_backend_descriptor), "nullfactory",
                                        &create};

}  // namespace pmc::test_nullfactory

PMC_EXPORT_BACKEND(pmc::test_nullfactory::descriptor)
