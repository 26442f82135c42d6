// The plugin loader. Nothing in a plugin directory may crash, hang or stop the host: a FIFO, a
// directory, a truncated or foreign file, a library with a bad descriptor or a factory that
// fails is reported by file and reason, and the other plugins still load.
#include "plugins.hpp"

#include <pmc/error.hpp>

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <array>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace pmc::detail {

namespace {

// dlopen and dlclose are not safe to call concurrently on every platform (and glibc's own lock
// is one ThreadSanitizer cannot see): load and unload one library at a time. Recursive: a load
// that fails drops its library, unloading it, while it holds the lock.
// Never destroyed: a Hal destroyed at exit, after this file's statics, still unloads under it.
std::recursive_mutex& load_mutex() {
  static auto* m = new std::recursive_mutex;
  return *m;
}

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

std::string mode_text(mode_t m) { return fmt::format("{:04o}", static_cast<unsigned>(m & 07777)); }

}  // namespace

namespace {
// What the current RootCheckScope of this thread remembers (nullptr: no scope).
struct RootChecks {
  bool root = ::geteuid() == 0;
  std::unordered_set<std::string> safe_dirs;                    // found safe, with all above them
  std::unordered_map<std::string, std::filesystem::path> real;  // directory -> its real path
};
thread_local RootChecks* t_checks = nullptr;

// The real path of `file` (symbolic links resolved), its directory's looked up once per scope.
std::filesystem::path real_path(const std::filesystem::path& file) {
  std::error_code ec;
  struct stat st {};
  if (t_checks && file.has_parent_path() && ::lstat(file.c_str(), &st) == 0 && !S_ISLNK(st.st_mode)) {
    const std::string dir = file.parent_path().native();
    auto it = t_checks->real.find(dir);
    if (it == t_checks->real.end()) {
      std::filesystem::path real = std::filesystem::canonical(file.parent_path(), ec);
      if (!ec) it = t_checks->real.emplace(dir, std::move(real)).first;
    }
    if (it != t_checks->real.end()) return it->second / file.filename();
  }
  std::filesystem::path p = std::filesystem::canonical(file, ec);
  if (ec) p = std::filesystem::absolute(file, ec);
  if (ec) p = file;
  return p;
}
}  // namespace

RootCheckScope::RootCheckScope() {
  if (!t_checks) {
    t_checks = new RootChecks;
    owner_ = true;
  }
}

RootCheckScope::~RootCheckScope() {
  if (!owner_) return;
  delete t_checks;
  t_checks = nullptr;
}

std::optional<std::string> unsafe_for_root(const std::filesystem::path& file) {
  if (t_checks ? !t_checks->root : ::geteuid() != 0) return std::nullopt;
  // The real path: a symbolic link leads to a file others may control in a directory that is
  // not above the name given.
  const std::filesystem::path p = real_path(file);
  // The file itself, then every directory above it (a writable directory lets others replace
  // the file). As sudo and ssh do for the files they trust. Within a RootCheckScope a directory
  // found safe (with all above it) is not walked again.
  std::vector<std::string> checked;
  bool first = true;
  for (std::filesystem::path at = p;; at = at.parent_path()) {
    if (!first && t_checks && t_checks->safe_dirs.count(at.native())) break;
    struct stat st {};
    if (::stat(at.c_str(), &st) != 0) break;
    const char* what = S_ISDIR(st.st_mode) ? "directory" : "file";
    if (st.st_uid != 0)
      return fmt::format("refused while running as root: {} {} is owned by user {}, not root", what, at.string(),
                         st.st_uid);
    const bool sticky_root_dir = !first && S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) && st.st_uid == 0;
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !sticky_root_dir)
      return fmt::format("refused while running as root: {} {} is writable by {} (mode {})", what, at.string(),
                         (st.st_mode & S_IWOTH) ? "everyone" : "its group", mode_text(st.st_mode));
    if (!first) checked.push_back(at.native());
    first = false;
    if (at == at.parent_path()) break;
  }
  if (t_checks)
    for (auto& d : checked) t_checks->safe_dirs.insert(std::move(d));
  return std::nullopt;
}

std::optional<std::string> unsafe_plugin_file(const std::filesystem::path& file) { return inspect_plugin_file(file, nullptr); }

std::optional<std::string> inspect_plugin_file(const std::filesystem::path& file, std::optional<Exports>* exports) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0)
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

namespace {

// The descriptor a library exports under `symbol`: a pointer variable (PMC_EXPORT_*), checked
// for null. Returns nullptr and sets `why` when it is unusable.
const void* descriptor_pointer(boost::dll::shared_library& lib, const char* symbol, std::string& why) {
  void* slot = ::dlsym(lib.native(), symbol);
  if (!slot) return nullptr;
  const void* p = *static_cast<const void* const*>(slot);
  if (!p) why = fmt::format("its '{}' descriptor is a null pointer", symbol);
  return p;
}

// The version checks every descriptor gets: the same major, not a newer minor, a size at least
// the host's.
std::optional<std::string> check_version(std::uint32_t abi, std::uint32_t size, std::size_t needed, const char* what) {
  const unsigned major = abi >> 24, minor = (abi >> 16) & 0xFF;
  if (major != kAbiMajor)
    return fmt::format("{} built for plugin ABI {}.{} but this pmchal speaks ABI {}.{}; rebuild the plugin", what,
                       major, minor, kAbiMajor, kAbiMinor);
  if (minor > kAbiMinor)
    return fmt::format("{} built for plugin ABI {}.{}, newer than this pmchal's {}.{} (it may use what this pmchal "
                       "lacks); update pmchal or rebuild the plugin",
                       what, major, minor, kAbiMajor, kAbiMinor);
  if (size < needed)
    return fmt::format("its {} descriptor is {} bytes, smaller than the {} this pmchal needs", what, size, needed);
  return std::nullopt;
}

}  // namespace

namespace {

PluginLoad failed_load(const std::filesystem::path& file, const std::string& message) {
  PluginLoad out;
  out.status.file = file;
  out.status.error = fmt::format("{}: {}", file.string(), message);
  return out;
}

// load_plugin() after its file checks.
PluginLoad load_checked(const std::filesystem::path& file) {
  PluginLoad out;
  out.status.file = file;
  auto fail = [&](const std::string& message) { return failed_load(file, message); };

  std::lock_guard<std::recursive_mutex> lock(load_mutex());
  std::shared_ptr<boost::dll::shared_library> library(new boost::dll::shared_library,
                                                      [](boost::dll::shared_library* l) {
                                                        std::lock_guard<std::recursive_mutex> unload(load_mutex());
                                                        delete l;
                                                      });
  std::error_code ec;
  dlerror();  // clear any stale message
  library->load(file, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, ec);
  if (ec) {
    const char* why = dlerror();
    return fail(fmt::format("cannot load the library: {}", why ? why : ec.message()));
  }

  std::string why;
  const auto* bd = static_cast<const pmc_backend_descriptor*>(descriptor_pointer(*library, PMC_BACKEND_SYMBOL, why));
  if (!why.empty()) return fail(why);
  const auto* md = static_cast<const pmc_model_descriptor*>(descriptor_pointer(*library, PMC_MODEL_SYMBOL, why));
  if (!why.empty()) return fail(why);
  if (!bd && !md) {
    const bool v1 = ::dlsym(library->native(), "pmc_backend_v1") != nullptr;
    return fail(v1 ? fmt::format("a backend for plugin ABI 1 (it exports 'pmc_backend_v1'); this pmchal speaks ABI "
                                 "{}.{}: rebuild the plugin against it",
                                 kAbiMajor, kAbiMinor)
                   : fmt::format("not a pmchal plugin: it exports neither '{}' nor '{}'", PMC_BACKEND_SYMBOL,
                                 PMC_MODEL_SYMBOL));
  }

  if (md) {
    if (auto bad = check_version(md->abi_version, md->struct_size, sizeof(pmc_model_descriptor), "model"))
      return fail(*bad);
    if (!md->name || !*md->name || !md->create) return fail("its model descriptor has no name or no factory");
    out.model = std::make_shared<LoadedModel>();
    out.model->library = library;
    out.model->descriptor = md;
    out.model->name = md->name;
    out.model->file = file.string();
    PluginStatus s;
    s.file = file;
    s.kind = PluginKind::model;
    s.name = md->name;
    s.description = md->description ? md->description : "";
    out.model_status = s;
  }
  if (bd) {
    if (auto bad = check_version(bd->abi_version, bd->struct_size, sizeof(pmc_backend_descriptor), "backend"))
      return fail(*bad);
    if (!bd->name || !*bd->name || !bd->create) return fail("its backend descriptor has no name or no factory");
    std::array<char, 512> error{};
    std::unique_ptr<Backend> backend;
    try {
      backend.reset(bd->create(error.data(), error.size()));
    } catch (...) {  // a factory must not throw; one that does is broken, reported like a failure
      return fail(fmt::format("the factory of backend '{}' threw, which a factory must not do", bd->name));
    }
    error.back() = '\0';
    if (!backend)
      return fail(fmt::format("the factory of backend '{}' failed{}", bd->name,
                              error[0] ? fmt::format(": {}", error.data()) : std::string(" and gave no reason")));
    const bool profiles = backend->profiling() != nullptr;
    if (profiles != ((bd->capabilities & kBackendProfiles) != 0))
      return fail(fmt::format("backend '{}' {} profiling in its descriptor but its driver {}", bd->name,
                              profiles ? "does not declare" : "declares", profiles ? "has it" : "has none"));
    out.backend = std::make_shared<LoadedBackend>();
    out.backend->library = library;
    out.backend->backend = std::move(backend);
    out.backend->name = bd->name;
    out.backend->file = file.string();
    out.backend->capabilities = bd->capabilities;
    out.status.kind = PluginKind::backend;
    out.status.name = bd->name;
  } else {
    out.status = *out.model_status;
    out.model_status.reset();
  }
  return out;
}

// A library whose backend or model name an earlier one has: reported, not used.
void mark_shadowed(PluginStatus& s, const std::filesystem::path& file, const char* kind, const std::string& name,
                   const std::string& winner) {
  s.error = fmt::format("{}: {} '{}' is already loaded from {}; this copy is ignored", file.string(), kind, name, winner);
  s.name.clear();
}

}  // namespace

PluginLoad load_plugin(const std::filesystem::path& file) {
  if (auto why = unsafe_plugin_file(file)) return failed_load(file, *why);
  return load_checked(file);
}

void ModelRegistry::add(const PluginLoad& p) {
  if (p.deferred) deferred.push_back(p.status.file);
  else if (p.model) models.push_back(p.model);
  else if (!p.backend && !p.status.error.empty()) broken.push_back(p.status);
}

void ModelRegistry::load_deferred() const {
  std::call_once(deferred_once_, [this] {
    for (const auto& file : deferred) {
      PluginLoad p = load_plugin(file);  // checked again: the file may have changed since
      if (p.backend) {  // not what its symbol table said: a model-only library that defines a backend
        p = failed_load(file, "it defines a backend descriptor it did not export when the plugins were listed");
      }
      if (p.model) {
        for (const auto& m : models)
          if (m->name == p.model->name) {
            mark_shadowed(p.status, file, "model", p.model->name, m->file);
            p.model.reset();
            break;
          }
      }
      if (p.model) {
        models.push_back(p.model);
      } else if (!p.status.error.empty()) {
        p.status.kind = PluginKind::model;  // what its symbol table said it is
        broken.push_back(p.status);
      }
      deferred_loads.push_back(std::move(p));
    }
  });
}

std::vector<PluginLoad> load_plugins(const std::vector<std::filesystem::path>& dirs) {
  namespace fs = std::filesystem;
  std::vector<PluginLoad> out;
  auto report = [&](const fs::path& file, std::string message) {
    PluginLoad p;
    p.status.file = file;
    p.status.error = fmt::format("{}: {}", file.string(), message);
    out.push_back(std::move(p));
  };
  for (const auto& dir : dirs) {
    if (dir.empty()) {
      PluginLoad p;
      p.status.error = "an empty plugin directory name (\"\") is ignored: plugins are never loaded from the current "
                       "directory implicitly";
      out.push_back(std::move(p));
      continue;
    }
    std::error_code ec;
    const fs::file_status st = fs::status(dir, ec);
    if (ec || !fs::is_directory(st)) {
      report(dir, ec && ec != std::errc::no_such_file_or_directory
                      ? fmt::format("plugin directory cannot be read: {}", ec.message())
                      : std::string("plugin directory does not exist"));
      continue;
    }
    std::vector<fs::path> files;
    fs::directory_iterator it(dir, ec), end;
    if (ec) {
      report(dir, fmt::format("plugin directory cannot be read: {}", ec.message()));
      continue;
    }
    for (; it != end; it.increment(ec)) {
      if (ec) {
        report(dir, fmt::format("plugin directory cannot be read completely: {}", ec.message()));
        break;
      }
      if (it->path().extension() == ".so") files.push_back(it->path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      // A library that defines only a device model is loaded when a model is first needed
      // (ModelRegistry::load_deferred): counting on real hardware needs none.
      std::optional<Exports> exports;
      if (auto why = inspect_plugin_file(f, &exports)) {
        out.push_back(failed_load(f, *why));
        continue;
      }
      if (exports && exports->model && !exports->backend) {
        PluginLoad p;
        p.status.file = f;
        p.status.kind = PluginKind::model;
        p.deferred = true;
        out.push_back(std::move(p));
        continue;
      }
      PluginLoad p = load_checked(f);
      for (const auto& o : out) {
        if (p.backend && o.backend && o.backend->name == p.backend->name) {
          mark_shadowed(p.status, f, "backend", p.backend->name, o.backend->file);
          p.backend.reset();
        }
        if (p.model && o.model && o.model->name == p.model->name) {
          mark_shadowed(p.model_status ? *p.model_status : p.status, f, "model", p.model->name, o.model->file);
          p.model.reset();
        }
      }
      out.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace pmc::detail
