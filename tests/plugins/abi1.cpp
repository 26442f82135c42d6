// Case (c''): a backend of the old plugin ABI 1: it exports its descriptor as 'pmc_backend_v1'
// (and no 'pmc_backend_v2'). The host must say it needs rebuilding, without calling into it.
#include <pmc/export.hpp>

#include <cstdint>
#include <cstdlib>

namespace pmc::test_abi1 {

namespace {
// The ABI 1 descriptor's shape: version, size, name, factory.
struct DescriptorV1 {
  std::uint32_t abi_version;
  std::uint32_t struct_size;
  const char* name;
  void* (*create)();
};
void* create() { std::abort(); }  // must never be called
}  // namespace

const DescriptorV1 descriptor{1u << 24, sizeof(DescriptorV1), "abi1", &create};

}  // namespace pmc::test_abi1

extern "C" __attribute__((visibility("default"), used)) const void* const pmc_backend_v1 = &pmc::test_abi1::descriptor;
