// pmc profile of a command: the named samples as a table, a call tree, collapsed stacks
// (profile_report.hpp).
#include "profile_report.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>

namespace pmc_cli {

std::vector<SortKey> parse_sort_keys(const std::string& text) {
  std::vector<SortKey> keys;
  std::size_t at = 0;
  for (;;) {
    const std::size_t comma = text.find(',', at);
    const std::string key = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    if (key == "dso") keys.push_back(SortKey::dso);
    else if (key == "sym") keys.push_back(SortKey::sym);
    else if (key == "srcline") keys.push_back(SortKey::srcline);
    else
      throw pmc::Error(pmc::errc::invalid_argument,
                       fmt::format("unknown --sort key '{}' (pmc profile sorts by dso, sym and srcline, "
                                   "comma-separated, as perf report does)",
                                   key));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return keys;
}

const char* sort_key_name(SortKey k) {
  switch (k) {
    case SortKey::dso: return "dso";
    case SortKey::sym: return "sym";
    case SortKey::srcline: return "srcline";
  }
  return "?";
}

std::vector<NamedStack> name_stacks(const std::vector<pmc::SampledStack>& stacks, Symbolizer& symbols) {
  std::vector<NamedStack> out;
  out.reserve(stacks.size());
  for (const pmc::SampledStack& s : stacks) {
    NamedStack n;
    n.samples = s.samples;
    // Root first: the user frames from the outermost caller, then the kernel's.
    for (std::size_t i = s.user.size(); i-- > 0;) n.frames.push_back(&symbols.user(s.pid, s.user[i], i > 0));
    for (std::size_t i = s.kernel.size(); i-- > 0;) n.frames.push_back(&symbols.kernel(s.kernel[i], i > 0));
    if (!n.frames.empty()) out.push_back(std::move(n));
  }
  return out;
}

std::string frame_label(const Frame& f) {
  return f.named ? f.symbol : fmt::format("{}+{:#x}", f.object, f.offset);
}

namespace {

const std::string& key_value(const Frame& f, SortKey k) {
  switch (k) {
    case SortKey::dso: return f.object;
    case SortKey::sym: return f.symbol;
    case SortKey::srcline: return f.srcline;
  }
  return f.symbol;
}

const char* key_title(SortKey k) {
  switch (k) {
    case SortKey::dso: return "Object";
    case SortKey::sym: return "Symbol";
    case SortKey::srcline: return "Source";
  }
  return "?";
}

double percent(std::uint64_t part, std::uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

std::vector<ProfileRow> profile_rows(const std::vector<NamedStack>& stacks, const std::vector<SortKey>& keys) {
  std::map<std::pair<std::vector<std::string>, bool>, std::uint64_t> by_key;
  for (const NamedStack& s : stacks) {
    const Frame& leaf = *s.frames.back();
    std::vector<std::string> values;
    for (SortKey k : keys) values.push_back(key_value(leaf, k));
    by_key[{std::move(values), leaf.kernel}] += s.samples;
  }
  std::vector<ProfileRow> rows;
  for (auto& [key, n] : by_key) rows.push_back({key.first, key.second, n});
  std::stable_sort(rows.begin(), rows.end(), [](const ProfileRow& a, const ProfileRow& b) { return a.samples > b.samples; });
  return rows;
}

void print_rows(std::FILE* out, const std::vector<ProfileRow>& rows, const std::vector<SortKey>& keys,
                std::uint64_t total, std::size_t top, const RowUnit& unit) {
  const std::size_t shown = std::min(top, rows.size());
  std::vector<std::size_t> width;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    std::size_t w = std::strlen(key_title(keys[k])) + (keys[k] == SortKey::sym ? 4 : 0);
    for (std::size_t r = 0; r < shown; ++r)
      w = std::max(w, rows[r].keys[k].size() + (keys[k] == SortKey::sym ? 4 : 0));
    width.push_back(std::min<std::size_t>(w, 60));
  }
  std::size_t count_width = std::max<std::size_t>(10, unit.column.size());
  for (std::size_t r = 0; r < shown; ++r) count_width = std::max(count_width, group_digits(rows[r].samples).size());
  std::string head = fmt::format("   {:>8}  {:>{}}", "Overhead", unit.column, count_width);
  for (std::size_t k = 0; k < keys.size(); ++k) head += fmt::format("  {:<{}}", key_title(keys[k]), width[k]);
  while (!head.empty() && head.back() == ' ') head.pop_back();
  std::vector<const char*> names;
  for (SortKey k : keys) names.push_back(sort_key_name(k));
  if (unit.heading.empty())
    print_to(out, " Samples by {} ({} samples; [.] user, [k] kernel):\n\n{}\n", fmt::join(names, ","),
             group_digits(total), head);
  else
    print_to(out, " {}:\n\n{}\n", unit.heading, head);
  for (std::size_t r = 0; r < shown; ++r) {
    const ProfileRow& row = rows[r];
    std::string line =
        fmt::format("   {:>7.2f}%  {:>{}}", percent(row.samples, total), group_digits(row.samples), count_width);
    for (std::size_t k = 0; k < keys.size(); ++k) {
      const std::string value = keys[k] == SortKey::sym ? (row.kernel ? "[k] " : "[.] ") + row.keys[k] : row.keys[k];
      line += fmt::format("  {:<{}}", value, width[k]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    print_to(out, "{}\n", line);
  }
  if (shown < rows.size()) {
    std::uint64_t rest = 0;
    for (std::size_t r = shown; r < rows.size(); ++r) rest += rows[r].samples;
    print_to(out, "   ({} more rows, {:.2f}% of the {}; --top N lists more)\n", rows.size() - shown,
             percent(rest, total), unit.noun);
  }
  print_to(out, "\n");
}

json rows_json(const std::vector<ProfileRow>& rows, const std::vector<SortKey>& keys, std::uint64_t total,
               const char* count) {
  json out = json::array();
  for (const ProfileRow& row : rows) {
    json r{{"overhead", percent(row.samples, total)}, {count, row.samples}, {"kernel", row.kernel}};
    for (std::size_t k = 0; k < keys.size(); ++k) r[sort_key_name(keys[k])] = row.keys[k];
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

struct Node {
  std::string label;
  std::uint64_t samples = 0;
  std::vector<std::unique_ptr<Node>> children;
  Node* child(const std::string& name) {
    for (auto& c : children)
      if (c->label == name) return c.get();
    children.push_back(std::make_unique<Node>());
    children.back()->label = name;
    return children.back().get();
  }
};

void print_node(std::FILE* out, const Node& n, const std::string& indent, bool last, bool root, std::uint64_t total,
                double limit) {
  print_to(out, "  {:>7.2f}%  {}{}{}\n", percent(n.samples, total), indent, root ? "" : (last ? "`- " : "|- "), n.label);
  std::vector<const Node*> shown;
  for (const auto& c : n.children)
    if (percent(c->samples, total) >= limit) shown.push_back(c.get());
  std::stable_sort(shown.begin(), shown.end(), [](const Node* a, const Node* b) { return a->samples > b->samples; });
  const std::string next = root ? indent : indent + (last ? "   " : "|  ");
  for (std::size_t i = 0; i < shown.size(); ++i) print_node(out, *shown[i], next, i + 1 == shown.size(), false, total, limit);
}

}  // namespace

void print_call_tree(std::FILE* out, const std::vector<NamedStack>& stacks, std::uint64_t total, double limit) {
  Node root;
  for (const NamedStack& s : stacks) {
    Node* n = &root;
    for (const Frame* f : s.frames) {
      n = n->child(frame_label(*f));
      n->samples += s.samples;
    }
  }
  print_to(out, " Call graph, callers above callees ({} samples; the share of all samples in a function and what "
                "it calls; under {}% left out):\n\n",
           group_digits(total), limit);
  std::vector<const Node*> tops;
  for (const auto& c : root.children)
    if (percent(c->samples, total) >= limit) tops.push_back(c.get());
  std::stable_sort(tops.begin(), tops.end(), [](const Node* a, const Node* b) { return a->samples > b->samples; });
  for (const Node* t : tops) print_node(out, *t, "", true, true, total, limit);
  print_to(out, "\n");
}

json stacks_json(const std::vector<NamedStack>& stacks) {
  json out = json::array();
  for (const NamedStack& s : stacks) {
    json frames = json::array();
    for (const Frame* f : s.frames)
      frames.push_back({{"dso", f->object}, {"sym", f->symbol}, {"srcline", f->srcline}, {"kernel", f->kernel}});
    out.push_back({{"samples", s.samples}, {"frames", std::move(frames)}});
  }
  return out;
}

std::string folded_stacks(const std::vector<NamedStack>& stacks) {
  std::map<std::string, std::uint64_t> lines;
  for (const NamedStack& s : stacks) {
    std::string line;
    for (const Frame* f : s.frames) {
      std::string label = frame_label(*f);
      std::replace(label.begin(), label.end(), ';', ':');  // ';' separates the frames
      std::replace(label.begin(), label.end(), '\n', ' ');
      if (!line.empty()) line += ';';
      line += label;
    }
    lines[line] += s.samples;
  }
  std::string text;
  for (const auto& [line, n] : lines) text += fmt::format("{} {}\n", line, n);
  return text;
}

}  // namespace pmc_cli
