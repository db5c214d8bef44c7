// CEL recursive-descent parser (grammar of cel-spec doc/langdef.md, plus cel-go's optional syntax `a.?b`,
// `a[?b]`, `[?x]`, `{?k: v}`), producing the syntax tree of cel/internal.h with macros expanded and && / ||
// chains balanced. Nesting and tree depth are capped so no input can exhaust the stack.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/apiserver/cel/internal.h"

namespace kubex::sim::cel::internal {

namespace {

constexpr std::size_t kMaxSourceSize = 100'000;
constexpr int kMaxParseNesting = 50;

// ---------------------------------------------------------------------------------------------------------

bool is_reserved(std::string_view id) {
  static constexpr std::string_view kReserved[] = {
      "as",  "break", "const",   "continue",  "else",   "for", "function", "if",   "import",
      "let", "loop",  "package", "namespace", "return", "var", "void",     "while"};
  for (auto r : kReserved) {
    if (id == r) return true;
  }
  return false;
}

class Parser {
 public:
  explicit Parser(std::vector<Token> toks) : toks_(std::move(toks)) {}

  std::unique_ptr<Node> parse_all() {
    auto e = parse_expr();
    if (!e) return nullptr;
    if (peek().tok != Tok::kEof) return fail_unexpected("end of input");
    return e;
  }

  std::vector<Issue>& issues() { return issues_; }

 private:
  const Token& peek(int ahead = 0) const {
    std::size_t k = pos_ + static_cast<std::size_t>(ahead);
    return k < toks_.size() ? toks_[k] : toks_.back();
  }
  const Token& take() {
    const Token& t = toks_[pos_];
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  bool accept(Tok tok) {
    if (peek().tok != tok) return false;
    take();
    return true;
  }

  std::nullptr_t fail_at(int32_t pos, std::string msg) {
    if (issues_.empty()) issues_.push_back(Issue{pos, std::move(msg)});
    return nullptr;
  }
  std::nullptr_t fail_unexpected(const std::string& expected) {
    const Token& t = peek();
    return fail_at(t.pos, "Syntax error: unexpected " + describe(t) + ", expected " + expected);
  }
  bool expect(Tok tok, const std::string& what) {
    if (accept(tok)) return true;
    fail_unexpected(what);
    return false;
  }

  // Creates a node, enforcing the depth limit (children must already be attached via `args`).
  std::unique_ptr<Node> finish(std::unique_ptr<Node> n) {
    int32_t depth = 1;
    for (const auto& a : n->args) {
      if (a) depth = std::max(depth, a->depth + 1);
    }
    n->depth = depth;
    if (depth > kMaxAstDepth) return fail_at(n->pos, "max recursion depth exceeded");
    return n;
  }

  static std::unique_ptr<Node> node(NodeOp op, int32_t pos) {
    auto n = std::make_unique<Node>();
    n->op = op;
    n->pos = pos;
    return n;
  }
  std::unique_ptr<Node> call(std::string name, Fn fn, int32_t pos, std::unique_ptr<Node> a,
                             std::unique_ptr<Node> b = nullptr) {
    auto n = node(NodeOp::kCall, pos);
    n->name = std::move(name);
    n->fn = fn;
    n->args.push_back(std::move(a));
    if (b) n->args.push_back(std::move(b));
    return finish(std::move(n));
  }

  std::unique_ptr<Node> parse_expr() {
    if (++nesting_ > kMaxParseNesting) return fail_at(peek().pos, "max recursion depth exceeded");
    auto cond = parse_or();
    if (cond && peek().tok == Tok::kQuestion) {
      int32_t pos = take().pos;
      auto a = parse_or();
      if (!a || !expect(Tok::kColon, "':'")) return nullptr;
      auto b = parse_expr();
      if (!b) return nullptr;
      auto n = node(NodeOp::kTernary, pos);
      n->args.push_back(std::move(cond));
      n->args.push_back(std::move(a));
      n->args.push_back(std::move(b));
      cond = finish(std::move(n));
    }
    --nesting_;
    return cond;
  }

  // `a || b || c ...` and `a && b && ...` chains become balanced trees (as cel-go builds them), so long
  // chains of conditions stay shallow.
  std::unique_ptr<Node> parse_or() { return parse_logical(NodeOp::kOr); }
  std::unique_ptr<Node> parse_and() { return parse_logical(NodeOp::kAnd); }

  std::unique_ptr<Node> parse_logical(NodeOp op) {
    const Tok tok = op == NodeOp::kOr ? Tok::kOr : Tok::kAnd;
    auto operand = [&]() { return op == NodeOp::kOr ? parse_and() : parse_relation(); };
    std::vector<std::unique_ptr<Node>> terms;
    std::vector<int32_t> ops;
    auto first = operand();
    if (!first) return nullptr;
    terms.push_back(std::move(first));
    while (peek().tok == tok) {
      ops.push_back(take().pos);
      auto next = operand();
      if (!next) return nullptr;
      terms.push_back(std::move(next));
    }
    return balance(op, terms, ops, 0, terms.size());
  }

  std::unique_ptr<Node> balance(NodeOp op, std::vector<std::unique_ptr<Node>>& terms,
                                const std::vector<int32_t>& ops, std::size_t lo, std::size_t hi) {
    if (hi - lo == 1) return std::move(terms[lo]);
    std::size_t mid = lo + (hi - lo) / 2;
    auto lhs = balance(op, terms, ops, lo, mid);
    if (!lhs) return nullptr;
    auto rhs = balance(op, terms, ops, mid, hi);
    if (!rhs) return nullptr;
    auto n = node(op, ops[mid - 1]);
    n->args.push_back(std::move(lhs));
    n->args.push_back(std::move(rhs));
    return finish(std::move(n));
  }

  std::unique_ptr<Node> parse_relation() {
    auto lhs = parse_addition();
    while (lhs) {
      Fn fn;
      std::string name;
      switch (peek().tok) {
        case Tok::kLt:
          fn = Fn::kLt, name = "_<_";
          break;
        case Tok::kLe:
          fn = Fn::kLe, name = "_<=_";
          break;
        case Tok::kGt:
          fn = Fn::kGt, name = "_>_";
          break;
        case Tok::kGe:
          fn = Fn::kGe, name = "_>=_";
          break;
        case Tok::kEqEq:
          fn = Fn::kEq, name = "_==_";
          break;
        case Tok::kNe:
          fn = Fn::kNe, name = "_!=_";
          break;
        case Tok::kIn:
          fn = Fn::kIn, name = "@in";
          break;
        default:
          return lhs;
      }
      int32_t pos = take().pos;
      auto rhs = parse_addition();
      if (!rhs) return nullptr;
      lhs = call(std::move(name), fn, pos, std::move(lhs), std::move(rhs));
    }
    return lhs;
  }

  std::unique_ptr<Node> parse_addition() {
    auto lhs = parse_multiplication();
    while (lhs && (peek().tok == Tok::kPlus || peek().tok == Tok::kMinus)) {
      bool plus = peek().tok == Tok::kPlus;
      int32_t pos = take().pos;
      auto rhs = parse_multiplication();
      if (!rhs) return nullptr;
      lhs = call(plus ? "_+_" : "_-_", plus ? Fn::kAdd : Fn::kSub, pos, std::move(lhs), std::move(rhs));
    }
    return lhs;
  }

  std::unique_ptr<Node> parse_multiplication() {
    auto lhs = parse_unary();
    while (lhs && (peek().tok == Tok::kStar || peek().tok == Tok::kSlash || peek().tok == Tok::kPercent)) {
      Tok op = peek().tok;
      int32_t pos = take().pos;
      auto rhs = parse_unary();
      if (!rhs) return nullptr;
      if (op == Tok::kStar) {
        lhs = call("_*_", Fn::kMul, pos, std::move(lhs), std::move(rhs));
      } else if (op == Tok::kSlash) {
        lhs = call("_/_", Fn::kDiv, pos, std::move(lhs), std::move(rhs));
      } else {
        lhs = call("_%_", Fn::kMod, pos, std::move(lhs), std::move(rhs));
      }
    }
    return lhs;
  }

  std::unique_ptr<Node> parse_unary() {
    if (peek().tok == Tok::kBang) {
      std::vector<int32_t> ops;
      while (peek().tok == Tok::kBang) ops.push_back(take().pos);
      auto operand = parse_member();
      for (auto it = ops.rbegin(); operand && it != ops.rend(); ++it) {
        operand = call("!_", Fn::kNot, *it, std::move(operand));
      }
      return operand;
    }
    if (peek().tok == Tok::kMinus) {
      std::vector<int32_t> ops;
      while (peek().tok == Tok::kMinus) ops.push_back(take().pos);
      std::unique_ptr<Node> operand;
      // The innermost minus folds into a numeric literal, so -9223372036854775808 is representable.
      Tok next = peek().tok;
      if (next == Tok::kInt || next == Tok::kDouble) {
        int32_t pos = ops.back();
        ops.pop_back();
        operand = parse_member(/*negate_literal=*/true, pos);
      } else {
        operand = parse_member();
      }
      for (auto it = ops.rbegin(); operand && it != ops.rend(); ++it) {
        operand = call("-_", Fn::kNeg, *it, std::move(operand));
      }
      return operand;
    }
    return parse_member();
  }

  std::unique_ptr<Node> parse_member(bool negate_literal = false, int32_t neg_pos = 0) {
    auto e = parse_primary(negate_literal, neg_pos);
    while (e) {
      if (peek().tok == Tok::kDot) {
        int32_t dot = take().pos;
        bool optional = accept(Tok::kQuestion);
        const Token& id = peek();
        if (id.tok != Tok::kIdent) return fail_unexpected("identifier");
        std::string name = take().text;
        if (!optional && peek().tok == Tok::kLParen) {
          int32_t lp = take().pos;
          std::vector<std::unique_ptr<Node>> args;
          if (!parse_args(Tok::kRParen, args)) return nullptr;
          e = member_call(std::move(e), std::move(name), std::move(args), id.pos, lp);
          continue;
        }
        auto n = node(optional ? NodeOp::kOptSelect : NodeOp::kSelect, dot);
        n->name = std::move(name);
        n->args.push_back(std::move(e));
        e = finish(std::move(n));
      } else if (peek().tok == Tok::kLBracket) {
        int32_t pos = take().pos;
        bool optional = accept(Tok::kQuestion);
        auto idx = parse_expr();
        if (!idx || !expect(Tok::kRBracket, "']'")) return nullptr;
        auto n = node(optional ? NodeOp::kOptIndex : NodeOp::kIndex, pos);
        n->args.push_back(std::move(e));
        n->args.push_back(std::move(idx));
        e = finish(std::move(n));
      } else {
        break;
      }
    }
    return e;
  }

  bool parse_args(Tok close, std::vector<std::unique_ptr<Node>>& args) {
    if (accept(close)) return true;
    while (true) {
      auto a = parse_expr();
      if (!a) return false;
      args.push_back(std::move(a));
      if (accept(close)) return true;
      if (!expect(Tok::kComma, close == Tok::kRParen ? "',' or ')'" : "',' or ']'")) return false;
    }
  }

  // Builds r.name(args), expanding comprehension macros.
  std::unique_ptr<Node> member_call(std::unique_ptr<Node> target, std::string name,
                                    std::vector<std::unique_ptr<Node>> args, int32_t pos, int32_t lparen) {
    struct MacroForm {
      std::string_view name;
      std::size_t nargs;
      Macro macro;
      int vars;
    };
    static constexpr MacroForm kMacros[] = {
        {"all", 2, Macro::kAll, 1},
        {"exists", 2, Macro::kExists, 1},
        {"exists_one", 2, Macro::kExistsOne, 1},
        {"existsOne", 2, Macro::kExistsOne, 1},
        {"map", 2, Macro::kMap, 1},
        {"map", 3, Macro::kMapFilter, 1},
        {"filter", 2, Macro::kFilter, 1},
        {"all", 3, Macro::kAll2, 2},
        {"exists", 3, Macro::kExists2, 2},
        {"existsOne", 3, Macro::kExistsOne2, 2},
        {"exists_one", 3, Macro::kExistsOne2, 2},
        {"transformList", 3, Macro::kTransformList, 2},
        {"transformList", 4, Macro::kTransformListFilter, 2},
        {"transformMap", 3, Macro::kTransformMap, 2},
        {"transformMap", 4, Macro::kTransformMapFilter, 2},
    };
    for (const auto& m : kMacros) {
      if (m.name != name || m.nargs != args.size()) continue;
      auto n = node(NodeOp::kComprehension, pos);
      n->macro = m.macro;
      for (int v = 0; v < m.vars; ++v) {
        const Node& var = *args[static_cast<std::size_t>(v)];
        if (var.op != NodeOp::kIdent) return fail_at(var.pos, "argument must be a simple name");
        (v == 0 ? n->name : n->name2) = var.name;
      }
      if (m.vars == 2 && n->name == n->name2) {
        return fail_at(args[1]->pos, "duplicate variable name: " + n->name);
      }
      n->args.push_back(std::move(target));
      for (std::size_t k = static_cast<std::size_t>(m.vars); k < args.size(); ++k)
        n->args.push_back(std::move(args[k]));
      return finish(std::move(n));
    }
    (void)lparen;
    auto n = node(NodeOp::kCall, pos);
    n->name = std::move(name);
    n->member = true;
    n->args.push_back(std::move(target));
    for (auto& a : args) n->args.push_back(std::move(a));
    return finish(std::move(n));
  }

  std::unique_ptr<Node> literal(const Value& v, int32_t pos) {
    auto n = node(NodeOp::kLiteral, pos);
    n->literal = v;
    return finish(std::move(n));
  }

  std::unique_ptr<Node> parse_primary(bool negate_literal, int32_t neg_pos) {
    const Token& t = peek();
    switch (t.tok) {
      case Tok::kInt: {
        take();
        constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
        if (negate_literal) {
          if (t.u > kMax + 1) return fail_at(neg_pos, "invalid int literal");
          int64_t v = t.u == kMax + 1 ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(t.u);
          return literal(make_int(v), neg_pos);
        }
        if (t.u > kMax) return fail_at(t.pos, "invalid int literal");
        return literal(make_int(static_cast<int64_t>(t.u)), t.pos);
      }
      case Tok::kDouble:
        take();
        return literal(make_double(negate_literal ? -t.d : t.d), negate_literal ? neg_pos : t.pos);
      case Tok::kUint:
        take();
        return literal(make_uint(t.u), t.pos);
      case Tok::kString:
        take();
        return literal(make_string(t.text), t.pos);
      case Tok::kBytes:
        take();
        return literal(make_bytes(t.text), t.pos);
      case Tok::kTrue:
      case Tok::kFalse:
        take();
        return literal(make_bool(t.tok == Tok::kTrue), t.pos);
      case Tok::kNull:
        take();
        return literal(make_null(), t.pos);
      case Tok::kLParen: {
        take();
        auto e = parse_expr();
        if (!e || !expect(Tok::kRParen, "')'")) return nullptr;
        return e;
      }
      case Tok::kLBracket:
        return parse_list();
      case Tok::kLBrace:
        return parse_map();
      case Tok::kDot:
      case Tok::kIdent: {
        bool root = t.tok == Tok::kDot;
        if (root) take();
        const Token& id = peek();
        if (id.tok != Tok::kIdent) return fail_unexpected("identifier");
        take();
        if (is_reserved(id.text)) return fail_at(id.pos, "reserved identifier: " + id.text);
        if (peek().tok == Tok::kLBrace) {
          return fail_at(peek().pos, "Syntax error: message construction is not supported");
        }
        if (peek().tok == Tok::kLParen) {
          take();
          std::vector<std::unique_ptr<Node>> args;
          if (!parse_args(Tok::kRParen, args)) return nullptr;
          if (id.text == "has" && !root) {
            if (args.size() != 1 || args[0]->op != NodeOp::kSelect) {
              return fail_at(id.pos, "invalid argument to has() macro");
            }
            auto n = node(NodeOp::kHas, id.pos);
            n->name = args[0]->name;
            n->args.push_back(std::move(args[0]->args[0]));
            return finish(std::move(n));
          }
          auto n = node(NodeOp::kCall, id.pos);
          n->name = id.text;
          for (auto& a : args) n->args.push_back(std::move(a));
          return finish(std::move(n));
        }
        auto n = node(NodeOp::kIdent, id.pos);
        n->name = id.text;
        n->member = root;  // a leading '.' resolves in the root scope, skipping comprehension variables
        return finish(std::move(n));
      }
      default:
        return fail_unexpected("an expression");
    }
  }

  std::unique_ptr<Node> parse_list() {
    auto n = node(NodeOp::kList, take().pos);
    while (peek().tok != Tok::kRBracket) {
      bool optional = accept(Tok::kQuestion);
      auto e = parse_expr();
      if (!e) return nullptr;
      n->args.push_back(std::move(e));
      n->optional_entries.push_back(optional);
      if (!accept(Tok::kComma)) break;
    }
    if (!expect(Tok::kRBracket, "',' or ']'")) return nullptr;
    return finish(std::move(n));
  }

  std::unique_ptr<Node> parse_map() {
    auto n = node(NodeOp::kMap, take().pos);
    while (peek().tok != Tok::kRBrace) {
      bool optional = accept(Tok::kQuestion);
      auto k = parse_expr();
      if (!k || !expect(Tok::kColon, "':'")) return nullptr;
      auto v = parse_expr();
      if (!v) return nullptr;
      n->args.push_back(std::move(k));
      n->args.push_back(std::move(v));
      n->optional_entries.push_back(optional);
      if (!accept(Tok::kComma)) break;
    }
    if (!expect(Tok::kRBrace, "',' or '}'")) return nullptr;
    return finish(std::move(n));
  }

  std::vector<Token> toks_;
  std::size_t pos_ = 0;
  int nesting_ = 0;
  std::vector<Issue> issues_;
};

}  // namespace

std::expected<std::unique_ptr<Node>, std::vector<Issue>> parse(std::string_view source) {
  if (source.size() > kMaxSourceSize) {
    return std::unexpected(std::vector<Issue>{
        {0, "expression code point size exceeds limit: size: " + std::to_string(utf8_length(source)) +
                ", limit " + std::to_string(kMaxSourceSize)}});
  }
  std::vector<Token> toks;
  Issue issue;
  if (!tokenize(source, toks, issue)) return std::unexpected(std::vector<Issue>{issue});
  Parser p(std::move(toks));
  auto root = p.parse_all();
  if (!root) {
    if (p.issues().empty()) p.issues().push_back({0, "Syntax error: invalid expression"});
    return std::unexpected(std::move(p.issues()));
  }
  return root;
}

}  // namespace kubex::sim::cel::internal
