// pmc-conformance: the driver on its device model directly, through a register file that
// records every access. A session of access "sim" lets a driver touch any register its model
// has; the msr access on hardware refuses every MSR the backend's data file does not declare
// (PmuInfo::registers), so a driver that touches one works under sim and fails on the machine.
// Driving the model directly also shows the counter register itself, which a session's reading
// (masked to the counter's width, then folded) cannot: after several wraps it must hold the
// count modulo 2^width. The plugins are the ones the Hal chose, loaded again through their
// descriptors (<pmc/sdk/backend.hpp>, <pmc/sdk/model.hpp>).
#define BOOST_TEST_NO_MAIN
#define BOOST_TEST_ALTERNATIVE_INIT_API
#include <boost/test/unit_test.hpp>

#include "kit.hpp"

#include <pmc/sdk/backend.hpp>
#include <pmc/sdk/model.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

using namespace kit;

namespace {

// One library, opened again (the Hal holds it open already: this only counts a reference).
class Library {
 public:
  explicit Library(const fs::path& file) : handle_(::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL)) {}
  ~Library() {
    if (handle_) ::dlclose(handle_);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  // The descriptor a plugin exports under `symbol` (a pointer to it), or nullptr.
  template <class T>
  const T* descriptor(const char* symbol) const {
    if (!handle_) return nullptr;
    const auto* p = static_cast<const void* const*>(::dlsym(handle_, symbol));
    return p ? static_cast<const T*>(*p) : nullptr;
  }

 private:
  void* handle_;
};

// The chosen backend's driver and a fresh device of its model. Declared in this order so the
// objects go before their libraries.
struct Driver {
  std::unique_ptr<Library> backend_lib, model_lib;
  std::unique_ptr<pmc::Backend> backend;
  std::unique_ptr<pmc::Device> device;
};

// Builds the driver and the device, or says why not.
std::string open_driver(const pmc::Hal& hal, Driver& d) {
  const pmc::BackendInfo& info = hal.require_backend();
  d.backend_lib = std::make_unique<Library>(info.file);
  const auto* bd = d.backend_lib->descriptor<pmc::pmc_backend_descriptor>(PMC_BACKEND_SYMBOL);
  if (!bd || !bd->create)
    return "backend " + info.name + ": no descriptor with a factory in " + info.file.filename().string();
  char error[512] = "";
  d.backend.reset(bd->create(error, sizeof error));
  if (!d.backend) return "backend " + info.name + ": its factory failed: " + error;
  const std::string& model = hal.pmu().device_model;
  for (const pmc::PluginStatus& p : hal.plugins()) {
    if (p.kind != pmc::PluginKind::model || p.name != model || !p.error.empty()) continue;
    d.model_lib = std::make_unique<Library>(p.file);
    const auto* md = d.model_lib->descriptor<pmc::pmc_model_descriptor>(PMC_MODEL_SYMBOL);
    if (!md || !md->create) return "model " + model + ": no descriptor with a factory in " + p.file.filename().string();
    d.device.reset(md->create(&hal.cpu(), error, sizeof error));
    if (!d.device) return "model " + model + ": its factory failed: " + error;
    return "";
  }
  return "no device model '" + model + "' is loaded";
}

// Every RDMSR and WRMSR the driver makes, passed on to the device.
class Recorder final : public pmc::RegisterFile {
 public:
  struct Touch {
    std::uint32_t msr;
    bool write;
    std::string during;  // "start()", with the event
    auto operator<=>(const Touch&) const = default;
  };
  explicit Recorder(pmc::Device& device) : device_(device) {}
  std::uint64_t read(std::uint32_t msr) override {
    touches.insert({msr, false, during});
    return device_.read(msr);
  }
  void write(std::uint32_t msr, std::uint64_t value) override {
    touches.insert({msr, true, during});
    device_.write(msr, value);
  }
  std::uint64_t rdpmc(std::uint32_t index) override { return device_.rdpmc(index); }
  std::string during;
  std::set<Touch> touches;

 private:
  pmc::Device& device_;
};

// The driver's sequence for one event set, as a session drives it: program, zero the counters,
// start, the segment, stop, read the counters. Returns whether every step ran.
bool drive(Driver& d, Recorder& regs, const pmc::PmuContext& ctx, std::span<const pmc::Assignment> set,
           const pmc::Segment& segment, const std::string& what) {
  auto call = [&](const std::string& op, const std::function<void()>& f) {
    regs.during = op + " with " + what;
    return step("the driver's " + regs.during, f);
  };
  return call("program()", [&] { d.backend->program(regs, ctx, set); }) && call("write_counter()", [&] {
           for (const pmc::Assignment& a : set) d.backend->write_counter(regs, ctx, *a.counter, 0);
         }) &&
         call("start()", [&] { d.backend->start(regs, ctx, set); }) &&
         step("the model's run() with " + what, [&] { d.device->run(segment); }) &&
         call("stop()", [&] { d.backend->stop(regs, ctx, set); }) && call("read_counter()", [&] {
           for (const pmc::Assignment& a : set) (void)d.backend->read_counter(regs, ctx, *a.counter);
         });
}

std::string declared_list(const std::vector<std::uint32_t>& registers) {
  std::vector<std::uint32_t> sorted = registers;
  std::sort(sorted.begin(), sorted.end());
  std::string out;
  for (std::uint32_t r : sorted) out += (out.empty() ? "" : ", ") + hex(r);
  return out.empty() ? "none" : out;
}

}  // namespace

// Every MSR the driver reads or writes, for every event alone and for one event on every counter
// at once, is one its data file declares.
BOOST_AUTO_TEST_CASE(the_driver_touches_only_declared_registers) {
  for (const auto& [name, dumps] : targets())
    for (const auto& dump : dumps) {
      pmc::Hal hal = pmc::Hal::open(config_for(dump, name));
      const pmc::PmuInfo& pmu = hal.pmu();
      BOOST_TEST_CONTEXT(name << " on " << dump.filename() << " with model " << pmu.device_model) {
        Driver d;
        if (const std::string why = open_driver(hal, d); !why.empty()) {
          BOOST_ERROR(why);
          continue;
        }
        const pmc::PmuContext ctx{hal.cpu(), pmu, hal.events()};
        Recorder regs(*d.device);
        const pmc::OwnedSegment segment = pmc::OwnedSegment(10'000).signal("instructions", 2);
        // One event of known count on every counter at once.
        std::vector<pmc::Encoding> encodings;
        std::vector<const pmc::CounterInfo*> counters;
        for (const CounterPlan& p : plan_every_counter(hal))
          if (p.event) {
            encodings.push_back(p.event->encoding);
            counters.push_back(p.counter);
          }
        std::vector<pmc::Assignment> all;
        for (std::size_t i = 0; i < encodings.size(); ++i) all.push_back({counters[i], &encodings[i]});
        if (!all.empty()) drive(d, regs, ctx, all, segment, std::to_string(all.size()) + " counters on at once");
        // Every event alone, on the first counter it may use.
        for (const pmc::EventDef* e : hal.events().for_cpu(pmu.cpu_tag)) {
          pmc::Encoding enc;
          try {
            enc = hal.encode(default_string(*e));
          } catch (const pmc::Error&) {
            continue;  // the catalog check reports it
          }
          const pmc::CounterInfo* c = !enc.counters.empty() ? pmu.general(enc.counters.front())
                                      : enc.fixed         ? pmu.fixed(*enc.fixed)
                                                          : nullptr;
          if (!c) continue;
          const pmc::Assignment one[] = {{c, &enc}};
          drive(d, regs, ctx, one, segment, enc.name);
        }
        const std::vector<std::uint32_t>& declared = pmu.registers;
        std::set<std::pair<std::uint32_t, bool>> reported;
        for (const Recorder::Touch& t : regs.touches) {
          if (std::find(declared.begin(), declared.end(), t.msr) != declared.end()) continue;
          if (!reported.insert({t.msr, t.write}).second) continue;  // once per register
          BOOST_ERROR("the driver " << (t.write ? "wrote" : "read") << " MSR " << hex(t.msr) << " in its "
                                    << t.during << ", a register " << hal.require_backend().data.filename().string()
                                    << " does not declare (it declares " << declared_list(declared)
                                    << "): the msr access refuses it on hardware");
        }
      }
    }
}

// Each counter, driven alone straight on the model past 2^width three times, holds its count
// modulo 2^width: the model wraps (and a session, masking and folding, corrects the wraps).
BOOST_AUTO_TEST_CASE(the_model_wraps_each_counter_several_times) {
  constexpr std::uint64_t kWraps = 3;
  for (const auto& [name, dumps] : targets())
    for (const auto& dump : dumps) {
      pmc::Hal hal = pmc::Hal::open(config_for(dump, name));
      const pmc::PmuInfo& pmu = hal.pmu();
      BOOST_TEST_CONTEXT(name << " on " << dump.filename() << " with model " << pmu.device_model) {
        for (const CounterPlan& p : plan_every_counter(hal)) {
          const pmc::CounterInfo& c = *p.counter;
          if (!p.event || c.width >= 64 || c.width < 2 || p.event->encoding.granularity != 1) continue;
          Driver d;
          if (const std::string why = open_driver(hal, d); !why.empty()) {
            BOOST_ERROR(why);
            break;
          }
          const pmc::PmuContext ctx{hal.cpu(), pmu, hal.events()};
          Recorder regs(*d.device);
          // kWraps x 2^width + rest events: cycles, or 3 instructions a cycle.
          const std::uint64_t k = p.event->generic == "instructions" ? 3 : 1;
          const std::uint64_t rest = c.width >= 14 ? 12'345 : 3;
          const std::uint64_t count = (kWraps << c.width) + rest;
          const pmc::OwnedSegment segment = pmc::OwnedSegment(count / k).signal("instructions", 3);
          const pmc::Assignment one[] = {{&c, &p.event->encoding}};
          const std::string what = p.event->string + " on " +
                                   (c.kind == pmc::CounterKind::fixed ? "fixed counter " : "general counter ") +
                                   std::to_string(c.index);
          if (!drive(d, regs, ctx, one, segment, what)) continue;
          std::uint64_t raw = 0;
          if (!step("rdmsr " + hex(c.counter_msr) + " of the model", [&] { raw = d.device->read(c.counter_msr); }))
            continue;
          BOOST_TEST(raw == rest, what << ": after " << count << " events (" << kWraps << " x 2^" << c.width << " + "
                                       << rest << ") the counter register holds " << hex(raw) << ", expected "
                                       << hex(rest) << (raw >> c.width ? ": the model does not wrap at its width" : ""));
        }
      }
    }
}
