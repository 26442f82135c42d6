// pmc profile --emulate's table by --sort keys, pictures and JSON rows (emulate_profile.hpp).
#include "emulate_profile.hpp"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <pmc/process.hpp>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <tuple>

namespace pmc_cli {

namespace {

namespace fs = std::filesystem;

// What the dynamic loader reads of a file: its interpreter, DT_NEEDED names, DT_RUNPATH/DT_RPATH.
struct Dynamic {
  std::string interpreter;
  std::vector<std::string> needed;
  std::vector<std::string> search;  // run path directories, $ORIGIN expanded
};

std::vector<std::string> split_path(const std::string& list, const std::string& origin) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= list.size()) {
    const std::size_t colon = std::min(list.find(':', at), list.size());
    std::string dir = list.substr(at, colon - at);
    for (const char* token : {"${ORIGIN}", "$ORIGIN"})
      for (std::size_t p; (p = dir.find(token)) != std::string::npos;) dir.replace(p, std::strlen(token), origin);
    if (!dir.empty()) out.push_back(dir);
    at = colon + 1;
  }
  return out;
}

std::optional<Dynamic> read_dynamic(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<Dynamic> out;
  if (Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr)) {
    std::size_t raw_size = 0;
    const char* raw = elf_rawfile(elf, &raw_size);
    std::size_t n = 0;
    if (elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &n) == 0) {
      Dynamic d;
      const std::string origin = fs::path(path).parent_path().string();
      std::string runpath, rpath;
      for (std::size_t i = 0; i < n; ++i) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, static_cast<int>(i), &ph) && ph.p_type == PT_INTERP && raw &&
            ph.p_offset + ph.p_filesz <= raw_size)
          d.interpreter = std::string(raw + ph.p_offset, strnlen(raw + ph.p_offset, ph.p_filesz));
      }
      for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || sh.sh_entsize == 0) continue;
        Elf_Data* data = elf_getdata(scn, nullptr);
        for (std::size_t j = 0; data && j < sh.sh_size / sh.sh_entsize; ++j) {
          GElf_Dyn dyn;
          if (!gelf_getdyn(data, static_cast<int>(j), &dyn)) break;
          const char* text = dyn.d_tag == DT_NEEDED || dyn.d_tag == DT_RUNPATH || dyn.d_tag == DT_RPATH
                                 ? elf_strptr(elf, sh.sh_link, dyn.d_un.d_val)
                                 : nullptr;
          if (!text) continue;
          if (dyn.d_tag == DT_NEEDED) d.needed.emplace_back(text);
          else if (dyn.d_tag == DT_RUNPATH) runpath = text;
          else rpath = text;
        }
      }
      d.search = split_path(runpath.empty() ? rpath : runpath, origin);  // DT_RUNPATH hides DT_RPATH
      out = std::move(d);
    }
    elf_end(elf);
  }
  ::close(fd);
  return out;
}

// The directories the loader searches after the run paths: $LD_LIBRARY_PATH, those listed in
// /etc/ld.so.conf.d/*.conf (what its cache is built from), then the system's.
std::vector<std::string> system_directories() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("LD_LIBRARY_PATH")) dirs = split_path(env, ".");
  std::error_code ec;
  std::set<fs::path> confs;
  for (const auto& entry : fs::directory_iterator("/etc/ld.so.conf.d", ec))
    if (entry.path().extension() == ".conf") confs.insert(entry.path());
  for (const fs::path& conf : confs) {
    std::ifstream in(conf);
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line[0] == '/') dirs.push_back(line.substr(0, line.find_first_of(" \t#")));
  }
  for (const char* d : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"})
    dirs.emplace_back(d);
  return dirs;
}

std::string canonical(const std::string& path) {
  std::error_code ec;
  const fs::path p = fs::canonical(path, ec);
  return ec ? path : p.string();
}

const Dwfl_Callbacks kOffline = {dwfl_build_id_find_elf, dwfl_standard_find_debuginfo, dwfl_offline_section_address,
                                 nullptr};

// Every function defined in the file (its symbol table, or its separate debug file's).
std::vector<std::string> defined_functions(const std::string& path) {
  std::vector<std::string> out;
  Dwfl* dwfl = dwfl_begin(&kOffline);
  if (!dwfl) return out;
  dwfl_report_begin(dwfl);
  Dwfl_Module* mod = dwfl_report_offline(dwfl, fs::path(path).filename().c_str(), path.c_str(), -1);
  dwfl_report_end(dwfl, nullptr, nullptr);
  const int n = mod ? dwfl_module_getsymtab(mod) : -1;
  for (int i = 1; i < n; ++i) {
    GElf_Sym sym;
    GElf_Addr addr = 0;
    GElf_Word section = 0;
    const char* name = dwfl_module_getsym_info(mod, i, &sym, &addr, &section, nullptr, nullptr);
    const int type = GELF_ST_TYPE(sym.st_info);
    if (name && *name && (type == STT_FUNC || type == STT_GNU_IFUNC) && sym.st_shndx != SHN_UNDEF)
      out.push_back(shown_symbol(name));
  }
  dwfl_end(dwfl);
  return out;
}

// The program Valgrind runs for the file: a script's interpreter ("#!/bin/sh -e": /bin/sh), else
// the file.
std::string program_of(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::string first;
  std::getline(in, first);
  if (first.rfind("#!", 0) != 0) return file;
  const auto begin = first.find_first_not_of(" \t", 2);
  if (begin == std::string::npos) return file;
  return first.substr(begin, first.find_first_of(" \t\r", begin) - begin);
}

}  // namespace

FunctionObjects::FunctionObjects(const std::string& executable) {
  elf_version(EV_CURRENT);
  const std::vector<std::string> system = system_directories();
  std::set<std::string> seen;
  std::string interpreter;
  // Breadth first from the executable, as the loader orders the global scope.
  std::vector<std::string> queue{canonical(program_of(executable))};
  for (std::size_t i = 0; i < queue.size(); ++i) {
    const std::string& file = queue[i];
    if (!seen.insert(file).second) continue;
    files_.push_back(file);
    const auto dynamic = read_dynamic(file);
    if (!dynamic) continue;
    if (interpreter.empty()) interpreter = dynamic->interpreter;
    for (const std::string& name : dynamic->needed) {
      if (name.find('/') != std::string::npos) {
        queue.push_back(canonical(name));
        continue;
      }
      std::vector<std::string> dirs = dynamic->search;
      dirs.insert(dirs.end(), system.begin(), system.end());
      for (const std::string& dir : dirs) {
        const fs::path candidate = fs::path(dir) / name;
        std::error_code ec;
        if (fs::is_regular_file(candidate, ec) && read_dynamic(candidate.string())) {
          queue.push_back(canonical(candidate.string()));
          break;
        }
      }
    }
  }
  if (!interpreter.empty() && !seen.count(canonical(interpreter))) files_.push_back(canonical(interpreter));
  for (const std::string& file : files_) {
    const std::string object = fs::path(file).filename().string();
    for (std::string& name : defined_functions(file)) objects_.emplace(std::move(name), object);  // the first file's
  }
}

const std::string& FunctionObjects::object(const std::string& function) {
  if (auto it = asked_.find(function); it != asked_.end()) return it->second;
  std::string object = "[unknown]";
  // Valgrind's name for the C library's function that called main (--show-below-main=no).
  const std::vector<std::string> names =
      function == "(below main)" ? std::vector<std::string>{"__libc_start_call_main", "__libc_start_main"}
                                 : std::vector<std::string>{shown_symbol(function.c_str())};
  for (const std::string& name : names)
    if (auto it = objects_.find(name); it != objects_.end()) {
      object = it->second;
      break;
    }
  return asked_.emplace(function, std::move(object)).first->second;
}

EmulatedProfile::EmulatedProfile(const Options& o) : o_(o), keys_(parse_sort_keys(o.sort.value_or("dso,sym"))) {
  if (!o.folded.empty()) folded_ = std::make_unique<AtomicFile>(o.folded, "--folded");
  if (!o.flamegraph.empty()) flamegraph_ = std::make_unique<AtomicFile>(o.flamegraph, "--flamegraph");
}

bool EmulatedProfile::show(const pmc::ProgramActivity& a, const pmc::EmulatedCounts& counts, json* doc,
                           std::FILE* out) {
  if (!doc && !o_.sort && !folded_ && !flamegraph_) return false;  // the function and line tables alone
  const std::string& event = counts.events.front().event;
  const std::vector<std::uint64_t>& weight = counts.per_line.front();
  FunctionObjects objects(pmc::find_executable(o_.command.front()).string());
  // One stack per source line of cachegrind's output: its object, then its function, which the
  // line is the source line of (srcline). Frames shared by the stacks, by their keys.
  std::map<std::tuple<std::string, std::string, std::string>, Frame> frames;
  auto frame = [&](const std::string& object, const std::string& symbol, const std::string& srcline) {
    Frame& f = frames[{object, symbol, srcline}];
    f.object = object;
    f.symbol = symbol;
    f.srcline = srcline;
    f.named = true;
    return &f;
  };
  std::vector<NamedStack> stacks;
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < a.lines.size(); ++i) {
    if (weight[i] == 0) continue;
    const pmc::SourceLine& l = a.lines[i];
    const std::string& fn = a.functions[l.function].name;
    const std::string& object = objects.object(fn);
    const std::string srcline =
        l.file == "???" || l.line == 0 ? "??:0" : fmt::format("{}:{}", fs::path(l.file).filename().string(), l.line);
    stacks.push_back({{frame(object, object, ""), frame(object, shown_symbol(fn.c_str()), srcline)}, weight[i]});
    total += weight[i];
  }
  const std::string title = fmt::format("pmc profile --emulate {} ({})", quote_command(o_.command), event);
  if (folded_) folded_->commit(folded_stacks(stacks));
  if (flamegraph_) flamegraph_->commit(flame_graph_svg(stacks, title));
  const std::vector<ProfileRow> rows = profile_rows(stacks, keys_);
  if (doc) {
    json sort = json::array();
    for (SortKey k : keys_) sort.push_back(sort_key_name(k));
    (*doc)["sort"] = sort;
    (*doc)["row_event"] = event;
    (*doc)["rows"] = rows_json(rows, keys_, total, "count");
  }
  if (!out || !o_.sort) return false;
  std::vector<const char*> names;
  for (SortKey k : keys_) names.push_back(sort_key_name(k));
  RowUnit unit;
  unit.heading = fmt::format("{} by {} ({} {}, emulated; [.] user)", event, fmt::join(names, ","), group_digits(total),
                             event);
  unit.column = event;
  unit.noun = event;
  print_rows(out, rows, keys_, total, o_.top, unit);
  return true;
}

}  // namespace pmc_cli
