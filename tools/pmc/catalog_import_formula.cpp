// pmc catalog import: the vendors' metric formulas in muParser's syntax (the metric files'
// `formula` and `threshold`, docs/hardware/intel-catalogs.md "Metrics"). A tokenizer and a
// recursive-descent parser build a tree; the printer writes it back with muParser's operators and
// the parentheses muParser's precedences need. Intel's grammar is Python's: `X if C else Y` is
// the lowest and right-associative, `|` below `&` below the comparisons (perf reads them so too);
// `&`/`|` are logical there, `&&`/`||` here. perf's is the same plus dotted event names,
// `pmu@term\,term@` events and `#name` literals. Anything else is an error, never guessed.
#include "catalog_import.hpp"

#include <algorithm>
#include <cctype>

namespace pmc_cli::catalog_import {

namespace {

enum class Tok { number, name, op, end };

struct Token {
  Tok kind = Tok::end;
  std::string text;
  std::size_t column = 0;  // 1-based
};

bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '#'; }
bool name_char(char c, Dialect d) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || (d == Dialect::perf && c == '.');
}

std::vector<Token> tokenize(std::string_view s, Dialect d) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    const std::size_t col = i + 1;
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      std::size_t j = i;
      while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '.')) ++j;
      if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
        std::size_t k = j + 1;
        if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
        if (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) {
          j = k;
          while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
        }
      }
      const std::string text(s.substr(i, j - i));
      if (std::count(text.begin(), text.end(), '.') > 1 || (j < s.size() && name_start(s[j])))
        throw BadFormula(fmt::format("malformed number '{}' at column {}", s.substr(i, j - i + 1), col));
      out.push_back({Tok::number, text, col});
      i = j;
    } else if (name_start(c)) {
      std::size_t j = i + 1;
      while (j < s.size() && name_char(s[j], d)) ++j;
      // perf's `cpu@event\,cmask\=0x6@`: one event, up to the closing '@'.
      if (d == Dialect::perf && j < s.size() && s[j] == '@') {
        const std::size_t end = s.find('@', j + 1);
        if (end == std::string_view::npos) throw BadFormula(fmt::format("unclosed '@' at column {}", j + 1));
        j = end + 1;
      }
      if (c == '#' && j == i + 1) throw BadFormula(fmt::format("'#' without a name at column {}", col));
      out.push_back({Tok::name, std::string(s.substr(i, j - i)), col});
      i = j;
    } else {
      // Intel's per-socket values of an uncore event (`a[0]`): no such thing here.
      if (c == '[')
        throw Unsupported(fmt::format("an indexed event value ('{}' at column {})", s.substr(i, s.find(']', i) - i + 1), col));
      // Operators; Intel writes some two-character ones with a space ("> =").
      std::string op(1, c);
      std::size_t j = i + 1;
      if (c == '<' || c == '>' || c == '=' || c == '!') {
        std::size_t k = j;
        while (k < s.size() && s[k] == ' ') ++k;
        if (k < s.size() && s[k] == '=') op += '=', j = k + 1;
      } else if ((c == '&' || c == '|') && j < s.size() && s[j] == c) {
        op += c;
        ++j;
      }
      static const std::set<std::string, std::less<>> known{"+", "-", "*", "/", "(", ")", ",", "<", ">", "<=", ">=",
                                                            "==", "!=", "&", "&&", "|", "||"};
      if (!known.count(op)) throw BadFormula(fmt::format("unknown operator '{}' at column {}", op, col));
      out.push_back({Tok::op, op, col});
      i = j;
    }
  }
  out.push_back({Tok::end, "", s.size() + 1});
  return out;
}

// The tree. Precedences are muParser's: ?: 0, || 1, && 2, comparisons 4, + - 5, * / 6; 9 is an
// operand (a name, a number, a call, something in parentheses).
struct Node {
  enum Kind { leaf, unary_minus, binary, cond, call } kind = leaf;
  std::string text;  // leaf: its muParser text; binary: the operator; call: the function
  std::vector<Node> kids;
};

int precedence(const std::string& op) {
  if (op == "||") return 1;
  if (op == "&&") return 2;
  if (op == "+" || op == "-") return 5;
  if (op == "*" || op == "/") return 6;
  return 4;  // comparisons
}

class Parser {
 public:
  Parser(std::vector<Token> toks, const FormulaNames& names) : t_(std::move(toks)), names_(names) {}

  Node parse() {
    Node n = conditional();
    if (peek().kind != Tok::end) unexpected();
    return n;
  }

 private:
  std::vector<Token> t_;
  std::size_t i_ = 0;
  const FormulaNames& names_;

  const Token& peek() const { return t_[i_]; }
  bool is_op(const char* op) const { return peek().kind == Tok::op && peek().text == op; }
  bool is_word(const char* w) const { return peek().kind == Tok::name && peek().text == w; }
  [[noreturn]] void unexpected() const {
    if (peek().kind == Tok::end) throw BadFormula("unexpected end of the formula");
    throw BadFormula(fmt::format("unexpected '{}' at column {}", peek().text, peek().column));
  }
  void expect(const char* op) {
    if (!is_op(op)) unexpected();
    ++i_;
  }

  // X if C else Y: Python's conditional, right-associative.
  Node conditional() {
    Node x = logical_or();
    if (!is_word("if")) return x;
    ++i_;
    Node c = logical_or();
    if (!is_word("else")) unexpected();
    ++i_;
    Node y = conditional();
    return Node{Node::cond, "", {std::move(c), std::move(x), std::move(y)}};
  }
  Node logical_or() {
    Node l = logical_and();
    while (is_op("|") || is_op("||")) {
      ++i_;
      l = Node{Node::binary, "||", {std::move(l), logical_and()}};
    }
    return l;
  }
  Node logical_and() {
    Node l = comparison();
    while (is_op("&") || is_op("&&")) {
      ++i_;
      l = Node{Node::binary, "&&", {std::move(l), comparison()}};
    }
    return l;
  }
  bool at_comparison() const {
    if (peek().kind != Tok::op) return false;
    const std::string& o = peek().text;
    return o == "<" || o == ">" || o == "<=" || o == ">=" || o == "==" || o == "!=";
  }
  Node comparison() {
    Node l = additive();
    if (!at_comparison()) return l;
    const std::string op = peek().text;
    ++i_;
    Node n{Node::binary, op, {std::move(l), additive()}};
    if (at_comparison())
      throw BadFormula(fmt::format("chained comparison '{}' at column {}", peek().text, peek().column));
    return n;
  }
  Node additive() {
    Node l = multiplicative();
    while (is_op("+") || is_op("-")) {
      const std::string op = peek().text;
      ++i_;
      l = Node{Node::binary, op, {std::move(l), multiplicative()}};
    }
    return l;
  }
  Node multiplicative() {
    Node l = unary();
    while (is_op("*") || is_op("/")) {
      const std::string op = peek().text;
      ++i_;
      l = Node{Node::binary, op, {std::move(l), unary()}};
    }
    return l;
  }
  Node unary() {
    if (is_op("-")) {
      ++i_;
      return Node{Node::unary_minus, "", {unary()}};
    }
    if (is_op("+")) {
      ++i_;
      return unary();
    }
    return primary();
  }
  Node primary() {
    const Token tok = peek();
    if (tok.kind == Tok::number) {
      ++i_;
      return Node{Node::leaf, tok.text, {}};
    }
    if (is_op("(")) {
      ++i_;
      Node n = conditional();
      expect(")");
      return n;
    }
    if (tok.kind != Tok::name || tok.text == "if" || tok.text == "else") unexpected();
    ++i_;
    if (is_op("(")) {
      static const std::set<std::string, std::less<>> functions{"min", "max", "abs", "d_ratio"};
      if (!functions.count(tok.text))
        throw BadFormula(fmt::format("unknown function '{}' at column {}", tok.text, tok.column));
      ++i_;
      Node n{Node::call, tok.text, {}};
      n.kids.push_back(conditional());
      while (is_op(",")) {
        ++i_;
        n.kids.push_back(conditional());
      }
      expect(")");
      const std::size_t want = tok.text == "abs" ? 1 : 2;
      if (n.kids.size() != want)
        throw BadFormula(fmt::format("{}() at column {} takes {} argument{}, not {}", tok.text, tok.column, want,
                                     want == 1 ? "" : "s", n.kids.size()));
      return n;
    }
    return Node{Node::leaf, names_(tok.text), {}};
  }
};

struct Printed {
  std::string text;
  int prec = 9;
};

Printed print(const Node& n, bool compact) {
  const char* comma = compact ? "," : ", ";
  switch (n.kind) {
    case Node::leaf: return {n.text, 9};
    case Node::unary_minus: {
      const Printed x = print(n.kids[0], compact);
      return {fmt::format("(-{})", x.prec < 9 ? "(" + x.text + ")" : x.text), 9};
    }
    case Node::call: {
      std::string args;
      for (const auto& k : n.kids) args += (args.empty() ? "" : comma) + print(k, compact).text;
      return {fmt::format("{}({})", n.text, args), 9};
    }
    case Node::cond: {
      // Always parenthesised: muParser's ?: is the lowest and nests safely only so.
      return {fmt::format(fmt::runtime(compact ? "({}?{}:{})" : "({} ? {} : {})"), print(n.kids[0], compact).text,
                          print(n.kids[1], compact).text, print(n.kids[2], compact).text),
              9};
    }
    case Node::binary: break;
  }
  const int p = precedence(n.text);
  const Printed l = print(n.kids[0], compact), r = print(n.kids[1], compact);
  // Left-associative: a left operand of the same level goes bare (a comparison never: muParser
  // would chain it); a right operand of the same level is parenthesised.
  const bool wrap_l = l.prec < p || (p == 4 && l.prec == 4);
  const bool wrap_r = r.prec <= p;
  return {fmt::format(fmt::runtime(compact ? "{}{}{}" : "{} {} {}"), wrap_l ? "(" + l.text + ")" : l.text, n.text, wrap_r ? "(" + r.text + ")" : r.text),
          p};
}

}  // namespace

Formula translate_formula(std::string_view text, Dialect dialect, const FormulaNames& names, std::string_view scale,
                          bool compact) {
  Parser parser(tokenize(text, dialect), names);
  Node root = parser.parse();
  if (!scale.empty() && scale != "1")
    root = Node{Node::binary, "*", {Node{Node::leaf, std::string(scale), {}}, std::move(root)}};
  const Printed p = print(root, compact);
  return {p.text, p.prec == 9};
}

}  // namespace pmc_cli::catalog_import
