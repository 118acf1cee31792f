// Parsing of expectations: recursive descent over
//   or := and ('or' and)*      and := not ('and' not)*      not := 'not' not | cmp
//   cmp := sum (('<'|'<='|'>'|'>='|'=='|'!=') sum)?     sum := prod (('+'|'-') prod)*
//   prod := unary (('*'|'/') unary)*     unary := '-' unary | atom
//   atom := number | param | NAME '(' args ')' | '(' or ')'
// Names resolve at load (op ids, streams, params), so a typo is reported with its column.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <unordered_map>

#include <fmt/format.h>

#include "ops/op_kind.hpp"
#include "runner/check/expect.hpp"
#include "runner/check/expect_functions.hpp"
#include "runner/check/items.hpp"
#include "runner/context/load_context.hpp"
#include "runner/core/findings.hpp"
#include "runner/core/limits.hpp"
#include "runner/core/suggest.hpp"

namespace streamlab {
namespace {

using NodePtr = std::shared_ptr<ExpectNode>;

// The names expectations give ops by: each id, and each name a loop gives its ops (`in` for
// in[0], in[1], ...; `a[1]` for a[1][0], a[1][1], ...), so that finding either costs no scan of
// the op list per expectation.
struct OpNames {
  std::unordered_map<std::string, int> ids;
  std::unordered_map<std::string, std::vector<int>> arrays;
};

OpNames op_names(const Experiment& exp) {
  OpNames out;
  for (size_t i = 0; i < exp.ops.size(); ++i) {
    const std::string& id = exp.ops[i].id;
    out.ids.emplace(id, static_cast<int>(i));
    for (size_t at = id.find('['); at != std::string::npos; at = id.find('[', at + 1))
      out.arrays[id.substr(0, at)].push_back(static_cast<int>(i));
  }
  return out;
}

struct ParseFailure {
  size_t offset;
  std::string message;
  std::string unknown_param = {};  // set when the problem is a param the expression names
};

class Parser {
 public:
  // `op_of`: every op id, with its index, and the ops of each loop's name (built once for all
  // expectations).
  Parser(std::string_view text, const Experiment& exp, const ParamScope& params,
         const OpNames& op_of)
      : text_(text), exp_(exp), params_(params), op_of_(op_of) {}

  // A condition (`boolean`), or a number: a measure and its bounds.
  NodePtr run(bool boolean = true) {
    NodePtr root = parse_or();
    skip_space();
    if (pos_ < text_.size()) fail(pos_, fmt::format("unexpected '{}'", text_[pos_]));
    if (boolean && !root->boolean)
      fail(0,
           "an expectation must be a comparison, or comparisons joined by and/or/not (e.g. "
           "\"span() < 2\")");
    if (!boolean && root->boolean)
      fail(0, "expected a number (e.g. \"gpu_span()\"), not a condition");
    // Known at load: one that gives no finite number would never give a verdict or a score (`1 / Z
    // > 0` with Z = 0). Where a measured value decides, the run says so instead, since a guard
    // such as `j == 0 or duration(m[j]) / j < 100` may make the division not matter.
    if (!calls_any(*root) && !std::isfinite(evaluate_constant(*root)))
      fail(0, fmt::format("'{}' gives no finite number (a division by zero?)", trimmed(text_)));
    return root;
  }

 private:
  NodePtr parse_or() {
    return binary_chain([this] { return parse_and(); }, {"or"}, true);
  }
  NodePtr parse_and() {
    return binary_chain([this] { return parse_not(); }, {"and"}, true);
  }

  NodePtr parse_not() {
    size_t begin = skip_space();
    if (!take_word("not")) return parse_cmp();
    Nested nested(*this, begin);
    NodePtr operand = parse_not();
    require_boolean(operand, begin, "'not'");
    return make(ExpectNode::Kind::logical_not, "not", {operand}, begin, true);
  }

  NodePtr parse_cmp() {
    size_t begin = skip_space();
    NodePtr lhs = parse_sum();
    for (std::string_view op : {"<=", ">=", "==", "!=", "<", ">"}) {
      skip_space();
      if (text_.substr(pos_, op.size()) != op) continue;
      pos_ += op.size();
      NodePtr rhs = parse_sum();
      require_number(lhs, begin, op);
      require_number(rhs, begin, op);
      return make(ExpectNode::Kind::binary, std::string(op), {lhs, rhs}, begin, true);
    }
    return lhs;
  }

  NodePtr parse_sum() {
    return binary_chain([this] { return parse_prod(); }, {"+", "-"}, false);
  }
  NodePtr parse_prod() {
    return binary_chain([this] { return parse_unary(); }, {"*", "/"}, false);
  }

  NodePtr parse_unary() {
    size_t begin = skip_space();
    if (pos_ < text_.size() && text_[pos_] == '-') {
      ++pos_;
      Nested nested(*this, begin);
      NodePtr operand = parse_unary();
      require_number(operand, begin, "'-'");
      return make(ExpectNode::Kind::negate, "-", {operand}, begin, false);
    }
    return parse_atom();
  }

  NodePtr parse_atom() {
    size_t begin = skip_space();
    if (pos_ == text_.size()) fail(pos_, "expected a number, a function call or '(' at the end");
    char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      Nested nested(*this, begin);
      NodePtr inner = parse_or();
      skip_space();
      if (pos_ == text_.size() || text_[pos_] != ')') fail(begin, "unbalanced '(': expected ')'");
      ++pos_;
      return inner;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return parse_number(begin);
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return parse_name(begin);
    fail(pos_, fmt::format("expected a number, a function call or '(', got '{}'", c));
  }

  NodePtr parse_number(size_t begin) {
    char* end = nullptr;
    double v = std::strtod(text_.data() + pos_, &end);
    pos_ = static_cast<size_t>(end - text_.data());
    NodePtr n = make(ExpectNode::Kind::number, "", {}, begin, false);
    n->value = v;
    require_finite(n);  // 1e999
    return n;
  }

  NodePtr parse_name(size_t begin) {
    std::string name = word();
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == '(') return parse_call(name, begin);
    auto param = params_.find(name);
    if (param == params_.end()) throw ParseFailure{begin, unknown_param(name), name};
    NodePtr n = make(ExpectNode::Kind::number, "", {}, begin, false);
    n->value = static_cast<double>(param->second);
    return n;
  }

  NodePtr parse_call(const std::string& name, size_t begin) {
    const ExpectFunction* f = find_expect_function(name);
    if (!f) fail(begin, unknown_function(name));
    ++pos_;  // '('
    NodePtr call = make(ExpectNode::Kind::call, name, {}, begin, false);
    Nested nested(*this, begin);
    for (size_t i = 0; i < f->args.size(); ++i) {
      if (i > 0) expect_char(',', fmt::format("{} takes {} arguments", name, f->args.size()));
      read_argument(*call, f->args[i]);
    }
    expect_char(')', fmt::format("{} takes {} argument{}", name, f->args.size(),
                                 f->args.size() == 1 ? "" : "s"));
    call->text = std::string(text_.substr(begin, pos_ - begin));
    call->end = pos_;
    for (const auto& a : call->args) call->height = std::max(call->height, a->height + 1);
    return call;
  }

  void read_argument(ExpectNode& call, ExpectArg kind) {
    size_t begin = skip_space();
    if (kind == ExpectArg::number) {
      NodePtr arg = parse_sum();
      require_number(arg, begin, "'" + call.op + "'");
      call.args.push_back(arg);
      return;
    }
    std::string name = word();
    if (name.empty())
      fail(begin, fmt::format("{}: expected {}", call.op,
                              kind == ExpectArg::stream ? "a stream name" : "an op id"));
    name += index_suffix();
    if (kind == ExpectArg::ops)
      call.sets.push_back(op_set(name, begin));
    else
      call.refs.push_back(kind == ExpectArg::op ? op_index(name, begin)
                                                : stream_index(name, begin));
    if (call.op == "ready") require_query(call.refs.back(), begin);
  }

  // ready() counts a query's answers: any other op has none, and its value would be no number.
  void require_query(int op, size_t at) {
    const std::string_view kind = exp_.ops[static_cast<size_t>(op)].kind->name;
    if (kind != "streamQuery" && kind != "eventQuery")
      fail(at, fmt::format("ready: op '{}' is a {}; expected the id of a streamQuery or eventQuery "
                           "op (ready() is the share of its answers that said 'done')",
                           exp_.ops[static_cast<size_t>(op)].id, kind));
  }

  // An op id, or the name of a loop's ops: every op whose id is NAME[k].
  std::vector<int> op_set(const std::string& name, size_t at) {
    if (auto it = op_of_.ids.find(name); it != op_of_.ids.end()) return {it->second};
    if (auto it = op_of_.arrays.find(name); it != op_of_.arrays.end()) return it->second;
    op_index(name, at);  // reports it, with the ids
    return {};
  }

  int op_index(const std::string& id, size_t at) {
    if (auto it = op_of_.ids.find(id); it != op_of_.ids.end()) return it->second;
    std::vector<std::string> ids;  // not found: the ids, for the message
    for (const Op& op : exp_.ops) ids.push_back(op.id);
    return resolve(ids, id, "op", "op ids", at);
  }

  int stream_index(const std::string& name, size_t at) {
    std::vector<std::string> names;
    for (const Stream& s : exp_.streams) names.push_back(s.name);
    return resolve(names, name, "stream", "streams", at);
  }

  int resolve(const std::vector<std::string>& names, const std::string& name, std::string_view kind,
              std::string_view plural, size_t at) {
    int i = index_of(names, name);
    if (i < 0) fail(at, unknown_name(kind, name, names, plural));
    return i;
  }

  std::string unknown_function(const std::string& name) const {
    std::vector<std::string> names;
    for (const auto& f : expect_functions()) names.emplace_back(f.name);
    return fmt::format("unknown function '{}'{} (functions: {})", name, did_you_mean(name, names),
                       join(names));
  }

  std::string unknown_param(const std::string& name) const {
    std::vector<std::string> names;
    for (const auto& [p, v] : params_) names.push_back(p);
    return fmt::format("unknown name '{}'{}: expected a param{} or a function call", name,
                       did_you_mean(name, names), names.empty() ? "" : " (" + join(names) + ")");
  }

  template <class Next>
  NodePtr binary_chain(Next next, std::initializer_list<std::string_view> ops, bool logical) {
    size_t begin = skip_space();
    NodePtr lhs = next();
    for (;;) {
      skip_space();
      std::string_view matched;
      for (std::string_view op : ops)
        if (logical ? peek_word(op) : text_.substr(pos_, op.size()) == op) matched = op;
      if (matched.empty()) return lhs;
      pos_ += matched.size();
      NodePtr rhs = next();
      logical ? require_boolean(lhs, begin, fmt::format("'{}'", matched))
              : require_number(lhs, begin, fmt::format("'{}'", matched));
      logical ? require_boolean(rhs, begin, fmt::format("'{}'", matched))
              : require_number(rhs, begin, fmt::format("'{}'", matched));
      lhs = make(ExpectNode::Kind::binary, std::string(matched), {lhs, rhs}, begin, logical);
    }
  }

  NodePtr make(ExpectNode::Kind kind, std::string op,
               std::vector<std::shared_ptr<const ExpectNode>> args, size_t begin, bool boolean) {
    auto n = std::make_shared<ExpectNode>();
    n->kind = kind, n->op = std::move(op), n->args = std::move(args), n->boolean = boolean;
    n->begin = begin, n->end = pos_;
    if (foldable(*n)) {  // arithmetic on numbers known at load: one node, evaluated as a run would
      n->value = evaluate_constant(*n);
      n->kind = ExpectNode::Kind::number, n->op.clear(), n->args.clear();
    }
    for (const auto& a : n->args) n->height = std::max(n->height, a->height + 1);
    // A chain (`a + b + c ...`) grows the tree one level per operator: evaluating it recurses
    // that deep, so its height is bounded like the parser's own nesting.
    if (n->height > limits::kExpressionDepth)
      fail(begin, fmt::format("the expectation nests deeper than {} operations; split it",
                              limits::kExpressionDepth));
    return n;
  }

  // Arithmetic whose operands are numbers known at load (literals and params) is done at load: a
  // chain of them then costs one node, not one level of the tree per operator.
  static bool foldable(const ExpectNode& n) {
    using K = ExpectNode::Kind;
    bool arithmetic = n.kind == K::negate || (n.kind == K::binary && !n.boolean);
    return arithmetic && std::all_of(n.args.begin(), n.args.end(),
                                     [](const auto& a) { return a->kind == K::number; });
  }

  static bool calls_any(const ExpectNode& n) {
    if (n.kind == ExpectNode::Kind::call) return true;
    return std::any_of(n.args.begin(), n.args.end(), [](const auto& a) { return calls_any(*a); });
  }

  void require_finite(const NodePtr& n) {
    if (!std::isfinite(n->value))
      fail(n->begin, fmt::format("'{}' is {}, not a finite number", text_of(n), n->value));
  }

  std::string_view text_of(const NodePtr& n) const {
    return trimmed(text_.substr(n->begin, n->end - n->begin));
  }
  // Without the spaces the parser skipped after it.
  static std::string_view trimmed(std::string_view t) {
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
    return t;
  }

  void require_boolean(const NodePtr& n, size_t at, std::string_view op) {
    if (!n->boolean) fail(at, fmt::format("{} joins conditions; '{}' is a number", op, text_of(n)));
  }
  void require_number(const NodePtr& n, size_t at, std::string_view op) {
    if (n->boolean) fail(at, fmt::format("{} takes numbers; '{}' is a condition", op, text_of(n)));
  }

  void expect_char(char c, const std::string& why) {
    skip_space();
    if (pos_ >= text_.size() || text_[pos_] != c)
      fail(pos_, fmt::format("expected '{}': {}", c, why));
    ++pos_;
  }

  // "[3]" for `[EXPR]` after a name (an element of an array, an op of a loop), else "".
  std::string index_suffix() {
    if (pos_ >= text_.size() || text_[pos_] != '[') return "";
    size_t close = text_.find(']', pos_);
    if (close == std::string_view::npos) fail(pos_, "expected ']' after the index");
    auto v = evaluate(text_.substr(pos_ + 1, close - pos_ - 1), params_);
    if (auto* e = std::get_if<ExprError>(&v))
      throw ParseFailure{pos_ + 1 + e->offset, e->message, e->unknown_name};
    pos_ = close + 1;
    return fmt::format("[{}]", std::get<int64_t>(v));
  }

  std::string word() {
    size_t begin = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    return std::string(text_.substr(begin, pos_ - begin));
  }

  bool peek_word(std::string_view w) const {
    if (text_.substr(pos_, w.size()) != w) return false;
    size_t after = pos_ + w.size();
    return after == text_.size() ||
           !(std::isalnum(static_cast<unsigned char>(text_[after])) || text_[after] == '_');
  }

  bool take_word(std::string_view w) {
    if (!peek_word(w)) return false;
    pos_ += w.size();
    return true;
  }

  size_t skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    return pos_;
  }

  [[noreturn]] void fail(size_t at, std::string message) {
    throw ParseFailure{at, std::move(message)};
  }

  // One level of the parser's own recursion (parentheses, not, unary minus, a call's arguments).
  struct Nested {
    Nested(Parser& p, size_t at) : p_(p) {
      if (++p_.depth_ > limits::kExpressionDepth)
        p_.fail(at, fmt::format("the expectation nests deeper than {} levels",
                                limits::kExpressionDepth));
    }
    ~Nested() { --p_.depth_; }
    Parser& p_;
  };

  int depth_ = 0;
  std::string_view text_;
  const Experiment& exp_;
  const ParamScope& params_;
  const OpNames& op_of_;
  size_t pos_ = 0;
};

bool uses_time(const ExpectNode& n) {
  if (n.kind == ExpectNode::Kind::call && find_expect_function(n.op)->uses_time) return true;
  for (const auto& a : n.args)
    if (uses_time(*a)) return true;
  return false;
}

// The text of an expression (a string, or a number written plainly), at most
// limits::kExpectationChars long.
std::optional<std::string> expression_text(LoadContext& ctx, const YAML::Node& node,
                                           std::string_view what) {
  auto text = ctx.scalar(node, what);
  if (text && text->size() > limits::kExpectationChars) {
    ctx.error(node, fmt::format("{}: {} characters; an expression has at most {}: split it", what,
                                text->size(), limits::kExpectationChars));
    return std::nullopt;
  }
  return text;
}

// The ops an expression's op sets name.
int64_t op_refs(const ExpectNode& n) {
  int64_t refs = 0;
  for (const auto& set : n.sets) refs += static_cast<int64_t>(set.size());
  for (const auto& a : n.args) refs += op_refs(*a);
  return refs;
}

// Parses `node`'s text; reports a problem at its column. Null when it does not parse.
NodePtr parse_at(LoadContext& ctx, const YAML::Node& node, std::string_view what, bool boolean,
                 const OpNames& op_of) {
  auto text = expression_text(ctx, node, what);
  if (!text) return nullptr;
  try {
    NodePtr root = Parser(*text, ctx.exp, ctx.params, op_of).run(boolean);
    const bool was_over = ctx.expectation_op_refs > limits::kExpectationOpRefs;
    ctx.expectation_op_refs += op_refs(*root);
    if (ctx.expectation_op_refs > limits::kExpectationOpRefs) {
      if (!was_over)  // said once, where the sets passed the limit
        ctx.error(node, fmt::format("{}: the expectations' op sets name more than {} ops in all "
                                  "(window(in, out) names every in[k] and out[k]): name fewer",
                                  what, limits::kExpectationOpRefs));
      return nullptr;
    }
    return root;
  } catch (const ParseFailure& f) {
    if (ctx.broken_params.contains(f.unknown_param)) return nullptr;  // its problem was reported
    SourceLoc at = ctx.loc(node);
    at.col += static_cast<int>(f.offset) +
              (node.Tag() == "!" ? 1 : 0);  // quoted: text starts after the quote
    ctx.diags.error(at, fmt::format("{}: {}", what, f.message));
    return nullptr;
  }
}

void read_measure(LoadContext& ctx, MapReader& r, Expectation& e,
                  const OpNames& op_of) {
  e.form = Expectation::Form::measure;
  e.text = r.ctx.scalar(r.get("measure"), "measure").value_or("");
  NodePtr root = parse_at(ctx, r.get("measure"), "measure", false, op_of);
  NodePtr full = parse_at(ctx, r.require("full_at"), "full_at", false, op_of);
  NodePtr zero = parse_at(ctx, r.require("zero_at"), "zero_at", false, op_of);
  if (r.has("relative")) e.relative = ctx.scalar(r.get("relative"), "relative").value_or("");
  if (!e.relative.empty() && !is_identifier(e.relative))
    ctx.error(r.get("relative"),
              fmt::format("relative: '{}' is not the name of a peer (an identifier, such as "
                          "reference)",
                          e.relative));
  if (!root || !full || !zero) return;
  if (!e.relative.empty())
    for (const auto& v : ctx.item_loop_vars) e.loop_values.emplace_back(v, ctx.params[v]);
  e.full_text = r.get("full_at").Scalar(), e.zero_text = r.get("zero_at").Scalar();
  e.root = root, e.full_at = full, e.zero_at = zero;
  e.uses_time = uses_time(*root) || uses_time(*full) || uses_time(*zero);
}

void read_no_diagnostics(LoadContext& ctx, MapReader& r, Expectation& e) {
  e.form = Expectation::Form::no_diagnostics;
  YAML::Node node = r.get("no_diagnostics");
  if (!node.IsSequence() || node.size() == 0)
    return ctx.error(node, fmt::format("no_diagnostics: expected a list of diagnostic codes "
                                       "(e.g. [race, pageable-async]), got {}",
                                       describe_node(node)));
  std::vector<std::string> codes;
  for (const auto& k : finding_kinds()) codes.emplace_back(k.code);
  for (const auto& c : node)
    if (auto i = ctx.choice(c, "diagnostic code", codes)) e.codes.push_back(codes[*i]);
  e.text = "no " + join(e.codes) + " from streamlab check";
}

// `- {id: ..., points: ..., that: COND | measure: EXPR, full_at, zero_at | no_diagnostics: [...]}`
void load_item(LoadContext& ctx, const YAML::Node& item,
               const OpNames& op_of) {
  std::vector<std::string> keys = {"that?",    "measure?",  "full_at?",
                                   "zero_at?", "relative?", "no_diagnostics?"};
  add_item_keys(keys);
  MapReader r(ctx, item, "expectation", keys);
  if (!r.ok()) return;
  Expectation e;
  e.loc = ctx.loc(item);
  e.item = read_item_meta(r);
  int forms = r.has("that") + r.has("measure") + r.has("no_diagnostics");
  if (forms != 1)
    return ctx.error(item,
                     "expectation: give exactly one of `that:` (a condition), `measure:` (a "
                     "number, with full_at and zero_at for its points) and `no_diagnostics:` (a "
                     "list of codes `streamlab check` must not find)");
  if (!r.has("measure"))
    for (const char* key : {"full_at", "zero_at", "relative"})
      if (r.has(key))
        ctx.error(r.get(key), fmt::format("{} belongs to a `measure:` expectation", key));
  if (r.has("that")) {
    e.text = ctx.scalar(r.get("that"), "that").value_or("");
    e.root = parse_at(ctx, r.get("that"), "expect", true, op_of);
    e.uses_time = e.root && uses_time(*e.root);
    e.loc = ctx.loc(r.get("that"));
  } else if (r.has("measure")) {
    read_measure(ctx, r, e, op_of);
  } else {
    read_no_diagnostics(ctx, r, e);
  }
  if (e.root || e.form == Expectation::Form::no_diagnostics) ctx.exp.expectations.push_back(e);
}

}  // namespace

void load_expectations(LoadContext& ctx, const YAML::Node& node) {
  if (node.IsDefined() && !node.IsNull() && !node.IsSequence()) {
    ctx.error(node,
              fmt::format("expect: expected a list of conditions (`- \"span() < 2\"`), got {}",
                          describe_node(node)));
    return;
  }
  const OpNames op_of = op_names(ctx.exp);
  for_each_item(ctx, node, "expect", [&](const YAML::Node& item) {
    if (item.IsMap()) return load_item(ctx, item, op_of);
    NodePtr root = parse_at(ctx, item, "expect", true, op_of);
    if (!root) return;
    Expectation e;
    e.text = item.Scalar(), e.loc = ctx.loc(item), e.root = root, e.uses_time = uses_time(*root);
    ctx.exp.expectations.push_back(std::move(e));
  });
}

namespace {

std::shared_ptr<const ExpectNode> parse_with(
    const Experiment& exp, std::string_view text,
    const std::vector<std::pair<std::string, int64_t>>& extra, std::string* error) {
  ParamScope params;
  for (const auto& [name, value] : exp.params) params[name] = value;
  for (const auto& [name, value] : extra) params[name] = value;
  const OpNames op_of = op_names(exp);
  try {
    return Parser(text, exp, params, op_of).run(false);
  } catch (const ParseFailure& f) {
    *error = fmt::format("column {}: {}", f.offset + 1, f.message);
    return nullptr;
  }
}

}  // namespace

std::shared_ptr<const ExpectNode> parse_peer_measure(const Experiment& peer, const Expectation& e,
                                                     std::string* error) {
  return parse_with(peer, e.text, e.loop_values, error);
}

std::shared_ptr<const ExpectNode> parse_measure(const Experiment& exp, std::string_view text,
                                                std::string* error) {
  if (text.size() > limits::kExpectationChars) {
    *error = fmt::format("{} characters; an expression has at most {}", text.size(),
                         limits::kExpectationChars);
    return nullptr;
  }
  return parse_with(exp, text, {}, error);
}

std::shared_ptr<const ExpectNode> load_measure(LoadContext& ctx, const YAML::Node& node,
                                               std::string_view what) {
  const OpNames op_of = op_names(ctx.exp);
  return parse_at(ctx, node, what, false, op_of);
}

bool measure_uses_time(const ExpectNode& measure) { return uses_time(measure); }

std::optional<std::string> measure_unit(const ExpectNode& n) {
  using Unit = std::optional<std::string>;
  if (n.kind == ExpectNode::Kind::number) return "";
  if (n.kind == ExpectNode::Kind::negate) return measure_unit(*n.args[0]);
  if (n.kind == ExpectNode::Kind::call) {
    const ExpectFunction* f = find_expect_function(n.op);
    if (!f->unit.empty() || n.args.empty()) return std::string(f->unit);
    Unit common;  // min, max, abs: the unit their arguments share (a plain number takes it)
    for (const auto& a : n.args) {
      if (a->kind == ExpectNode::Kind::number) continue;
      Unit u = measure_unit(*a);
      if (!u || (common && *common != *u)) return std::nullopt;
      common = u;
    }
    return common.value_or("");
  }
  if (n.kind != ExpectNode::Kind::binary || n.args.size() != 2) return std::nullopt;
  Unit a = measure_unit(*n.args[0]), b = measure_unit(*n.args[1]);
  if (!a || !b) return std::nullopt;
  const bool a_plain = n.args[0]->kind == ExpectNode::Kind::number;
  const bool b_plain = n.args[1]->kind == ExpectNode::Kind::number;
  if (n.op == "+" || n.op == "-") {
    if (*a == *b || b_plain) return a;
    if (a_plain) return b;
  } else if (n.op == "*") {
    if (a->empty()) return b;
    if (b->empty()) return a;
  } else if (n.op == "/") {
    if (*a == *b) return "";
    if (b->empty()) return a;
  }
  return std::nullopt;  // units that do not combine, or a condition
}

}  // namespace streamlab
