#define BOOST_TEST_MODULE read_path
#include <boost/test/unit_test.hpp>

// The read path at the cost of the system call (docs/performance.md): Session::read into the
// caller's buffer gives the values read() gives, in the same order; read() itself fills in
// the numbers of readings built once; a session that is one perf
// group reads it with exactly one read() system call, switches it with exactly one ioctl, and
// allocates nothing; the thread id is asked of the kernel once, not per read. The system calls
// are counted by interposing this program's read, ioctl and syscall (the static core calls the
// C library's, which these definitions replace), the allocations by replacing operator new.
// No assertion depends on timing: the counters compared are taken while the session is stopped.

#include "perf_event.hpp"
#include "session_impl.hpp"
#include "support/no_backend.hpp"

#include <pmc/error.hpp>
#include <pmc/hal.hpp>

#include <dlfcn.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdarg>
#include <cstdlib>
#include <fstream>
#include <new>
#include <vector>

// ---------------------------------------------------------------------------------------------
// What the library asks of the kernel and of the heap, while `counting` is on.

namespace {
std::atomic<bool> counting{false};
std::atomic<long> reads{0}, ioctls{0}, syscalls{0}, allocations{0};

template <class F>
F next(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}
}  // namespace

extern "C" ssize_t read(int fd, void* buf, size_t count) {
  static const auto real = next<ssize_t (*)(int, void*, size_t)>("read");
  if (counting) ++reads;
  return real(fd, buf, count);
}

extern "C" int ioctl(int fd, unsigned long request, ...) {
  static const auto real = next<int (*)(int, unsigned long, ...)>("ioctl");
  va_list ap;
  va_start(ap, request);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  if (counting) ++ioctls;
  return real(fd, request, arg);
}

extern "C" long syscall(long number, ...) {
  static const auto real = next<long (*)(long, ...)>("syscall");
  va_list ap;
  va_start(ap, number);
  long a[6];
  for (long& x : a) x = va_arg(ap, long);
  va_end(ap);
  if (counting) ++syscalls;
  return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

// The replacement pair is malloc and free; GCC, seeing both, would call the library's delete of
// a new'ed pointer mismatched.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t size) {
  if (counting) ++allocations;
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

using pmc_test::no_backend_hal;

struct Counted {
  long reads = 0, ioctls = 0, syscalls = 0, allocations = 0;
};

template <class F>
Counted count(F&& f) {
  reads = ioctls = syscalls = allocations = 0;
  counting = true;
  f();
  counting = false;
  return {reads, ioctls, syscalls, allocations};
}

const std::size_t kPage = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));

// Touches `pages` fresh anonymous pages: one page fault each, at least.
void touch_pages(std::size_t pages) {
  const std::size_t len = pages * kPage;
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::runtime_error("mmap failed");
  auto* bytes = static_cast<volatile char*>(p);
  for (std::size_t i = 0; i < len; i += kPage) bytes[i] = 1;
  munmap(p, len);
}

int paranoid() {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  int v = 99;
  in >> v;
  return v;
}

boost::test_tools::assertion_result cpu_wide_allowed(boost::unit_test::test_unit_id) {
  boost::test_tools::assertion_result r(geteuid() == 0 || paranoid() <= 0);
  r.message() << "counting every CPU needs root or kernel.perf_event_paranoid <= 0 (it is " << paranoid() << ")";
  return r;
}

}  // namespace

BOOST_AUTO_TEST_CASE(values_are_the_readings_values_in_order) {
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  pmc::Session s = hal.session(pmc::Scope::this_thread());
  for (const char* e : {"page-faults", "minor-faults", "task-clock", "context-switches"}) s.add(e);
  BOOST_TEST(s.readings() == 4u);
  s.start();
  touch_pages(100);
  s.stop();
  // Stopped: the counts stay where they are, so both reads see the same numbers.
  const std::vector<pmc::Reading> r = s.read();
  std::array<std::uint64_t, 4> v{};
  BOOST_TEST(s.read(v) == 4u);
  BOOST_REQUIRE_EQUAL(r.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) BOOST_TEST(v[i] == r[i].value, r[i].event);
  BOOST_TEST(v[0] >= 100u);  // 100 fresh pages: a fault each
}

BOOST_AUTO_TEST_CASE(a_buffer_too_small_is_refused) {
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  pmc::Session s = hal.session(pmc::Scope::this_thread());
  s.add("task-clock");
  s.add("page-faults");
  std::array<std::uint64_t, 1> v{7};
  try {
    (void)s.read(v);
    BOOST_ERROR("a buffer of 1 for 2 readings was accepted");
  } catch (const pmc::Error& e) {
    BOOST_TEST((e.kind() == pmc::errc::invalid_argument));
    BOOST_TEST(std::string(e.what()).find("2 readings") != std::string::npos, e.what());
  }
  BOOST_TEST(v[0] == 7u);  // untouched
}

BOOST_AUTO_TEST_CASE(a_perf_group_is_one_read_and_nothing_else) {
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  pmc::Session s = hal.session(pmc::Scope::this_thread());
  for (const char* e : {"task-clock", "page-faults", "context-switches", "cpu-migrations"}) s.add(e);
  s.start();
  std::array<std::uint64_t, 4> v{};
  (void)s.read(v);  // the first read after the events changed builds the read plan
  const Counted one = count([&] { (void)s.read(v); });
  BOOST_TEST(one.reads == 1);
  BOOST_TEST(one.ioctls == 0);
  BOOST_TEST(one.syscalls == 0);  // no gettid
  BOOST_TEST(one.allocations == 0);
  const Counted hundred = count([&] {
    for (int i = 0; i < 100; ++i) (void)s.read(v);
  });
  BOOST_TEST(hundred.reads == 100);
  BOOST_TEST(hundred.allocations == 0);
  s.stop();
}

// Issue 25: read() returning readings once built a vector and copied five strings into each
// reading on every call (2 allocations for one event, 6 for three). Now the names are built
// once, when the events change, and a read fills in the numbers: one read() system call and
// no allocation, the same readings object updated in place.
BOOST_AUTO_TEST_CASE(readings_are_read_without_allocating_or_rebuilding_names) {
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  pmc::Session s = hal.session(pmc::Scope::this_thread());
  for (const char* e : {"task-clock", "page-faults", "context-switches"}) s.add(e);
  s.start();
  const std::vector<pmc::Reading>* first = &s.read();  // builds the read plan and the names
  const Counted one = count([&] { (void)s.read(); });
  BOOST_TEST(one.reads == 1);
  BOOST_TEST(one.syscalls == 0);
  BOOST_TEST(one.allocations == 0);
  const Counted hundred = count([&] {
    for (int i = 0; i < 100; ++i) (void)s.read();
  });
  BOOST_TEST(hundred.reads == 100);
  BOOST_TEST(hundred.allocations == 0);
  s.stop();
  // A copy keeps the numbers of its read; the session's readings move on with the next one.
  const std::vector<pmc::Reading> before = s.read();
  s.start();
  touch_pages(50);
  s.stop();
  const std::vector<pmc::Reading>& after = s.read();
  BOOST_TEST(&after == first);
  BOOST_REQUIRE_EQUAL(after.size(), 3u);
  BOOST_TEST(after[0].name == "task-clock");
  BOOST_TEST(after[0].unit == "ns");
  BOOST_TEST(after[1].event == "page-faults");
  BOOST_TEST(after[2].event == "context-switches");
  BOOST_TEST(after[1].value >= before[1].value + 50);
  BOOST_TEST(after[0].time_enabled > before[0].time_enabled);
  // Adding an event builds the names again, for all four.
  s.add("cpu-migrations");
  BOOST_REQUIRE_EQUAL(s.read().size(), 4u);
  BOOST_TEST(s.read()[3].event == "cpu-migrations");
  BOOST_TEST(s.read()[0].event == "task-clock");
}

BOOST_AUTO_TEST_CASE(start_and_stop_are_one_ioctl_each) {
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  pmc::Session s = hal.session(pmc::Scope::this_thread());
  for (const char* e : {"task-clock", "page-faults", "context-switches", "cpu-migrations"}) s.add(e);
  s.start();
  s.stop();
  const Counted c = count([&] {
    s.start();
    s.stop();
  });
  BOOST_TEST(c.ioctls == 2);  // PERF_EVENT_IOC_ENABLE and DISABLE on the group leader
  BOOST_TEST(c.reads == 0);
  BOOST_TEST(c.syscalls == 0);
  BOOST_TEST(c.allocations == 0);
  // And they still switch the counters: nothing counts while stopped.
  std::array<std::uint64_t, 4> before{}, after{};
  (void)s.read(before);
  touch_pages(50);
  (void)s.read(after);
  BOOST_TEST(after[1] == before[1]);
  s.start();
  touch_pages(50);
  s.stop();
  (void)s.read(after);
  BOOST_TEST(after[1] >= before[1] + 50);
}

BOOST_AUTO_TEST_CASE(a_mixed_session_reads_each_access_once_without_allocating) {
  // tsc (rdtsc) and the software group: not the direct path, still no allocation and one read.
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  pmc::Session s = hal.session(pmc::Scope::this_thread());
  s.add("task-clock");
  s.add("tsc");
  s.add("page-faults");
  s.start();
  std::array<std::uint64_t, 3> v{};
  (void)s.read(v);
  const Counted c = count([&] { (void)s.read(v); });
  BOOST_TEST(c.reads == 1);
  BOOST_TEST(c.syscalls == 0);
  BOOST_TEST(c.allocations == 0);
  s.stop();
  const auto r = s.read();
  (void)s.read(v);
  for (std::size_t i = 0; i < 3; ++i) BOOST_TEST(v[i] == r[i].value, r[i].event);
  BOOST_TEST(r[1].unit == "ticks");
}

BOOST_AUTO_TEST_CASE(the_thread_id_is_asked_once) {
  // The rdpmc check compares the caller with the thread that opened the events; it asks the
  // kernel for its own id once per thread (gettid through syscall()), not at every read.
  pmc::detail::PerfAccess perf(pmc::Scope::this_thread(), {});
  pmc::detail::PerfEventSpec e;
  e.event = "task-clock";
  e.config = PERF_COUNT_SW_TASK_CLOCK;
  perf.add(e);
  perf.start();
  std::vector<pmc::detail::Count> counts(1);
  perf.read_counts(counts);
  const Counted c = count([&] {
    for (int i = 0; i < 10; ++i) perf.read_counts(counts);
  });
  BOOST_TEST(c.syscalls == 0);
  BOOST_TEST(c.reads == 10);
  BOOST_TEST(!perf.rdpmc_possible());  // a software event never sits on a counter
  BOOST_TEST(perf.last_read_path() == "read");
  perf.stop();
}

BOOST_AUTO_TEST_CASE(each_cpu_values_follow_the_readings, *boost::unit_test::precondition(cpu_wide_allowed)) {
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  pmc::Session s = hal.session(pmc::Scope::each_cpu());
  s.add("cpu-clock");
  s.add("tsc");
  s.start();
  touch_pages(10);
  s.stop();
  const auto r = s.read();
  std::vector<std::uint64_t> v(s.readings());
  BOOST_REQUIRE_EQUAL(v.size(), r.size());
  BOOST_TEST(s.read(v) == r.size());
  for (std::size_t i = 0; i < r.size(); ++i) BOOST_TEST(v[i] == r[i].value, r[i].event << " CPU " << r[i].cpu);
  // Per event, one reading per CPU: the tsc readings carry the same ticks on every CPU.
  const std::size_t cpus = r.size() / 2;
  for (std::size_t c = 1; c < cpus; ++c) BOOST_TEST(v[cpus + c] == v[cpus]);
}
