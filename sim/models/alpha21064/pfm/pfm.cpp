// The C shim of <pmc/pfm.h>: the system-call side of the OSF/1 pfm(7) device over pmchal's
// emulated Alpha 21064 system (pmc::sim::PfmDriver). This file does what the kernel's system
// call layer would: look up the descriptor, copy arguments in and results out (EFAULT), map
// requests to the driver, and set errno. The semantics are the driver's.
#include <pmc/pfm.h>

#include <pmc/error.hpp>
#include <pmc/workload.hpp>

#include "alpha21064.hpp"  // the emulated chip and its pfm(7) driver (pmcmodel_alpha21064)

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

static_assert(sizeof(struct iccsr) == 8, "struct iccsr must be the 8-byte ICCSR image");
static_assert(sizeof(struct pfcntrs) == 24, "struct pfcntrs must be three 64-bit words");
static_assert(sizeof(struct pfipls) == 72, "struct pfipls must be nine 64-bit words");
static_assert(sizeof(struct addr_range) == 16, "struct addr_range must be two 64-bit words");

namespace {

using pmc::sim::PfmDriver;
namespace a = pmc::sim::alpha21064;

struct State {
  std::unique_ptr<PfmDriver> driver = std::make_unique<PfmDriver>(1);
  PfmDriver::Caller caller;
  std::vector<std::pair<std::uintptr_t, std::size_t>> mapped;  // pfm_sim_map
  std::string error;
};

std::mutex g_mutex;
State& state() {
  static State s;
  return s;
}

int fail(State& s, int err, std::string why) {
  s.error = std::move(why);
  errno = err;
  return -1;
}

// copyout(9)'s address check: NULL always faults; declared regions, when there are any, must
// hold the whole destination.
bool writable(const State& s, const void* p, std::size_t bytes) {
  if (p == nullptr) return false;
  if (s.mapped.empty()) return true;
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  for (const auto& [base, size] : s.mapped)
    if (at >= base && at - base <= size && bytes <= size - (at - base)) return true;
  return false;
}

// The driver's answer for one request: 0, or errno with a message.
int result(State& s, int err, const char* what) {
  if (err == 0) {
    s.error.clear();
    return 0;
  }
  return fail(s, err, std::string(what) + ": " + std::strerror(err));
}

int ioctl_locked(State& s, int fd, unsigned long request, void* arg) {
  PfmDriver& d = *s.driver;
  std::size_t entries = 0;
  if (int e = d.entries(fd, entries)) return result(s, e, "ioctl");  // the descriptor first
  switch (request) {
    case PCNTRDISABLE: return result(s, d.disable(fd), "PCNTRDISABLE");
    case PCNTRENABLE: return result(s, d.enable(fd), "PCNTRENABLE");
    case PCNTLOGALL: return result(s, d.log_all(fd), "PCNTLOGALL");
    case PCNTLOGSELECT: return result(s, d.log_select(fd, s.caller), "PCNTLOGSELECT");
    case PCNTCLEARCNT: return result(s, d.clear(fd), "PCNTCLEARCNT");
    case PCNTSETMUX: {
      if (!arg) return fail(s, EFAULT, "PCNTSETMUX: NULL struct iccsr");
      std::uint64_t image = 0;
      std::memcpy(&image, arg, sizeof image);  // the struct is the register image
      return result(s, d.set_mux(fd, image), "PCNTSETMUX");
    }
    case PCNTSETITEMS: {
      if (!arg) return fail(s, EFAULT, "PCNTSETITEMS: NULL long");
      long items = 0;
      std::memcpy(&items, arg, sizeof items);
      return result(s, d.set_items(fd, items), "PCNTSETITEMS");
    }
    case PCNTSETUADDR:
    case PCNTSETKADDR: {
      const char* name = request == PCNTSETUADDR ? "PCNTSETUADDR" : "PCNTSETKADDR";
      if (!arg) return fail(s, EFAULT, std::string(name) + ": NULL struct addr_range");
      addr_range r{};
      std::memcpy(&r, arg, sizeof r);
      return result(s,
                    d.set_range(fd, request == PCNTSETUADDR ? a::ProfileMode::user : a::ProfileMode::kernel,
                                r.start, r.end),
                    name);
    }
    case PCNTGETRSIZE: {
      std::uint64_t bytes = 0;
      if (int e = d.get_rsize(fd, bytes)) return result(s, e, "PCNTGETRSIZE");
      if (!writable(s, arg, sizeof(long))) return fail(s, EFAULT, "PCNTGETRSIZE: the long is not writable");
      const long v = static_cast<long>(bytes);
      std::memcpy(arg, &v, sizeof v);
      return result(s, 0, "");
    }
    case PCNTGETCNT: {
      if (!arg) return fail(s, EFAULT, "PCNTGETCNT: NULL struct pfcntrs **");
      std::vector<PfmDriver::Counts> counts;
      if (int e = d.get_counts(fd, counts)) return result(s, e, "PCNTGETCNT");
      pfcntrs* out = nullptr;
      std::memcpy(&out, arg, sizeof out);
      if (!writable(s, out, counts.size() * sizeof(pfcntrs))) {
        return fail(s, EFAULT,
                    "PCNTGETCNT: the array cannot hold " + std::to_string(counts.size()) + " struct pfcntrs");
      }
      for (std::size_t i = 0; i < counts.size(); ++i) {
        out[i].pf_cntr0 = static_cast<long>(counts[i].cntr0);
        out[i].pf_cntr1 = static_cast<long>(counts[i].cntr1);
        out[i].pr_cycle = static_cast<long>(counts[i].cycles);
      }
      return result(s, 0, "");
    }
    case PCNTGETIPLHIS: {
      if (!arg) return fail(s, EFAULT, "PCNTGETIPLHIS: NULL struct pfipls **");
      std::vector<a::IplHistogram> hist;
      if (int e = d.get_ipl_histograms(fd, hist)) return result(s, e, "PCNTGETIPLHIS");
      pfipls* out = nullptr;
      std::memcpy(&out, arg, sizeof out);
      if (!writable(s, out, hist.size() * sizeof(pfipls))) {
        return fail(s, EFAULT,
                    "PCNTGETIPLHIS: the array cannot hold " + std::to_string(hist.size()) + " struct pfipls");
      }
      for (std::size_t i = 0; i < hist.size(); ++i)
        for (std::size_t k = 0; k < a::kIplSlots; ++k) out[i].pf_ipl[k] = static_cast<unsigned long>(hist[i][k]);
      return result(s, 0, "");
    }
    default:
      return fail(s, EINVAL, "ioctl: unknown request " + std::to_string(request));  // [U] sheet 5.12
  }
}

// Runs one call under the lock, turning exceptions into errno (-1).
template <typename F>
long guarded(F&& f) {
  std::lock_guard<std::mutex> lock(g_mutex);
  State& s = state();
  try {
    return f(s);
  } catch (const pmc::Error& e) {
    return fail(s, e.kind() == pmc::errc::io ? ENOENT : EINVAL, e.what());
  } catch (const std::bad_alloc&) {
    return fail(s, ENOMEM, "out of memory");
  } catch (const std::exception& e) {
    return fail(s, EINVAL, e.what());
  }
}

}  // namespace

extern "C" {

int pfm_open(const char* path, int flags) {
  return static_cast<int>(guarded([&](State& s) {
    if (!path) return fail(s, EFAULT, "pfm_open: NULL path");
    if (std::strcmp(path, PFM_DEVICE) != 0) {
      return fail(s, ENODEV, std::string("pfm_open: ") + path + " is not the pfm device " PFM_DEVICE);
    }
    int fd = -1;
    if (int e = s.driver->open(flags, s.caller, fd)) return result(s, e, "pfm_open");
    s.error.clear();
    return fd;
  }));
}

int pfm_ioctl(int fd, unsigned long request, ...) {
  request &= 0xFFFFFFFFUL;  // the kernel's unsigned int cmd: a sign-extended int request still matches
  // OSF/1 _IO requests (IOC_VOID, 0x20000000) take no argument; _IOR / _IOW ones (IOC_OUT
  // 0x40000000, IOC_IN 0x80000000) take a pointer. Read the variadic argument only then.
  void* arg = nullptr;
  if ((request & 0xC0000000UL) != 0) {
    va_list ap;
    va_start(ap, request);
    arg = va_arg(ap, void*);
    va_end(ap);
  }
  return static_cast<int>(guarded([&](State& s) { return ioctl_locked(s, fd, request, arg); }));
}

long pfm_read(int fd, void* buf, size_t nbytes) {
  return guarded([&](State& s) -> long {
    std::vector<std::uint32_t> buckets;
    if (int e = s.driver->read_profile(fd, buckets)) return result(s, e, "pfm_read");
    const std::size_t n = std::min(nbytes, buckets.size() * sizeof(std::uint32_t));
    if (n > 0 && !writable(s, buf, n)) return fail(s, EFAULT, "pfm_read: the buffer is not writable");
    if (n > 0) std::memcpy(buf, buckets.data(), n);
    s.error.clear();
    return static_cast<long>(n);
  });
}

int pfm_close(int fd) {
  return static_cast<int>(guarded([&](State& s) { return result(s, s.driver->close(fd), "pfm_close"); }));
}

int pfm_sim_reset(unsigned ncpus) {
  return static_cast<int>(guarded([&](State& s) {
    if (ncpus == 0 || ncpus > PfmDriver::kMaxCpus) {
      return fail(s, EINVAL, "pfm_sim_reset: " + std::to_string(ncpus) + " CPUs (1..64)");
    }
    s.driver = std::make_unique<PfmDriver>(ncpus);
    s.caller = PfmDriver::Caller{};
    s.mapped.clear();
    s.error.clear();
    return 0;
  }));
}

int pfm_sim_bind(int cpu) {
  return static_cast<int>(guarded([&](State& s) {
    if (cpu < -1) return fail(s, EINVAL, "pfm_sim_bind: CPU " + std::to_string(cpu));
    s.caller.bound_cpu = cpu < 0 ? std::nullopt : std::optional<unsigned>(static_cast<unsigned>(cpu));
    s.error.clear();
    return 0;
  }));
}

int pfm_sim_set_pid(unsigned long pid) {
  return static_cast<int>(guarded([&](State& s) {
    if (pid == 0) return fail(s, EINVAL, "pfm_sim_set_pid: pid 0 is the kernel's");
    s.caller.pid = pid;
    s.error.clear();
    return 0;
  }));
}

int pfm_sim_run(const char* workload_toml_path) {
  return static_cast<int>(guarded([&](State& s) {
    if (!workload_toml_path) return fail(s, EFAULT, "pfm_sim_run: NULL path");
    std::error_code ec;
    if (!std::filesystem::exists(workload_toml_path, ec)) {
      return fail(s, ENOENT, std::string("pfm_sim_run: ") + workload_toml_path + ": no such file");
    }
    s.driver->run(pmc::load_workload(workload_toml_path));
    s.error.clear();
    return 0;
  }));
}

int pfm_sim_run_toml(const char* workload_toml_text) {
  return static_cast<int>(guarded([&](State& s) {
    if (!workload_toml_text) return fail(s, EFAULT, "pfm_sim_run_toml: NULL text");
    s.driver->run(pmc::parse_workload(workload_toml_text, "pfm_sim_run_toml"));
    s.error.clear();
    return 0;
  }));
}

int pfm_sim_map(const void* base, size_t bytes) {
  return static_cast<int>(guarded([&](State& s) {
    if (!base || bytes == 0) return fail(s, EINVAL, "pfm_sim_map: an empty region");
    s.mapped.emplace_back(reinterpret_cast<std::uintptr_t>(base), bytes);
    s.error.clear();
    return 0;
  }));
}

void pfm_sim_unmap_all(void) {
  std::lock_guard<std::mutex> lock(g_mutex);
  state().mapped.clear();
}

const char* pfm_sim_error(void) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return state().error.c_str();
}

}  // extern "C"
