// Plugin file checks: what a file in a plugin directory must be before it is loaded (a regular
// file, a complete ELF shared object for this machine, safe for root), and which plugin
// descriptors its dynamic symbol table defines, all read without loading it. Nothing here runs
// the file's code; loading is plugins.cpp's.
#include "plugins.hpp"
#include "root_safety.hpp"

#include <pmc/error.hpp>

#include <elf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace pmc::detail {

namespace {

#if defined(__x86_64__)
constexpr unsigned kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr unsigned kHostMachine = EM_AARCH64;
#elif defined(__i386__)
constexpr unsigned kHostMachine = EM_386;
#else
constexpr unsigned kHostMachine = EM_NONE;  // not checked
#endif
constexpr unsigned char kHostClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

bool read_at(int fd, void* buf, std::size_t n, std::uint64_t off) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(off));
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
    off += static_cast<std::uint64_t>(r);
  }
  return true;
}

// The file's first bytes, read once: the ELF header and, in every library a linker makes, the
// program headers too (read_at fetches what lies beyond).
struct Head {
  std::array<unsigned char, 4096> bytes{};
  std::size_t size = 0;
  bool read(int fd, void* out, std::size_t n, std::uint64_t off) const {
    if (off + n <= size) {
      std::memcpy(out, bytes.data() + off, n);
      return true;
    }
    return read_at(fd, out, n, off);
  }
};

template <class Ehdr, class Phdr>
std::optional<std::string> check_elf(int fd, std::uint64_t size, const Head& head) {
  Ehdr h{};
  if (!head.read(fd, &h, sizeof h, 0)) return "not an ELF file: shorter than an ELF header";
  if (h.e_type != ET_DYN) return fmt::format("not a shared library (ELF type {})", h.e_type);
  if (kHostMachine != EM_NONE && h.e_machine != kHostMachine)
    return fmt::format("built for another machine (ELF machine {}, this host is {})", h.e_machine, kHostMachine);
  if (h.e_phentsize != sizeof(Phdr) || h.e_phnum == 0)
    return "malformed ELF file: no usable program headers";
  const std::uint64_t ph_end = static_cast<std::uint64_t>(h.e_phoff) + std::uint64_t{h.e_phnum} * h.e_phentsize;
  if (h.e_phoff == 0 || ph_end > size)
    return fmt::format("truncated ELF file: its program headers end at byte {} of a {}-byte file", ph_end, size);
  if (h.e_shoff != 0 && static_cast<std::uint64_t>(h.e_shoff) + std::uint64_t{h.e_shnum} * h.e_shentsize > size)
    return fmt::format("truncated ELF file: its section headers lie beyond the end of the {}-byte file", size);
  for (unsigned i = 0; i < h.e_phnum; ++i) {
    Phdr p{};
    if (!head.read(fd, &p, sizeof p, h.e_phoff + std::uint64_t{i} * h.e_phentsize))
      return "truncated ELF file: cannot read its program headers";
    if (p.p_type != PT_LOAD && p.p_type != PT_DYNAMIC) continue;
    const std::uint64_t end = static_cast<std::uint64_t>(p.p_offset) + p.p_filesz;
    if (end < p.p_offset || end > size)
      return fmt::format("truncated ELF file: a loadable segment ends at byte {} of a {}-byte file", end, size);
  }
  return std::nullopt;
}

// Which plugin descriptors a library defines, read from its dynamic symbol table (the section
// headers' SHT_DYNSYM and the string table it links) without loading it. nullopt when the table
// cannot be found or read (no section headers, sizes out of bounds): the caller then loads the
// library to find out.
template <class Ehdr, class Shdr, class Sym>
std::optional<Exports> scan_exports(int fd, std::uint64_t size, const Head& head) {
  Ehdr h{};
  if (!head.read(fd, &h, sizeof h, 0) || h.e_shoff == 0 || h.e_shentsize != sizeof(Shdr) || h.e_shnum == 0 ||
      h.e_shnum > 4096)
    return std::nullopt;
  std::vector<Shdr> sections(h.e_shnum);
  if (!read_at(fd, sections.data(), sections.size() * sizeof(Shdr), h.e_shoff)) return std::nullopt;
  constexpr std::uint64_t kLimit = 16u << 20;  // no plugin's dynamic symbols come near this
  auto fits = [&](const Shdr& s) {
    return s.sh_size <= kLimit && s.sh_offset <= size && s.sh_size <= size - s.sh_offset;
  };
  for (const Shdr& sym : sections) {
    if (sym.sh_type != SHT_DYNSYM) continue;
    if (sym.sh_link >= sections.size()) return std::nullopt;
    const Shdr& str = sections[sym.sh_link];
    if (str.sh_type != SHT_STRTAB || !fits(sym) || !fits(str) || sym.sh_entsize != sizeof(Sym)) return std::nullopt;
    std::vector<Sym> symbols(sym.sh_size / sizeof(Sym));
    std::string names(str.sh_size, '\0');
    if (!read_at(fd, symbols.data(), symbols.size() * sizeof(Sym), sym.sh_offset) ||
        !read_at(fd, names.data(), names.size(), str.sh_offset))
      return std::nullopt;
    Exports out;
    for (const Sym& s : symbols) {
      if (s.st_shndx == SHN_UNDEF || s.st_name >= names.size()) continue;
      const std::string_view name(names.c_str() + s.st_name);
      if (name == PMC_BACKEND_SYMBOL) out.backend = true;
      if (name == PMC_MODEL_SYMBOL) out.model = true;
    }
    return out;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> unsafe_plugin_file(const std::filesystem::path& file) { return inspect_plugin_file(file, nullptr); }

std::optional<std::string> inspect_plugin_file(const std::filesystem::path& file, std::optional<Exports>* exports) {
  struct stat st {};
  if (scoped_stat(file, st) != 0)
    return fmt::format("cannot be read: {}", std::strerror(errno));
  if (!S_ISREG(st.st_mode)) {
    const char* kind = S_ISFIFO(st.st_mode)  ? "a named pipe"
                       : S_ISDIR(st.st_mode) ? "a directory"
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a regular file";
    return fmt::format("not loaded: it is {}, not a regular file", kind);
  }
  if (auto why = unsafe_for_root(file)) return why;
  Fd f;
  f.fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (f.fd < 0) return fmt::format("cannot be opened: {}", std::strerror(errno));
  struct stat fst {};
  if (::fstat(f.fd, &fst) != 0 || !S_ISREG(fst.st_mode)) return "not loaded: it is not a regular file";
  const auto size = static_cast<std::uint64_t>(fst.st_size);
  Head head;
  for (;;) {
    const ssize_t n = ::pread(f.fd, head.bytes.data(), head.bytes.size(), 0);
    if (n >= 0) {
      head.size = static_cast<std::size_t>(n);
      break;
    }
    if (errno != EINTR) return fmt::format("cannot be read: {}", std::strerror(errno));
  }
  const unsigned char* ident = head.bytes.data();
  if (head.size < EI_NIDENT || std::memcmp(ident, ELFMAG, SELFMAG) != 0) return "not an ELF shared library";
  if (ident[EI_CLASS] != kHostClass)
    return fmt::format("built for a {}-bit machine; this host is {}-bit", ident[EI_CLASS] == ELFCLASS64 ? 64 : 32,
                       sizeof(void*) * 8);
  if (ident[EI_DATA] != ELFDATA2LSB && ident[EI_DATA] != ELFDATA2MSB) return "malformed ELF file: unknown byte order";
  auto why = kHostClass == ELFCLASS64 ? check_elf<Elf64_Ehdr, Elf64_Phdr>(f.fd, size, head)
                                      : check_elf<Elf32_Ehdr, Elf32_Phdr>(f.fd, size, head);
  if (!why && exports && ident[EI_DATA] == (std::endian::native == std::endian::little ? ELFDATA2LSB : ELFDATA2MSB))
    *exports = kHostClass == ELFCLASS64 ? scan_exports<Elf64_Ehdr, Elf64_Shdr, Elf64_Sym>(f.fd, size, head)
                                        : scan_exports<Elf32_Ehdr, Elf32_Shdr, Elf32_Sym>(f.fd, size, head);
  return why;
}

}  // namespace pmc::detail
