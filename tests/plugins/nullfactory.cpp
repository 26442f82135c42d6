// Case (e): the factory returns nullptr and gives no reason (as a factory using
// new (std::nothrow) does when out of memory).
#include <pmc/sdk/backend.hpp>

namespace pmc::test_nullfactory {

namespace {
Backend* create(char* /*error*/, std::size_t /*error_size*/) noexcept { return nullptr; }
}  // namespace

const pmc_backend_descriptor descriptor{kAbiVersion, sizeof(pmc_backend_descriptor), "nullfactory", 0, &create};

}  // namespace pmc::test_nullfactory

PMC_EXPORT_BACKEND(pmc::test_nullfactory::descriptor);
