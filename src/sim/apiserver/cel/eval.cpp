// CEL evaluation: attribute access (field selection, indexing, presence, optional chaining), logical
// operators with commutative error absorption, ternaries, aggregate literals and the comprehension macros.
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/apiserver/cel/internal.h"
#include "sim/apiserver/go_format.h"

namespace kubex::sim::cel::internal {

namespace {

bool is_numeric(Kind k) {
  return k == Kind::kInt || k == Kind::kUint || k == Kind::kDouble;
}

std::unexpected<Err> cost_exceeded() {
  return std::unexpected(Err{std::string(kCostExceededMessage), ErrKind::kCostExceeded});
}

// Kubernetes escapes property names that are not CEL identifiers (`x-y` → `x__dash__y`, `namespace` →
// `__namespace__`); without a schema, a selection that misses tries the unescaped name as well.
std::optional<std::string> unescape_property(const std::string& name) {
  if (name.find("__") == std::string::npos) return std::nullopt;
  static constexpr std::string_view kKeywords[] = {
      "true",     "false",   "null",      "in",       "as",  "break",  "const",
      "continue", "else",    "for",       "function", "if",  "import", "let",
      "loop",     "package", "namespace", "return",   "var", "void",   "while"};
  std::string out;
  std::size_t i = 0;
  while (i < name.size()) {
    if (name.compare(i, 2, "__") == 0) {
      std::size_t end = name.find("__", i + 2);
      if (end != std::string::npos && end > i + 2) {
        std::string_view inner(name.data() + i + 2, end - i - 2);
        if (inner.find('_') == std::string_view::npos) {
          if (inner == "underscores") {
            out += "__";
          } else if (inner == "dot") {
            out += '.';
          } else if (inner == "dash") {
            out += '-';
          } else if (inner == "slash") {
            out += '/';
          } else {
            bool keyword = false;
            for (auto k : kKeywords) keyword = keyword || inner == k;
            if (!keyword || end + 2 - i != name.size()) return std::nullopt;
            out += inner;
          }
          i = end + 2;
          continue;
        }
      }
    }
    out += name[i++];
  }
  return out;
}

const Value* find_field(const MapData& m, const std::string& name) {
  Value key = make_string(name);
  if (const Value* v = m.find(key)) return v;
  if (auto raw = unescape_property(name)) return m.find(make_string(*raw));
  return nullptr;
}

std::string format_key(const Value& k) {
  return display(k);
}

[[gnu::noinline]] Val select_field(const Value& target, const std::string& name) {
  switch (target.kind()) {
    case Kind::kMap:
      if (const Value* v = find_field(target.as_map(), name)) return *v;
      return error("no such key: " + name);
    case Kind::kOptional: {
      const auto& o = target.as_optional().value;
      if (!o || o->kind() != Kind::kMap) return make_opt(std::nullopt);
      if (const Value* v = find_field(o->as_map(), name)) return make_opt(*v);
      return make_opt(std::nullopt);
    }
    case Kind::kList:
      return error("unsupported index type 'string' in list");
    default:
      return error("no such key: " + name);
  }
}

// List index from an int, uint or integral double; nullopt plus an error otherwise.
std::expected<int64_t, Err> list_index(const Value& idx) {
  switch (idx.kind()) {
    case Kind::kInt:
      return idx.as_int();
    case Kind::kUint:
      if (idx.as_uint() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return std::unexpected(Err{"unsupported index value " + std::to_string(idx.as_uint()) + " in list"});
      }
      return static_cast<int64_t>(idx.as_uint());
    case Kind::kDouble: {
      double d = idx.as_double();
      if (std::trunc(d) != d || d < -9.2e18 || d > 9.2e18) {
        return std::unexpected(Err{"unsupported index value " + go_float(d) + " in list"});
      }
      return static_cast<int64_t>(d);
    }
    default:
      return std::unexpected(Err{"unsupported index type '" + std::string(type_name(idx)) + "' in list"});
  }
}

[[gnu::noinline]] Val index_value(const Value& target, const Value& idx, bool optional) {
  switch (target.kind()) {
    case Kind::kList: {
      auto i = list_index(idx);
      if (!i) return std::unexpected(i.error());
      const auto& l = target.as_list();
      if (*i < 0 || static_cast<uint64_t>(*i) >= l.size()) {
        if (optional) return make_opt(std::nullopt);
        return error("index out of bounds: " + format_key(idx));
      }
      const Value& v = l[static_cast<std::size_t>(*i)];
      return optional ? make_opt(v) : v;
    }
    case Kind::kMap: {
      if (!is_numeric(idx.kind()) && !is_valid_map_key(idx)) return no_overload();
      const Value* v = target.as_map().find(idx);
      if (v == nullptr) {
        if (optional) return make_opt(std::nullopt);
        return error("no such key: " + format_key(idx));
      }
      return optional ? make_opt(*v) : *v;
    }
    case Kind::kOptional: {
      const auto& o = target.as_optional().value;
      if (!o) return make_opt(std::nullopt);
      return index_value(*o, idx, true);
    }
    default:
      if (optional) return make_opt(std::nullopt);
      return error("no such key: " + format_key(idx));
  }
}

struct LocalScope {
  EvalContext& ctx;
  std::size_t n;
  LocalScope(EvalContext& c, const std::string* name, Value v) : ctx(c), n(1) {
    ctx.locals.emplace_back(name, std::move(v));
  }
  LocalScope(EvalContext& c, const std::string* a, Value va, const std::string* b, Value vb) : ctx(c), n(2) {
    ctx.locals.emplace_back(a, std::move(va));
    ctx.locals.emplace_back(b, std::move(vb));
  }
  ~LocalScope() { ctx.locals.resize(ctx.locals.size() - n); }
  LocalScope(const LocalScope&) = delete;
  LocalScope& operator=(const LocalScope&) = delete;
};

[[gnu::noinline]] Val eval_logical(const Node& n, EvalContext& ctx, bool is_and) {
  // Commutative: a decisive operand (false for &&, true for ||) wins over an error on the other side.
  const bool decisive = !is_and;
  Val l = eval(*n.args[0], ctx);
  if (!l && l.error().fatal()) return l;
  if (l && l->kind() == Kind::kBool && l->as_bool() == decisive) return make_bool(decisive);
  Val r = eval(*n.args[1], ctx);
  if (!r && r.error().fatal()) return r;
  if (r && r->kind() == Kind::kBool && r->as_bool() == decisive) return make_bool(decisive);
  bool lb = l && l->kind() == Kind::kBool;
  bool rb = r && r->kind() == Kind::kBool;
  if (lb && rb) return make_bool(!decisive);
  if (!l) return l;
  if (!r) return r;
  return no_overload();
}

// Iterates a comprehension's range: lists give (index, element), maps give (key, value).
template <class F>
std::optional<Err> for_each(const Value& range, F&& f) {
  if (range.kind() == Kind::kList) {
    const auto& l = range.as_list();
    for (std::size_t i = 0; i < l.size(); ++i) {
      if (!f(make_int(static_cast<int64_t>(i)), l[i])) break;
    }
    return std::nullopt;
  }
  if (range.kind() == Kind::kMap) {
    for (const auto& [k, v] : range.as_map().entries) {
      if (!f(k, v)) break;
    }
    return std::nullopt;
  }
  return Err{"no such overload", ErrKind::kNoSuchOverload};
}

[[gnu::noinline]] Val eval_comprehension(const Node& n, EvalContext& ctx) {
  Val range_val = eval(*n.args[0], ctx);
  if (!range_val) return range_val;
  const Value range = std::move(*range_val);
  const bool two = !n.name2.empty();
  const bool is_list = range.kind() == Kind::kList;
  std::optional<Err> err;       // first absorbed/propagated error
  std::optional<Err> fatal;     // stops everything
  std::optional<bool> decided;  // all/exists short circuit
  int64_t count = 0;            // exists_one
  std::vector<Value> out_list;  // map/filter/transformList
  MapData out_map;              // transformMap

  // Evaluates `e` with the iteration variable(s) bound.
  auto bind_eval = [&](const Node& e, const Value& key, const Value& val) -> Val {
    if (two) {
      LocalScope s(ctx, &n.name, key, &n.name2, val);
      return eval(e, ctx);
    }
    // One-variable macros bind the element of a list, or the key of a map.
    LocalScope s(ctx, &n.name, is_list ? val : key);
    return eval(e, ctx);
  };
  auto as_bool = [&](Val& r) -> std::optional<bool> {
    if (!r) {
      if (r.error().fatal()) fatal = r.error();
      return std::nullopt;
    }
    if (r->kind() != Kind::kBool) {
      r = no_overload();
      return std::nullopt;
    }
    return r->as_bool();
  };

  auto step = [&](const Value& key, const Value& val) -> bool {
    if (!ctx.charge(1)) {
      fatal = cost_exceeded().error();
      return false;
    }
    switch (n.macro) {
      case Macro::kAll:
      case Macro::kAll2:
      case Macro::kExists:
      case Macro::kExists2: {
        const bool is_all = n.macro == Macro::kAll || n.macro == Macro::kAll2;
        Val r = bind_eval(*n.args[1], key, val);
        auto b = as_bool(r);
        if (fatal) return false;
        if (!b) {
          if (!err) err = r.error();
          return true;
        }
        if (*b != is_all) {
          decided = *b;
          return false;
        }
        return true;
      }
      case Macro::kExistsOne:
      case Macro::kExistsOne2: {
        Val r = bind_eval(*n.args[1], key, val);
        auto b = as_bool(r);
        if (!b) {
          if (!fatal) err = r.error();
          return false;
        }
        if (*b) ++count;
        return true;
      }
      case Macro::kMap:
      case Macro::kTransformList: {
        Val r = bind_eval(*n.args[1], key, val);
        if (!r) {
          err = r.error();
          return false;
        }
        out_list.push_back(std::move(*r));
        return true;
      }
      case Macro::kFilter:
      case Macro::kMapFilter:
      case Macro::kTransformListFilter:
      case Macro::kTransformMapFilter:
      case Macro::kTransformMap: {
        bool keep = true;
        if (n.macro != Macro::kTransformMap) {
          Val r = bind_eval(*n.args[1], key, val);
          auto b = as_bool(r);
          if (!b) {
            if (!fatal) err = r.error();
            return false;
          }
          keep = *b;
        }
        if (!keep) return true;
        if (n.macro == Macro::kFilter) {
          out_list.push_back(is_list ? val : key);
          return true;
        }
        Val t = bind_eval(*n.args.back(), key, val);
        if (!t) {
          err = t.error();
          return false;
        }
        if (n.macro == Macro::kTransformMap || n.macro == Macro::kTransformMapFilter) {
          out_map.insert(key, std::move(*t));
        } else {
          out_list.push_back(std::move(*t));
        }
        return true;
      }
    }
    return false;
  };

  if (auto bad = for_each(range, step)) return std::unexpected(*bad);
  if (fatal) return std::unexpected(*fatal);
  switch (n.macro) {
    case Macro::kAll:
    case Macro::kAll2:
    case Macro::kExists:
    case Macro::kExists2: {
      if (decided) return make_bool(*decided);
      if (err) return std::unexpected(*err);
      return make_bool(n.macro == Macro::kAll || n.macro == Macro::kAll2);
    }
    case Macro::kExistsOne:
    case Macro::kExistsOne2:
      if (err) return std::unexpected(*err);
      return make_bool(count == 1);
    case Macro::kTransformMap:
    case Macro::kTransformMapFilter:
      if (err) return std::unexpected(*err);
      return make_map(std::move(out_map));
    default:
      if (err) return std::unexpected(*err);
      return make_list(std::move(out_list));
  }
}

[[gnu::noinline]] Val eval_list(const Node& n, EvalContext& ctx) {
  std::vector<Value> items;
  items.reserve(n.args.size());
  for (std::size_t i = 0; i < n.args.size(); ++i) {
    Val v = eval(*n.args[i], ctx);
    if (!v) return v;
    if (i < n.optional_entries.size() && n.optional_entries[i]) {
      if (v->kind() != Kind::kOptional) {
        return error("cannot initialize optional list element from non-optional value " + format_key(*v));
      }
      if (v->as_optional().value) items.push_back(*v->as_optional().value);
      continue;
    }
    items.push_back(std::move(*v));
  }
  return make_list(std::move(items));
}

[[gnu::noinline]] Val eval_map(const Node& n, EvalContext& ctx) {
  MapData m;
  for (std::size_t i = 0; i + 1 < n.args.size(); i += 2) {
    Val k = eval(*n.args[i], ctx);
    if (!k) return k;
    Val v = eval(*n.args[i + 1], ctx);
    if (!v) return v;
    if (!is_valid_map_key(*k)) return error("unsupported key type: " + std::string(type_name(*k)));
    if (i / 2 < n.optional_entries.size() && n.optional_entries[i / 2]) {
      if (v->kind() != Kind::kOptional) {
        return error("cannot initialize optional entry '" + format_key(*k) + "' from non-optional value " +
                     format_key(*v));
      }
      if (!v->as_optional().value) continue;
      Value inner = *v->as_optional().value;
      v = std::move(inner);
    }
    if (auto it = m.index.find(*map_key_repr(*k)); it != m.index.end()) {
      m.entries[it->second].second = std::move(*v);  // a repeated key keeps the last value
      continue;
    }
    m.insert(std::move(*k), std::move(*v));
  }
  return make_map(std::move(m));
}

[[gnu::noinline]] Val eval_call(const Node& n, EvalContext& ctx) {
  std::vector<Value> args;
  args.reserve(n.args.size());
  for (const auto& a : n.args) {
    Val v = eval(*a, ctx);
    if (!v) return v;
    args.push_back(std::move(*v));
  }
  return call_function(n, args, ctx);
}

[[gnu::noinline]] Val eval_access(const Node& n, EvalContext& ctx) {
  Val t = eval(*n.args[0], ctx);
  if (!t) return t;
  switch (n.op) {
    case NodeOp::kSelect:
      return select_field(*t, n.name);
    case NodeOp::kOptSelect:
      if (t->kind() == Kind::kOptional) return select_field(*t, n.name);
      if (t->kind() != Kind::kMap) return make_opt(std::nullopt);
      if (const Value* v = find_field(t->as_map(), n.name)) return make_opt(*v);
      return make_opt(std::nullopt);
    case NodeOp::kHas:
      if (t->kind() == Kind::kMap) return make_bool(find_field(t->as_map(), n.name) != nullptr);
      if (t->kind() == Kind::kList) return error("unsupported index type 'string' in list");
      return make_bool(false);
    default: {
      Val i = eval(*n.args[1], ctx);
      if (!i) return i;
      return index_value(*t, *i, n.op == NodeOp::kOptIndex);
    }
  }
}

[[gnu::noinline]] Val eval_ternary(const Node& n, EvalContext& ctx) {
  Val c = eval(*n.args[0], ctx);
  if (!c) return c;
  if (c->kind() != Kind::kBool) return no_overload();
  return eval(*n.args[c->as_bool() ? 1 : 2], ctx);
}

}  // namespace

Val eval(const Node& n, EvalContext& ctx) {
  if (!ctx.charge(1)) return cost_exceeded();
  switch (n.op) {
    case NodeOp::kLiteral:
      return n.literal;
    case NodeOp::kIdent:
      switch (n.ref) {
        case IdentRef::kSelf:
          if (ctx.self == nullptr) return error("no such attribute(s): self");
          return *ctx.self;
        case IdentRef::kOldSelf:
          if (ctx.old_self == nullptr) return error("no such attribute(s): oldSelf");
          return *ctx.old_self;
        case IdentRef::kLocal:
          for (auto it = ctx.locals.rbegin(); it != ctx.locals.rend(); ++it) {
            if (*it->first == n.name) return it->second;
          }
          return error("no such attribute(s): " + n.name);
        case IdentRef::kType:
          return n.literal;
        case IdentRef::kUnresolved:
          break;
      }
      return error("undeclared reference to '" + n.name + "'");
    case NodeOp::kSelect:
    case NodeOp::kOptSelect:
    case NodeOp::kIndex:
    case NodeOp::kOptIndex:
    case NodeOp::kHas:
      return eval_access(n, ctx);
    case NodeOp::kAnd:
      return eval_logical(n, ctx, true);
    case NodeOp::kOr:
      return eval_logical(n, ctx, false);
    case NodeOp::kTernary:
      return eval_ternary(n, ctx);
    case NodeOp::kList:
      return eval_list(n, ctx);
    case NodeOp::kMap:
      return eval_map(n, ctx);
    case NodeOp::kComprehension:
      return eval_comprehension(n, ctx);
    case NodeOp::kCall:
      return eval_call(n, ctx);
  }
  return error("unsupported expression");
}

}  // namespace kubex::sim::cel::internal
