// count17: the C API from a C++17 program (no C++20 needed: <pmc/pmc.h> is plain C). It counts
// the events named on the command line over a simulated workload, like count.c.
//
//   count17 pentium-iii p6-demo instructions INST_RETIRED:u
#include <pmc/pmc.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

// Built as C++17 (CMakeLists.txt): what <pmc/pmc.h> and the pmc::pmchal_c target must allow.
static_assert(__cplusplus == 201703L, "count17 is the C++17 consumer");

namespace {

// The handles in RAII wrappers, as a C++ program would hold them.
struct HalDeleter {
  void operator()(pmc_hal* h) const { pmc_hal_close(h); }
};
struct SessionDeleter {
  void operator()(pmc_session* s) const { pmc_session_close(s); }
};

std::optional<std::string_view> check(pmc_status st) {
  if (st == PMC_OK) return std::nullopt;
  return std::string_view(pmc_last_error());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: count17 CPU WORKLOAD EVENT...\n");
    return 2;
  }
  pmc_config cfg = PMC_CONFIG_INIT;
  cfg.cpu = argv[1];
  pmc_hal* raw_hal = nullptr;
  if (auto e = check(pmc_hal_open(&cfg, &raw_hal))) {
    std::fprintf(stderr, "count17: %.*s\n", static_cast<int>(e->size()), e->data());
    return 1;
  }
  std::unique_ptr<pmc_hal, HalDeleter> hal(raw_hal);
  pmc_session* raw_session = nullptr;
  if (auto e = check(pmc_session_open(hal.get(), nullptr, &raw_session))) {
    std::fprintf(stderr, "count17: %.*s\n", static_cast<int>(e->size()), e->data());
    return 1;
  }
  std::unique_ptr<pmc_session, SessionDeleter> s(raw_session);
  for (int i = 3; i < argc; ++i)
    if (auto e = check(pmc_session_add(s.get(), argv[i]))) {
      std::fprintf(stderr, "count17: %.*s\n", static_cast<int>(e->size()), e->data());
      return 1;
    }
  if (auto e = check(pmc_session_run_workload(s.get(), argv[2], nullptr))) {
    std::fprintf(stderr, "count17: %.*s\n", static_cast<int>(e->size()), e->data());
    return 1;
  }
  std::vector<std::uint64_t> values(pmc_session_reading_count(s.get()));
  if (auto e = check(pmc_session_read(s.get(), values.data(), values.size(), nullptr, nullptr))) {
    std::fprintf(stderr, "count17: %.*s\n", static_cast<int>(e->size()), e->data());
    return 1;
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    pmc_reading_info info = PMC_READING_INFO_INIT;
    (void)pmc_session_reading_info(s.get(), i, &info);
    std::printf("%s = %llu\n", info.event, static_cast<unsigned long long>(values[i]));
  }
  return 0;
}
