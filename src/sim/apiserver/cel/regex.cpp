// RE2-syntax regular expressions for CEL's matches() and the Kubernetes find()/findAll(), run on a Pike VM:
// time is linear in the text (times the program size), there is no backtracking and no recursion on the
// input, so a hostile pattern or string cannot hang or crash the server (std::regex can do both).
// Semantics follow Go's regexp (leftmost-first, `$` is end of text unless (?m), `.` excludes \n unless (?s)).
// Supported: literals, `.`, classes with ranges/negation/escapes/POSIX names, \d \s \w (ASCII) and their
// negations, \b \B \A \z, ^ $, groups (capturing, (?:...), (?P<name>...), (?<name>...)), flags i m s U
// (`(?i)`, `(?i:...)`), alternation, * + ? {n} {n,} {n,m} and lazy forms, \x{...} \xHH octal and \Q...\E.
// Not supported: Unicode classes (\pL, \p{Greek}) and Unicode case folding beyond ASCII.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/apiserver/cel/internal.h"

namespace kubex::sim::cel::internal {

namespace {

constexpr std::size_t kMaxProgram = 50'000;

// ---------------------------------------------------------------------------------------------------------
// Program

enum class Op : uint8_t { kChar, kAny, kAnyNotNL, kClass, kSplit, kJmp, kMatch, kAssert };

struct Inst {
  Op op = Op::kMatch;
  bool fold = false;
  bool negated = false;
  RegexAssert assert_kind = RegexAssert::kBeginText;
  char32_t c = 0;
  int x = 0, y = 0;  // split/jump targets; x has priority
  int cls = -1;
};

}  // namespace

struct Regex {
  std::vector<Inst> prog;
  std::vector<CharRanges> classes;
};

namespace {

class Compiler {
 public:
  explicit Compiler(Regex& re) : re_(re) {}

  bool emit(const RegexNode& n) {
    if (re_.prog.size() > kMaxProgram) return false;
    switch (n.t) {
      case RegexNode::T::kEmpty:
        return true;
      case RegexNode::T::kLiteral: {
        Inst i;
        i.op = Op::kChar;
        i.c = n.fold ? ascii_lower(n.c) : n.c;
        i.fold = n.fold;
        re_.prog.push_back(i);
        return true;
      }
      case RegexNode::T::kAny:
      case RegexNode::T::kAnyNotNL: {
        Inst i;
        i.op = n.t == RegexNode::T::kAny ? Op::kAny : Op::kAnyNotNL;
        re_.prog.push_back(i);
        return true;
      }
      case RegexNode::T::kClass: {
        Inst i;
        i.op = Op::kClass;
        i.cls = static_cast<int>(re_.classes.size());
        i.fold = n.fold;
        i.negated = n.negated;
        re_.classes.push_back(n.ranges);
        re_.prog.push_back(i);
        return true;
      }
      case RegexNode::T::kAssert: {
        Inst i;
        i.op = Op::kAssert;
        i.assert_kind = n.assert_kind;
        re_.prog.push_back(i);
        return true;
      }
      case RegexNode::T::kConcat:
        for (const auto& k : n.kids) {
          if (!emit(k)) return false;
        }
        return true;
      case RegexNode::T::kAlt: {
        // split L1, next; L1: a; jmp end; next: split L2, ... ; last
        std::vector<std::size_t> jumps;
        for (std::size_t k = 0; k < n.kids.size(); ++k) {
          if (k + 1 < n.kids.size()) {
            std::size_t split = push(Op::kSplit);
            re_.prog[split].x = static_cast<int>(split + 1);
            if (!emit(n.kids[k])) return false;
            jumps.push_back(push(Op::kJmp));
            re_.prog[split].y = static_cast<int>(re_.prog.size());
          } else if (!emit(n.kids[k])) {
            return false;
          }
        }
        for (std::size_t j : jumps) re_.prog[j].x = static_cast<int>(re_.prog.size());
        return true;
      }
      case RegexNode::T::kRepeat:
        return emit_repeat(n);
    }
    return false;
  }

 private:
  std::size_t push(Op op) {
    Inst i;
    i.op = op;
    re_.prog.push_back(i);
    return re_.prog.size() - 1;
  }

  void set_split(std::size_t split, int body, int out, bool greedy) {
    re_.prog[split].x = greedy ? body : out;
    re_.prog[split].y = greedy ? out : body;
  }

  bool emit_repeat(const RegexNode& n) {
    const RegexNode& body = n.kids[0];
    for (int k = 0; k < n.min; ++k) {
      if (!emit(body) || re_.prog.size() > kMaxProgram) return false;
    }
    if (n.max < 0) {
      // e{n,} = e^n e*; e*: L: split body, out; body; jmp L
      std::size_t split = push(Op::kSplit);
      int body_pc = static_cast<int>(re_.prog.size());
      if (!emit(body)) return false;
      std::size_t jmp = push(Op::kJmp);
      re_.prog[jmp].x = static_cast<int>(split);
      set_split(split, body_pc, static_cast<int>(re_.prog.size()), n.greedy);
      return true;
    }
    // Optional copies: (e(e(e)?)?)?
    std::vector<std::size_t> splits;
    for (int k = n.min; k < n.max; ++k) {
      std::size_t split = push(Op::kSplit);
      splits.push_back(split);
      re_.prog[split].x = static_cast<int>(split + 1);
      if (!emit(body) || re_.prog.size() > kMaxProgram) return false;
    }
    int out = static_cast<int>(re_.prog.size());
    for (std::size_t s : splits) set_split(s, static_cast<int>(s + 1), out, n.greedy);
    return true;
  }

  Regex& re_;
};

bool class_matches(const Regex& re, const Inst& in, char32_t c) {
  const CharRanges& r = re.classes[static_cast<std::size_t>(in.cls)];
  auto has = [&](char32_t x) {
    for (auto [lo, hi] : r) {
      if (x >= lo && x <= hi) return true;
    }
    return false;
  };
  bool hit = has(c) || (in.fold && (has(ascii_lower(c)) || has(ascii_upper(c))));
  return hit != in.negated;
}

bool assertion_holds(RegexAssert k, std::string_view text, std::size_t pos) {
  switch (k) {
    case RegexAssert::kBeginText:
      return pos == 0;
    case RegexAssert::kEndText:
      return pos == text.size();
    case RegexAssert::kBeginLine:
      return pos == 0 || text[pos - 1] == '\n';
    case RegexAssert::kEndLine:
      return pos == text.size() || text[pos] == '\n';
    case RegexAssert::kWordBoundary:
    case RegexAssert::kNotWordBoundary: {
      bool before = pos > 0 && is_word_byte(static_cast<unsigned char>(text[pos - 1]));
      bool after = pos < text.size() && is_word_byte(static_cast<unsigned char>(text[pos]));
      return (before != after) == (k == RegexAssert::kWordBoundary);
    }
  }
  return false;
}

struct Thread {
  int pc;
  std::size_t start;
};

}  // namespace

std::expected<std::shared_ptr<const Regex>, std::string> compile_regex(std::string_view pattern) {
  auto tree = parse_regex(pattern);
  if (!tree) return std::unexpected(tree.error());
  auto re = std::make_shared<Regex>();
  Compiler c(*re);
  if (!c.emit(*tree) || re->prog.size() > kMaxProgram) {
    return std::unexpected("error parsing regexp: expression too large: `" + std::string(pattern) + "`");
  }
  Inst match;
  match.op = Op::kMatch;
  re->prog.push_back(match);
  return std::shared_ptr<const Regex>(std::move(re));
}

std::optional<std::pair<std::size_t, std::size_t>> regex_search(const Regex& re, std::string_view text,
                                                                std::size_t from, int64_t& steps,
                                                                int64_t step_limit) {
  const std::size_t n = re.prog.size();
  std::vector<uint32_t> mark(n, 0);
  uint32_t gen = 1;
  std::vector<Thread> clist, nlist;
  std::vector<int> stack;
  clist.reserve(n);
  nlist.reserve(n);

  // Adds the epsilon closure of `pc` at text position `pos` to `list`, in priority order.
  auto add = [&](std::vector<Thread>& list, int pc0, std::size_t start, std::size_t pos) {
    stack.clear();
    stack.push_back(pc0);
    while (!stack.empty()) {
      int pc = stack.back();
      stack.pop_back();
      auto upc = static_cast<std::size_t>(pc);
      if (mark[upc] == gen) continue;
      mark[upc] = gen;
      ++steps;
      const Inst& in = re.prog[upc];
      switch (in.op) {
        case Op::kJmp:
          stack.push_back(in.x);
          break;
        case Op::kSplit:
          stack.push_back(in.y);
          stack.push_back(in.x);
          break;
        case Op::kAssert:
          if (assertion_holds(in.assert_kind, text, pos)) stack.push_back(pc + 1);
          break;
        default:
          list.push_back(Thread{pc, start});
      }
    }
  };

  std::optional<std::pair<std::size_t, std::size_t>> match;
  std::size_t pos = from;
  while (true) {
    if (steps > step_limit) return std::nullopt;
    if (!match) add(clist, 0, pos, pos);
    if (clist.empty()) break;
    bool at_end = pos >= text.size();
    std::size_t next = pos;
    char32_t c = at_end ? 0 : utf8_next(text, next);
    ++gen;
    nlist.clear();
    for (const Thread& t : clist) {
      ++steps;
      const Inst& in = re.prog[static_cast<std::size_t>(t.pc)];
      bool ok = false;
      switch (in.op) {
        case Op::kMatch:
          match = std::make_pair(t.start, pos);
          break;
        case Op::kChar:
          ok = !at_end && (in.fold ? ascii_lower(c) == in.c : c == in.c);
          break;
        case Op::kAny:
          ok = !at_end;
          break;
        case Op::kAnyNotNL:
          ok = !at_end && c != '\n';
          break;
        case Op::kClass:
          ok = !at_end && class_matches(re, in, c);
          break;
        default:
          break;
      }
      if (in.op == Op::kMatch) break;  // lower-priority threads lose to this match
      if (ok) add(nlist, t.pc + 1, t.start, next);
    }
    if (at_end) break;
    std::swap(clist, nlist);
    pos = next;
    if (match && clist.empty()) break;
  }
  return match;
}

}  // namespace kubex::sim::cel::internal
