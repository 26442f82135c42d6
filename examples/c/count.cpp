// count_cpp: pmchal from C++20, through <pmc/pmc.hpp> (docs/user-guide.md, "Embedding the
// library"): the same program as count.c.
//
//   count_cpp --cpu pentium-iii --workload p6-demo instructions INST_RETIRED:u
#include <pmc/pmc.hpp>

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  pmc::Config cfg;
  std::string workload;
  int first = 1;
  for (; first < argc; ++first) {
    const std::string a = argv[first];
    if (a == "--cpu" && first + 1 < argc) cfg.cpu = argv[++first];
    else if (a == "--workload" && first + 1 < argc) workload = argv[++first];
    else break;
  }
  if (first >= argc) {
    std::fprintf(stderr, "usage: count_cpp [--cpu DUMP] [--workload FILE] EVENT...\n");
    return 2;
  }
  try {
    const pmc::Hal hal = pmc::Hal::open(cfg);
    std::printf("cpu: %s\nbackend: %s\n", pmc::describe(hal.cpu()).c_str(),
                hal.backend() ? hal.backend()->name.c_str() : "(none)");
    pmc::Session s = hal.session();
    for (int i = first; i < argc; ++i) s.add(argv[i]);
    if (!workload.empty()) {
      (void)s.run(pmc::load_workload(pmc::resolve_data(workload, pmc::DataKind::workload)));
    } else {
      s.start();
      volatile double x = 0;
      for (int i = 0; i < 10'000'000; ++i) x = x + i * 0.5;
      s.stop();
    }
    for (const pmc::Reading& r : s.read())
      std::printf("%s = %llu%s%s\n", r.event.c_str(), static_cast<unsigned long long>(r.value), r.unit.empty() ? "" : " ",
                  r.unit.c_str());
  } catch (const pmc::Error& e) {
    std::fprintf(stderr, "count_cpp: %s\n", e.what());
    return 1;
  }
  return 0;
}
