// What naming a profile's addresses costs (pmc profile, tools/pmc/profile_symbols.cpp): a large
// binary (default: the pmc program) mapped as the kernel would map it, then the entry of every
// function of its symbol table resolved to object, function and source line (the first lookup
// of a module reads its symbol table; source lines read its DWARF line tables), then all of them
// again (answered from the cache). Prints wall and CPU time of each step and per address.
//   pmc_bench_symbols [ELF]
#include "../tools/pmc/profile_symbols.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

namespace {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The file's executable PT_LOAD segments placed as a PIE at `base`, and its function entries.
bool read_elf(const std::string& path, std::uint64_t base, std::vector<pmc::MappedFile>& maps,
              std::vector<std::uint64_t>& functions) {
  elf_version(EV_CURRENT);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  GElf_Ehdr ehdr;
  if (!elf || !gelf_getehdr(elf, &ehdr)) return false;
  const std::uint64_t bias = ehdr.e_type == ET_DYN ? base : 0;
  std::size_t n = 0;
  elf_getphdrnum(elf, &n);
  for (std::size_t i = 0; i < n; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, static_cast<int>(i), &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    const std::uint64_t page = 4096, start = bias + (ph.p_vaddr & ~(page - 1));
    maps.push_back({1, start, bias + ph.p_vaddr + ph.p_memsz, ph.p_offset & ~(page - 1), path});
  }
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn));) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    for (std::size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) && GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_value &&
          sym.st_size)
        functions.push_back(bias + sym.st_value);
    }
  }
  elf_end(elf);
  ::close(fd);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : PMC_BIN_DIR "/pmc";
  std::vector<pmc::MappedFile> maps;
  std::vector<std::uint64_t> functions;
  if (!read_elf(path, 0x555555554000ull, maps, functions) || functions.empty()) {
    std::fprintf(stderr, "pmc_bench_symbols: %s: no ELF file with a symbol table\n", path.c_str());
    return 1;
  }
  for (bool lines : {false, true}) {
    std::printf("%s\n", lines ? "with source lines (--sort srcline):" : "functions only (the default table):");
    double w0 = wall_seconds(), c0 = cpu_seconds();
    pmc_cli::Symbolizer symbols(maps, lines);
    const pmc_cli::Frame& first = symbols.user(1, functions.front());
    double w1 = wall_seconds(), c1 = cpu_seconds();
    std::size_t named = 0, with_lines = 0;
    for (std::uint64_t pc : functions) {
      const pmc_cli::Frame& f = symbols.user(1, pc);
      named += f.named;
      with_lines += f.srcline.find(".cpp:") != std::string::npos || f.srcline.find(".hpp:") != std::string::npos ||
                    f.srcline.find(".h:") != std::string::npos;
    }
    double w2 = wall_seconds(), c2 = cpu_seconds();
    for (std::uint64_t pc : functions) (void)symbols.user(1, pc);
    double w3 = wall_seconds(), c3 = cpu_seconds();
    const double k = static_cast<double>(functions.size());
    std::printf("%s: %zu functions (%zu named, %zu with a source line); first: %s\n", path.c_str(), functions.size(),
                named, with_lines, first.symbol.c_str());
    std::printf("  open and first address: %8.1f ms wall, %8.1f ms CPU\n", (w1 - w0) * 1e3, (c1 - c0) * 1e3);
    std::printf("  every function, cold:   %8.1f ms wall, %8.1f ms CPU (%.2f us per address)\n", (w2 - w1) * 1e3,
                (c2 - c1) * 1e3, (c2 - c1) * 1e6 / k);
    std::printf("  every function, cached: %8.1f ms wall, %8.1f ms CPU (%.3f us per address)\n", (w3 - w2) * 1e3,
                (c3 - c2) * 1e3, (c3 - c2) * 1e6 / k);
  }
  return 0;
}
