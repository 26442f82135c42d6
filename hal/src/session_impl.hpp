#pragma once

#include "context.hpp"

#include <pmc/session.hpp>
#include <pmc/sim/device.hpp>

#include <memory>
#include <vector>

namespace pmc::detail {

class SessionImpl {
 public:
  explicit SessionImpl(std::shared_ptr<const Context> context);
  ~SessionImpl();
  SessionImpl(const SessionImpl&) = delete;
  SessionImpl& operator=(const SessionImpl&) = delete;

  void add(std::string_view event);
  void start();
  void stop();
  void reset();
  void poll();
  std::vector<Reading> read();

  std::shared_ptr<const Context> ctx;
  std::unique_ptr<sim::Device> device;  // access "sim"
  RegisterFile* regs = nullptr;
  std::vector<Encoding> encodings;
  std::vector<std::size_t> slots;       // index into ctx->pmu.counters, per encoding
  std::vector<std::uint64_t> totals;    // 64-bit counts
  std::vector<std::uint64_t> last_raw;  // hardware value at the last poll
  bool running = false;
  bool programmed = false;
  std::uint64_t started_ns = 0;
  std::uint64_t enabled_ns = 0;

 private:
  void program();
  [[nodiscard]] std::vector<Assignment> assignments() const;
};

}  // namespace pmc::detail
