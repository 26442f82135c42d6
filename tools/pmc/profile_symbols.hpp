// pmc profile: the sampled addresses named (profile_symbols.cpp). User addresses resolve through
// the executable mappings the kernel reported while sampling (Session::sampled_mappings()) to the
// mapped file, the address in it, its function (the ELF symbol tables) and, with debug info, the
// source line: elfutils' libdwfl, which also finds separate debug files (.gnu_debuglink,
// /usr/lib/debug/.build-id). Kernel addresses resolve through /proc/kallsyms when it shows the
// addresses to this user; otherwise they are "[kernel]" without a name.
#pragma once

#include <pmc/profile.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

struct Dwfl;  // elfutils' libdwfl.h

namespace pmc_cli {

struct Frame {
  std::string object;    // the file's name ("libc.so.6"), "[kernel.kallsyms]", a module "[ext4]", "[vdso]", "[unknown]"
  std::string symbol;    // the function, demangled; without one the address in the object, "0x1139"
  std::string srcline;   // "hot.c:12"; without debug info "function+0x1c", or "object[0x1139]"
  std::uint64_t offset = 0;  // the address in the object (as addr2line -e OBJECT takes it); kernel: in the function
  bool kernel = false;
  bool named = false;        // symbol is a function's name
};

// The name without an ELF symbol version: "__libc_start_main@@GLIBC_2.34" and
// "memcpy@GLIBC_2.2.5" are "__libc_start_main" and "memcpy"; other names unchanged.
std::string bare_symbol(std::string_view name);
// A symbol as profiles show it: bare (above) and demangled.
std::string shown_symbol(const char* name);

class Symbolizer {
 public:
  // `lines`: look up source lines too (the DWARF line tables: most of the cost of a cold lookup);
  // without them srcline is the function and the offset in it.
  explicit Symbolizer(std::vector<pmc::MappedFile> mappings, bool lines = true);
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;
  // The frame of an address of process `pid`. `caller`: the address is a return address (a
  // caller's frame of a call chain), looked up one byte before, in the call instruction.
  const Frame& user(int pid, std::uint64_t pc, bool caller = false);
  const Frame& kernel(std::uint64_t pc, bool caller = false);
  // The libdwfl session that names process `pid`'s addresses (its mapped files reported), which
  // the unwinder of --call-graph dwarf walks the stacks with (profile_unwind.cpp); nullptr when
  // none of its files could be read.
  Dwfl* dwfl(int pid);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pmc_cli
