// libFuzzer: the workload streamer (pmc::WorkloadReader, docs/workload-format.md), over the
// compact form and TOML alike (it recognizes either by content). The input is written to a file
// of this process's own (the reader reads files), read segment by segment to the end, rewound
// and read again: the second pass must give the same segments (cycles and signals), or the
// target aborts. Anything but pmc::Error escaping, and any sanitizer report, is a finding.
#include <pmc/error.hpp>
#include <pmc/workload.hpp>

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

const std::string& input_file() {
  static const std::string path = "fuzz-workload-reader." + std::to_string(::getpid()) + ".in";
  return path;
}

// One pass: each segment's cycles and signal counts in order.
std::vector<std::uint64_t> pass(pmc::WorkloadReader& reader) {
  std::vector<std::uint64_t> seen;
  while (const pmc::Segment* s = reader.next()) {
    seen.push_back(s->cycles);
    for (const pmc::SignalCount& c : s->signals) seen.push_back(c.per_cycle);
    (void)reader.where();
  }
  return seen;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::FILE* f = std::fopen(input_file().c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  if (std::fclose(f) != 0) std::abort();
  try {
    pmc::WorkloadReader reader(input_file());
    (void)reader.name();
    (void)reader.description();
    (void)reader.compact();
    const std::vector<std::uint64_t> first = pass(reader);
    reader.rewind();
    if (pass(reader) != first) std::abort();  // a rewound reader reads something else
  } catch (const pmc::Error&) {
  }
  std::remove(input_file().c_str());
  return 0;
}
