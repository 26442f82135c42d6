// formula_reads (formula.hpp): a recursive-descent walk over a metric formula with constant
// folding. Precedence as muParser's: ?: (right), ||, &&, comparisons, + -, * /, unary -, ^.
#include "formula.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace pmc::detail {

namespace {

// A walked sub-expression: its value when it depends only on constants and numbers.
using Folded = std::optional<double>;

class Walker {
 public:
  Walker(std::string_view text, const std::function<std::optional<double>(std::string_view)>& constant)
      : s_(text), constant_(constant) {}

  std::vector<std::string> run() {
    (void)ternary(true);
    skip();
    if (p_ != s_.size()) fail("unexpected text");
    return std::move(reads_);
  }

 private:
  [[noreturn]] void fail(const char* what) const {
    throw std::invalid_argument(std::string(what) + " at position " + std::to_string(p_ + 1));
  }
  void skip() {
    while (p_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[p_]))) ++p_;
  }
  bool eat(std::string_view op) {
    skip();
    if (s_.substr(p_, op.size()) != op) return false;
    p_ += op.size();
    return true;
  }
  // A comparison operator, longest first; "" when none.
  std::string_view comparison() {
    skip();
    for (std::string_view op : {"<=", ">=", "==", "!=", "<", ">"})
      if (s_.substr(p_, op.size()) == op) {
        p_ += op.size();
        return op;
      }
    return {};
  }

  // Each level walks with `live` false for a side a constant condition rules out: its names are
  // not read.
  Folded ternary(bool live) {
    const Folded c = logical_or(live);
    if (!eat("?")) return c;
    const bool take_then = !c || *c != 0;
    const bool take_else = !c || *c == 0;
    const Folded a = ternary(live && take_then);
    if (!eat(":")) fail("'?' without ':'");
    const Folded b = ternary(live && take_else);
    if (!c) return std::nullopt;
    return *c != 0 ? a : b;
  }
  Folded logical_or(bool live) {
    Folded v = logical_and(live);
    while (eat("||")) {
      const bool decided = v && *v != 0;
      const Folded r = logical_and(live && !decided);
      v = decided ? Folded{1.0} : (v && r ? Folded{*r != 0 ? 1.0 : 0.0} : std::nullopt);
    }
    return v;
  }
  Folded logical_and(bool live) {
    Folded v = compare(live);
    while (eat("&&")) {
      const bool decided = v && *v == 0;
      const Folded r = compare(live && !decided);
      v = decided ? Folded{0.0} : (v && r ? Folded{*r != 0 ? 1.0 : 0.0} : std::nullopt);
    }
    return v;
  }
  Folded compare(bool live) {
    Folded v = sum(live);
    for (std::string_view op = comparison(); !op.empty(); op = comparison()) {
      const Folded r = sum(live);
      if (!v || !r) {
        v = std::nullopt;
        continue;
      }
      bool t = false;
      if (op == "<") t = *v < *r;
      else if (op == ">") t = *v > *r;
      else if (op == "<=") t = *v <= *r;
      else if (op == ">=") t = *v >= *r;
      else if (op == "==") t = *v == *r;
      else t = *v != *r;
      v = t ? 1.0 : 0.0;
    }
    return v;
  }
  Folded sum(bool live) {
    Folded v = product(live);
    for (;;) {
      skip();
      if (p_ >= s_.size() || (s_[p_] != '+' && s_[p_] != '-')) return v;
      const char op = s_[p_++];
      const Folded r = product(live);
      v = v && r ? Folded{op == '+' ? *v + *r : *v - *r} : std::nullopt;
    }
  }
  Folded product(bool live) {
    Folded v = unary(live);
    for (;;) {
      skip();
      if (p_ >= s_.size() || (s_[p_] != '*' && s_[p_] != '/')) return v;
      const char op = s_[p_++];
      const Folded r = unary(live);
      v = v && r ? Folded{op == '*' ? *v * *r : *v / *r} : std::nullopt;
    }
  }
  Folded unary(bool live) {
    if (eat("-")) {
      const Folded v = unary(live);
      return v ? Folded{-*v} : std::nullopt;
    }
    if (eat("+")) return unary(live);
    return power(live);
  }
  Folded power(bool live) {
    const Folded base = primary(live);
    if (!eat("^")) return base;
    const Folded e = unary(live);
    return base && e ? Folded{std::pow(*base, *e)} : std::nullopt;
  }
  Folded primary(bool live) {
    skip();
    if (p_ >= s_.size()) fail("expression ends early");
    const char c = s_[p_];
    if (c == '(') {
      ++p_;
      const Folded v = ternary(live);
      if (!eat(")")) fail("'(' without ')'");
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      const std::string rest(s_.substr(p_));
      char* end = nullptr;
      const double v = std::strtod(rest.c_str(), &end);
      if (end == rest.c_str()) fail("bad number");
      p_ += static_cast<std::size_t>(end - rest.c_str());
      return v;
    }
    if (!std::isalpha(static_cast<unsigned char>(c)) && c != '_') fail("unexpected character");
    const std::size_t start = p_;
    while (p_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[p_])) || s_[p_] == '_')) ++p_;
    const std::string_view name = s_.substr(start, p_ - start);
    if (eat("(")) return call(name, live);
    if (live && std::find(reads_.begin(), reads_.end(), name) == reads_.end()) reads_.emplace_back(name);
    return constant_(name);
  }
  Folded call(std::string_view name, bool live) {
    std::vector<Folded> args;
    if (!eat(")")) {
      do args.push_back(ternary(live));
      while (eat(","));
      if (!eat(")")) fail("function call without ')'");
    }
    if (std::any_of(args.begin(), args.end(), [](const Folded& a) { return !a; }) || args.empty())
      return std::nullopt;
    if (name == "min" || name == "max") {
      double v = *args[0];
      for (const Folded& a : args) v = name == "min" ? std::min(v, *a) : std::max(v, *a);
      return v;
    }
    if (name == "abs" && args.size() == 1) return std::fabs(*args[0]);
    if (name == "d_ratio" && args.size() == 2) return *args[1] == 0 ? 0.0 : *args[0] / *args[1];
    return std::nullopt;  // another function: its value is not needed to decide a condition
  }

  std::string_view s_;
  const std::function<std::optional<double>(std::string_view)>& constant_;
  std::size_t p_ = 0;
  std::vector<std::string> reads_;
};

}  // namespace

std::vector<std::string> formula_reads(std::string_view formula,
                                       const std::function<std::optional<double>(std::string_view)>& constant) {
  return Walker(formula, constant).run();
}

}  // namespace pmc::detail
