// pmc profile: sampled addresses to objects, functions and source lines (profile_symbols.hpp).
#include "profile_symbols.hpp"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <gelf.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cxxabi.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

namespace pmc_cli {

std::string shown_symbol(const char* name) {
  const std::string bare = bare_symbol(name);
  int status = -1;
  char* out = abi::__cxa_demangle(bare.c_str(), nullptr, nullptr, &status);
  std::string text = status == 0 && out ? out : bare;
  std::free(out);
  return text;
}

namespace {

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "file.c:12" for the address, or "". libdwfl finds the compilation unit through the address
// ranges table (.debug_aranges), which Clang writes only when asked (-gdwarf-aranges); without a
// match there, the units' own ranges are searched.
std::string source_line(Dwfl_Module* mod, Dwarf_Addr at) {
  const char* file = nullptr;
  int lineno = 0;
  if (Dwfl_Line* line = dwfl_module_getsrc(mod, at)) file = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr);
  if (!file) {
    Dwarf_Addr bias = 0;
    Dwarf* dwarf = dwfl_module_getdwarf(mod, &bias);
    Dwarf_Off offset = 0, next = 0;
    std::size_t header = 0;
    while (dwarf && !file && dwarf_nextcu(dwarf, offset, &next, &header, nullptr, nullptr, nullptr) == 0) {
      Dwarf_Die unit;
      if (dwarf_offdie(dwarf, offset + header, &unit) && dwarf_haspc(&unit, at - bias) == 1)
        if (Dwarf_Line* line = dwarf_getsrc_die(&unit, at - bias)) {
          file = dwarf_linesrc(line, nullptr, nullptr);
          if (dwarf_lineno(line, &lineno) != 0) lineno = 0;
        }
      offset = next;
    }
  }
  return file && lineno > 0 ? fmt::format("{}:{}", base_name(file), lineno) : std::string();
}

// Where the file's address 0 lands (the load bias) when the kernel mapped it at `start` from
// file offset `pgoff`: from the PT_LOAD segment that begins at that page of the file. nullopt
// when the file cannot be read as ELF or no segment begins there.
std::optional<std::uint64_t> load_bias(const std::string& path, std::uint64_t start, std::uint64_t pgoff) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<std::uint64_t> bias;
  if (Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr)) {
    std::size_t n = 0;
    GElf_Ehdr ehdr;
    if (gelf_getehdr(elf, &ehdr) && elf_getphdrnum(elf, &n) == 0) {
      const std::uint64_t page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
      for (std::size_t i = 0; i < n && !bias; ++i) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, static_cast<int>(i), &ph) || ph.p_type != PT_LOAD) continue;
        if ((ph.p_offset & ~(page - 1)) == pgoff) bias = start - (ph.p_vaddr & ~(page - 1));
      }
      if (bias && ehdr.e_type == ET_EXEC) bias = 0;
    }
    elf_end(elf);
  }
  ::close(fd);
  return bias;
}

// The vDSO's image, which the kernel maps into every process of this kernel and ABI alike: this
// process's copy (its ELF header at getauxval(AT_SYSINFO_EHDR), the [vdso] mapping of
// /proc/self/maps giving its size) in a memory file, so that a sampled process's "[vdso]" has
// names too. fd -1 when there is none.
struct VdsoImage {
  int fd = -1;
  std::uint64_t size = 0;
};

const VdsoImage& vdso_image() {
  static const VdsoImage image = [] {
    VdsoImage v;
    const auto start = static_cast<std::uint64_t>(getauxval(AT_SYSINFO_EHDR));
    if (start == 0) return v;
    std::ifstream maps("/proc/self/maps");
    for (std::string line; std::getline(maps, line);) {
      if (std::strtoull(line.c_str(), nullptr, 16) != start) continue;
      const std::uint64_t end = std::strtoull(line.c_str() + line.find('-') + 1, nullptr, 16);
      const int memfd = ::memfd_create("pmc-vdso", MFD_CLOEXEC);
      if (memfd < 0 || end <= start) break;
      const auto* bytes = reinterpret_cast<const char*>(static_cast<std::uintptr_t>(start));
      if (::write(memfd, bytes, end - start) != static_cast<ssize_t>(end - start)) {
        ::close(memfd);
        break;
      }
      v.fd = memfd;
      v.size = end - start;
      break;
    }
    return v;
  }();
  return image;
}

}  // namespace

std::string bare_symbol(std::string_view name) {
  // "clock_gettime@@GLIBC_2.17" (the default version), "memcpy@GLIBC_2.2.5" (an older one): the
  // version is letters, digits, '_' and '.' after the last '@' (or "@@").
  const auto at = name.rfind('@');
  if (at == std::string_view::npos || at + 1 == name.size()) return std::string(name);
  for (char c : name.substr(at + 1))
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return std::string(name);
  const std::size_t end = at > 0 && name[at - 1] == '@' ? at - 1 : at;
  return end == 0 ? std::string(name) : std::string(name.substr(0, end));
}

namespace {

const Dwfl_Callbacks kCallbacks = {
    dwfl_build_id_find_elf, dwfl_standard_find_debuginfo, dwfl_offline_section_address, nullptr};

}  // namespace

// One address space: the process's mapped files reported to a Dwfl of its own (address spaces
// differ, so one per process), and what its addresses resolved to.
struct Space {
  std::vector<pmc::MappedFile> maps;  // ascending
  Dwfl* dwfl = nullptr;
  std::unordered_map<std::uint64_t, Frame> frames;
  ~Space() {
    if (dwfl) dwfl_end(dwfl);
  }
};

struct Symbolizer::Impl {
  std::map<int, Space> spaces;
  // /proc/kallsyms: address -> name, and the module ("" for the kernel's own).
  struct KernelSymbol {
    std::uint64_t address;
    std::string name, module;
  };
  std::vector<KernelSymbol> kallsyms;
  bool kallsyms_read = false;
  std::unordered_map<std::uint64_t, Frame> kernel_frames;
  bool lines = true;

  Space& space(int pid);
  void load_kallsyms();
};

Space& Symbolizer::Impl::space(int pid) {
  Space& s = spaces[pid];
  if (s.dwfl || s.maps.empty()) return s;
  s.dwfl = dwfl_begin(&kCallbacks);
  if (!s.dwfl) return s;
  dwfl_report_begin(s.dwfl);
  std::set<std::string> reported;
  for (const pmc::MappedFile& m : s.maps) {
    // A process of another ABI (a 32-bit one) maps another image: named only when the sizes agree.
    if (m.path == "[vdso]" && m.offset == 0 && vdso_image().fd >= 0 && m.end - m.start == vdso_image().size &&
        !reported.count(m.path)) {
      const int fd = ::dup(vdso_image().fd);  // consumed by dwfl_report_elf when it succeeds
      if (fd >= 0 && dwfl_report_elf(s.dwfl, "[vdso]", "[vdso]", fd, m.start, false)) reported.insert(m.path);
      else if (fd >= 0) ::close(fd);
      continue;
    }
    if (m.path.empty() || m.path[0] != '/' || reported.count(m.path)) continue;
    const auto bias = load_bias(m.path, m.start, m.offset);
    if (!bias) continue;
    if (dwfl_report_elf(s.dwfl, base_name(m.path).c_str(), m.path.c_str(), -1, *bias, false)) reported.insert(m.path);
  }
  dwfl_report_end(s.dwfl, nullptr, nullptr);
  return s;
}

void Symbolizer::Impl::load_kallsyms() {
  kallsyms_read = true;
  std::ifstream in("/proc/kallsyms");
  std::string line;
  bool any_address = false;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string address, type, name, module;
    if (!(fields >> address >> type >> name)) continue;
    if (type != "t" && type != "T" && type != "w" && type != "W") continue;  // code only
    fields >> module;  // "[ext4]" for a module's
    const std::uint64_t a = std::strtoull(address.c_str(), nullptr, 16);
    any_address = any_address || a != 0;
    kallsyms.push_back({a, std::move(name), module});
  }
  if (!any_address) kallsyms.clear();  // kptr_restrict hides them from this user: no names
  std::sort(kallsyms.begin(), kallsyms.end(),
            [](const KernelSymbol& a, const KernelSymbol& b) { return a.address < b.address; });
}

Symbolizer::Symbolizer(std::vector<pmc::MappedFile> mappings, bool lines) : impl_(std::make_unique<Impl>()) {
  impl_->lines = lines;
  elf_version(EV_CURRENT);  // before load_bias's elf_begin
  for (auto& m : mappings) impl_->spaces[m.pid].maps.push_back(std::move(m));
}

Symbolizer::~Symbolizer() = default;

const Frame& Symbolizer::user(int pid, std::uint64_t pc, bool caller) {
  const std::uint64_t at = caller && pc > 0 ? pc - 1 : pc;
  Space& s = impl_->space(pid);
  if (auto it = s.frames.find(at); it != s.frames.end()) return it->second;
  Frame f;
  GElf_Off in_symbol = 0;
  const auto map = std::find_if(s.maps.begin(), s.maps.end(),
                                [&](const pmc::MappedFile& m) { return m.start <= at && at < m.end; });
  Dwfl_Module* mod = s.dwfl ? dwfl_addrmodule(s.dwfl, at) : nullptr;
  if (mod) {
    const char* name = dwfl_module_info(mod, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
    f.object = name ? name : "[unknown]";
    Dwarf_Addr relative = at;
    f.offset = dwfl_module_relocate_address(mod, &relative) >= 0 ? relative : at;
    GElf_Sym sym;
    if (const char* symbol = dwfl_module_addrinfo(mod, at, &in_symbol, &sym, nullptr, nullptr, nullptr)) {
      f.symbol = shown_symbol(symbol);
      f.named = true;
    }
    if (impl_->lines) f.srcline = source_line(mod, at);
  } else if (map != s.maps.end()) {  // not an ELF file we could read: [vdso], a deleted file
    f.object = map->path.empty() ? "[anon]" : base_name(map->path);
    f.offset = at - map->start + map->offset;
  } else {
    f.object = "[unknown]";
    f.offset = at;
  }
  if (!f.named) f.symbol = fmt::format("{:#x}", f.offset);
  if (f.srcline.empty())  // no line table: the function and the offset in it, else the object's address
    f.srcline = f.named ? fmt::format("{}+{:#x}", f.symbol, in_symbol) : fmt::format("{}[{:#x}]", f.object, f.offset);
  return s.frames.emplace(at, std::move(f)).first->second;
}

Dwfl* Symbolizer::dwfl(int pid) { return impl_->space(pid).dwfl; }

const Frame& Symbolizer::kernel(std::uint64_t pc, bool caller) {
  const std::uint64_t at = caller && pc > 0 ? pc - 1 : pc;
  if (auto it = impl_->kernel_frames.find(at); it != impl_->kernel_frames.end()) return it->second;
  if (!impl_->kallsyms_read) impl_->load_kallsyms();
  Frame f;
  f.kernel = true;
  const auto& syms = impl_->kallsyms;
  const auto next = std::upper_bound(syms.begin(), syms.end(), at,
                                     [](std::uint64_t a, const Impl::KernelSymbol& s) { return a < s.address; });
  if (next != syms.begin()) {
    const auto& s = *std::prev(next);
    f.object = s.module.empty() ? "[kernel.kallsyms]" : s.module;
    f.symbol = s.name;
    f.offset = at - s.address;
    f.named = true;
  } else {
    f.object = "[kernel]";
    f.offset = at;
    f.symbol = fmt::format("{:#x}", at);
  }
  f.srcline = f.named ? fmt::format("{}+{:#x}", f.symbol, f.offset) : fmt::format("{}[{:#x}]", f.object, at);
  return impl_->kernel_frames.emplace(at, std::move(f)).first->second;
}

}  // namespace pmc_cli
