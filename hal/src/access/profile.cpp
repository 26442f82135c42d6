#include <pmc/profile.hpp>

#include <algorithm>

namespace pmc {


std::uint64_t LevelHistogram::total() const {
  std::uint64_t n = 0;
  for (const auto& b : bins) n += b.samples;
  return n;
}

std::uint64_t PcProfile::total() const {
  std::uint64_t n = 0;
  for (std::uint64_t s : samples) n += s;
  return n;
}

PcBucket PcProfile::bucket(std::size_t b) const {
  PcBucket out;
  out.start = range.start + b * bucket_bytes;
  out.end = std::min(range.end, out.start + bucket_bytes);
  out.samples = b < samples.size() ? samples[b] : 0;
  return out;
}

std::vector<PcBucket> PcProfile::hottest(std::size_t n) const {
  std::vector<std::size_t> order;
  for (std::size_t b = 0; b < samples.size(); ++b)
    if (samples[b] != 0) order.push_back(b);
  const std::size_t keep = std::min(n, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
                    [&](std::size_t a, std::size_t b) { return samples[a] != samples[b] ? samples[a] > samples[b] : a < b; });
  std::vector<PcBucket> out;
  for (std::size_t i = 0; i < keep; ++i) out.push_back(bucket(order[i]));
  return out;
}

}  // namespace pmc
