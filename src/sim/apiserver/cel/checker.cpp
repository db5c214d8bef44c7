// Resolution pass over a parsed CEL expression: identifiers (self, oldSelf, comprehension variables, type
// names), function names and call styles, namespaced functions (optional.of, sets.contains, strings.quote),
// and the literal checks kube-apiserver enables at compile time (duration/timestamp/regex literals,
// homogeneous aggregate literals).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/apiserver/cel/internal.h"

namespace kubex::sim::cel::internal {

namespace {

constexpr std::string_view kTypeNames[] = {"int",   "uint", "double", "bool",      "string",
                                           "bytes", "list", "map",    "null_type", "type"};

class Checker {
 public:
  std::vector<Issue> issues;
  bool uses_old_self = false;

  void visit(Node& n) {
    switch (n.op) {
      case NodeOp::kLiteral:
        return;
      case NodeOp::kIdent:
        return resolve_ident(n);
      case NodeOp::kSelect:
      case NodeOp::kOptSelect:
      case NodeOp::kHas:
      case NodeOp::kIndex:
      case NodeOp::kOptIndex:
      case NodeOp::kAnd:
      case NodeOp::kOr:
      case NodeOp::kTernary:
        for (auto& a : n.args) visit(*a);
        return;
      case NodeOp::kList:
        for (auto& a : n.args) visit(*a);
        homogeneous(n, 0, 1);
        return;
      case NodeOp::kMap:
        for (auto& a : n.args) visit(*a);
        homogeneous(n, 0, 2);
        homogeneous(n, 1, 2);
        return;
      case NodeOp::kCall:
        return resolve_call(n);
      case NodeOp::kComprehension: {
        visit(*n.args[0]);
        scopes_.push_back(&n.name);
        if (!n.name2.empty()) scopes_.push_back(&n.name2);
        for (std::size_t k = 1; k < n.args.size(); ++k) visit(*n.args[k]);
        scopes_.pop_back();
        if (!n.name2.empty()) scopes_.pop_back();
        return;
      }
    }
  }

 private:
  bool is_local(const std::string& name) const {
    for (const std::string* s : scopes_) {
      if (*s == name) return true;
    }
    return false;
  }

  void issue(const Node& n, std::string msg) { issues.push_back(Issue{n.pos, std::move(msg)}); }

  void resolve_ident(Node& n) {
    bool root_only = n.member;
    if (!root_only && is_local(n.name)) {
      n.ref = IdentRef::kLocal;
      return;
    }
    if (n.name == "self") {
      n.ref = IdentRef::kSelf;
      return;
    }
    if (n.name == "oldSelf") {
      n.ref = IdentRef::kOldSelf;
      uses_old_self = true;
      return;
    }
    for (auto t : kTypeNames) {
      if (n.name == t) {
        n.ref = IdentRef::kType;
        n.literal = make_type(t);
        return;
      }
    }
    issue(n, "undeclared reference to '" + n.name + "' (in container '')");
  }

  void resolve_call(Node& n) {
    // `optional.of(x)`, `sets.contains(a, b)`: a namespaced global function, not a method on a variable.
    if (n.member && n.args[0]->op == NodeOp::kIdent && !is_local(n.args[0]->name) &&
        n.args[0]->name != "self" && n.args[0]->name != "oldSelf") {
      std::string qualified = n.args[0]->name + "." + n.name;
      if (const FunctionInfo* f = lookup_function(qualified); f != nullptr && f->global) {
        n.name = qualified;
        n.member = false;
        n.args.erase(n.args.begin());
      }
    }
    for (auto& a : n.args) visit(*a);
    if (n.fn != Fn::kUnknown) return;  // operators are resolved by the parser
    const FunctionInfo* f = lookup_function(n.name);
    if (f == nullptr) {
      issue(n, "undeclared reference to '" + n.name + "' (in container '')");
      return;
    }
    if (n.member ? !f->member : !f->global) {  // cel-go: the name exists, no overload of this form
      issue(n, "found no matching overload for '" + n.name + "' applied to " +
                   (n.member ? "a receiver (it is a global function)" : "no receiver (it is a member function)"));
      return;
    }
    int nargs = static_cast<int>(n.args.size());
    if (nargs < f->min_args || nargs > f->max_args) {
      issue(n, "found no matching overload for '" + n.name + "' applied to " + std::to_string(nargs) +
                   (nargs == 1 ? " argument" : " arguments"));
      return;
    }
    n.fn = f->fn;
    check_literal_argument(n);
  }

  static const std::string* literal_string(const Node& n) {
    if (n.op != NodeOp::kLiteral || n.literal.kind() != Kind::kString) return nullptr;
    return &n.literal.as_string();
  }

  void check_literal_argument(Node& n) {
    switch (n.fn) {
      case Fn::kDuration:
        if (const std::string* s = literal_string(*n.args[0]); s && !parse_duration(*s)) {
          issue(*n.args[0], "invalid duration argument");
        }
        return;
      case Fn::kTimestamp:
        if (const std::string* s = literal_string(*n.args[0]); s && !parse_rfc3339(*s)) {
          issue(*n.args[0], "invalid timestamp argument");
        }
        return;
      case Fn::kMatches:
      case Fn::kFind:
      case Fn::kFindAll: {
        if (n.args.size() < 2) return;
        const std::string* s = literal_string(*n.args[1]);
        if (s == nullptr) return;
        auto re = compile_regex(*s);
        if (!re) {
          issue(*n.args[1], "invalid " + n.name + " argument");
          return;
        }
        n.regex = *re;
        return;
      }
      default:
        return;
    }
  }

  // cel.ValidateHomogeneousAggregateLiterals: literal elements of a list (or keys/values of a map) must share
  // one type. Only literal elements can be judged without a schema.
  void homogeneous(const Node& n, std::size_t first, std::size_t stride) {
    const Node* seen = nullptr;
    for (std::size_t k = first; k < n.args.size(); k += stride) {
      const Node& e = *n.args[k];
      bool optional = n.optional_entries.size() > k / stride && n.optional_entries[k / stride];
      if (e.op != NodeOp::kLiteral || optional) continue;
      if (seen == nullptr) {
        seen = &e;
      } else if (seen->literal.kind() != e.literal.kind()) {
        issue(e, "expected type '" + std::string(type_name(seen->literal)) + "' but found '" +
                     std::string(type_name(e.literal)) + "'");
        return;
      }
    }
  }

  std::vector<const std::string*> scopes_;
};

}  // namespace

std::vector<Issue> check(Node& root, bool* uses_old_self) {
  Checker c;
  c.visit(root);
  if (uses_old_self) *uses_old_self = c.uses_old_self;
  return std::move(c.issues);
}

std::optional<Kind> static_result_kind(const Node& n) {
  switch (n.op) {
    case NodeOp::kLiteral:
      return n.literal.kind();
    case NodeOp::kList:
      return Kind::kList;
    case NodeOp::kMap:
      return Kind::kMap;
    case NodeOp::kAnd:
    case NodeOp::kOr:
    case NodeOp::kHas:
      return Kind::kBool;
    case NodeOp::kTernary: {
      auto a = static_result_kind(*n.args[1]);
      auto b = static_result_kind(*n.args[2]);
      if (a && b && *a == *b) return a;
      return std::nullopt;
    }
    case NodeOp::kComprehension:
      switch (n.macro) {
        case Macro::kAll:
        case Macro::kExists:
        case Macro::kExistsOne:
        case Macro::kAll2:
        case Macro::kExists2:
        case Macro::kExistsOne2:
          return Kind::kBool;
        case Macro::kTransformMap:
        case Macro::kTransformMapFilter:
          return Kind::kMap;
        default:
          return Kind::kList;
      }
    case NodeOp::kCall:
      if (is_time_accessor(n.fn)) return Kind::kInt;
      switch (n.fn) {
        case Fn::kNot:
        case Fn::kEq:
        case Fn::kNe:
        case Fn::kLt:
        case Fn::kLe:
        case Fn::kGt:
        case Fn::kGe:
        case Fn::kIn:
        case Fn::kMatches:
        case Fn::kContains:
        case Fn::kStartsWith:
        case Fn::kEndsWith:
        case Fn::kIsQuantity:
        case Fn::kIsSorted:
        case Fn::kIsGreaterThan:
        case Fn::kIsLessThan:
        case Fn::kIsInteger:
        case Fn::kHasValue:
        case Fn::kSetsContains:
        case Fn::kSetsEquivalent:
        case Fn::kSetsIntersects:
        case Fn::kBool:
          return Kind::kBool;
        case Fn::kSize:
        case Fn::kInt:
        case Fn::kCompareTo:
        case Fn::kAsInteger:
        case Fn::kSign:
          return Kind::kInt;
        case Fn::kString:
        case Fn::kLowerAscii:
        case Fn::kUpperAscii:
        case Fn::kReplace:
        case Fn::kSubstring:
        case Fn::kTrim:
        case Fn::kJoin:
        case Fn::kQuote:
        case Fn::kCharAt:
        case Fn::kFind:
          return Kind::kString;
        case Fn::kUint:
          return Kind::kUint;
        case Fn::kDouble:
        case Fn::kAsApproximateFloat:
          return Kind::kDouble;
        case Fn::kDuration:
          return Kind::kDuration;
        case Fn::kTimestamp:
          return Kind::kTimestamp;
        case Fn::kQuantity:
        case Fn::kQuantityAdd:
        case Fn::kQuantitySub:
          return Kind::kQuantity;
        case Fn::kSplit:
        case Fn::kFindAll:
          return Kind::kList;
        case Fn::kBytes:
          return Kind::kBytes;
        case Fn::kType:
          return Kind::kType;
        case Fn::kOptionalOf:
        case Fn::kOptionalNone:
        case Fn::kOptionalOfNonZero:
        case Fn::kOr:
          return Kind::kOptional;
        default:
          return std::nullopt;
      }
    default:
      return std::nullopt;
  }
}

}  // namespace kubex::sim::cel::internal
