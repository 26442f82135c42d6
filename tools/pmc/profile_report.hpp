// pmc profile of a command: the samples named and presented (profile_report.cpp): a table by
// function as perf report prints it (--sort dso,sym,srcline), the call graph as a tree (-g), the
// collapsed stacks (--folded) and the SVG flame graph (--flamegraph, profile_flamegraph.cpp).
#pragma once

#include "atomic_file.hpp"
#include "cli.hpp"
#include "profile_symbols.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace pmc_cli {

// perf report's sort keys that pmc profile knows.
enum class SortKey { dso, sym, srcline };
// "dso,sym" -> {dso, sym}; throws invalid_argument naming an unknown key.
std::vector<SortKey> parse_sort_keys(const std::string& text);
const char* sort_key_name(SortKey k);

// One sample stack with its frames named, root (the outermost caller) first, the sampled
// function last.
struct NamedStack {
  std::vector<const Frame*> frames;
  std::uint64_t samples = 0;
};
std::vector<NamedStack> name_stacks(const std::vector<pmc::SampledStack>& stacks, Symbolizer& symbols);
// A frame as the tree, the folded stacks and the flame graph name it: the function, else the
// object and the address in it ("libfoo.so+0x1139").
std::string frame_label(const Frame& f);

// One row of the table: the sampled function's values of the sort keys, its samples.
struct ProfileRow {
  std::vector<std::string> keys;  // one per sort key, in the order asked
  bool kernel = false;
  std::uint64_t samples = 0;
};
// The rows, most samples first (ties in key order).
std::vector<ProfileRow> profile_rows(const std::vector<NamedStack>& stacks, const std::vector<SortKey>& keys);
// What the table's numbers are: the sampled profile's samples, or the emulated event's count
// (pmc profile --emulate): the heading above the table ("" for the sampled profile's "Samples by
// dso,sym (N samples; ...)"), the column's title, and the noun for them in the last line.
struct RowUnit {
  std::string heading;
  std::string column = "Samples";
  std::string noun = "samples";
};
void print_rows(std::FILE* out, const std::vector<ProfileRow>& rows, const std::vector<SortKey>& keys,
                std::uint64_t total, std::size_t top, const RowUnit& unit = {});
// `count`: the member holding a row's number ("samples"; "count" for an emulated event's).
json rows_json(const std::vector<ProfileRow>& rows, const std::vector<SortKey>& keys, std::uint64_t total,
               const char* count = "samples");

// The call graph: every stack merged from the root, caller above callee, each node with its
// share of all samples; nodes under `limit` percent left out.
void print_call_tree(std::FILE* out, const std::vector<NamedStack>& stacks, std::uint64_t total, double limit = 0.5);
json stacks_json(const std::vector<NamedStack>& stacks);

// "main;work;hot_loop 1234" lines, root first, sorted.
std::string folded_stacks(const std::vector<NamedStack>& stacks);
// A self-contained SVG flame graph (profile_flamegraph.cpp); `title` heads it.
std::string flame_graph_svg(const std::vector<NamedStack>& stacks, const std::string& title);

}  // namespace pmc_cli
