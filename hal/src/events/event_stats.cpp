// The parse and encode counters of event_stats.hpp.
#include "event_stats.hpp"

#include <atomic>

namespace pmc::detail {

namespace {
std::atomic<std::uint64_t> g_parses{0};
std::atomic<std::uint64_t> g_encodes{0};
}  // namespace

void count_parse() noexcept { g_parses.fetch_add(1, std::memory_order_relaxed); }
void count_encode() noexcept { g_encodes.fetch_add(1, std::memory_order_relaxed); }

EventStats event_stats() noexcept {
  return {g_parses.load(std::memory_order_relaxed), g_encodes.load(std::memory_order_relaxed)};
}

}  // namespace pmc::detail
