// The `ops:` section: a list of {kind: {fields}} in host issue order; each kind's fields are
// read by its own parse function (ops/).
#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "ops/op.hpp"
#include "runner/load_context.hpp"
#include "runner/suggest.hpp"

namespace streamlab {
namespace {

std::vector<std::string> op_names() {
  std::vector<std::string> names;
  for (const OpKind* k : op_table()) names.emplace_back(k->name);
  return names;
}

// The keys each op kind accepts, built once: a long loop reads thousands of ops.
const std::vector<std::string>& op_keys(const OpKind& kind) {
  static const auto keys = [] {
    std::map<const OpKind*, std::vector<std::string>> all;
    for (const OpKind* k : op_table()) {
      std::vector<std::string> v(k->keys.begin(), k->keys.end());
      v.emplace_back("id?");
      v.emplace_back("allow?");
      all[k] = std::move(v);
    }
    return all;
  }();
  return keys.at(&kind);
}

// `prefix`: the graph whose body the op is in ("g."), empty at the top level.
void read_id(MapReader& r, Op& op, int number, const std::vector<Op>& siblings, std::string_view prefix) {
  op.id = fmt::format("{}{}#{}", prefix, op.kind->name, number);
  if (!r.has("id")) return;
  auto id = r.ctx.indexed_name(r.get("id"), "id");  // `k[i]` in a loop
  if (!id) return;
  if (!is_identifier(id->substr(0, id->find('[')))) {
    r.ctx.error(r.get("id"), fmt::format("id '{}' is not an identifier (letters, digits and '_', with an "
                                         "optional [index])", *id));
    return;
  }
  for (const std::vector<Op>* list : {&std::as_const(r.ctx.exp.ops), &siblings})
    for (const Op& earlier : *list)
      if (earlier.id == *id) {
        r.ctx.error(r.get("id"), fmt::format("op id '{}' is used twice (first at line {})", *id, earlier.loc.line));
        return;
      }
  op.id = *id;
}

void load_op(LoadContext& ctx, const YAML::Node& item, std::vector<Op>& out, std::string_view prefix);

constexpr int64_t kMaxExpandedOps = 100'000;

// `- loop: {var: i, count: E, ops: [...]}`: the body once per value 0 .. E-1 of `var`, a param
// inside it; loops nest.
void load_loop(LoadContext& ctx, const YAML::Node& body, std::vector<Op>& out, std::string_view prefix) {
  MapReader r(ctx, body, "loop", {"var", "count", "ops"});
  if (!r.ok()) return;
  auto var = ctx.scalar(r.require("var"), "loop var");
  auto count = ctx.integer(r.require("count"), "loop count");
  YAML::Node ops = r.require("ops");
  if (!var || !count || !ops.IsDefined()) return;
  if (!is_identifier(*var) || ctx.params.contains(*var)) {
    ctx.error(r.get("var"), fmt::format("loop var '{}' {}", *var, is_identifier(*var) ? "is already a param" :
                                        "is not an identifier"));
    return;
  }
  if (*count < 0 || static_cast<int64_t>(ctx.exp.ops.size() + out.size()) + *count > kMaxExpandedOps) {
    ctx.error(r.get("count"), fmt::format("loop count {}; expected 0 or more, and at most {} ops in all", *count,
                                          kMaxExpandedOps));
    return;
  }
  if (!ops.IsSequence()) {
    ctx.error(ops, fmt::format("loop ops: expected a list of ops, got {}", describe_node(ops)));
    return;
  }
  size_t errors = ctx.diags.items().size();
  for (int64_t v = 0; v < *count; ++v) {
    ctx.params[*var] = v;
    for (const auto& item : ops) load_op(ctx, item, out, prefix);
    if (ctx.diags.items().size() > errors) break;  // the same mistake once, not once per iteration
  }
  ctx.params.erase(*var);
}

void load_op(LoadContext& ctx, const YAML::Node& item, std::vector<Op>& out, std::string_view prefix) {
  int number = static_cast<int>(out.size()) + 1;
  if (!item.IsMap() || item.size() != 1) {
    ctx.error(item, fmt::format("expected one op per list item, as `- KIND: {{fields}}` (e.g. `- deviceSynchronize: "
                                "{{}}`), got {}", item.IsMap() ? fmt::format("a mapping of {} keys", item.size())
                                                               : describe_node(item)));
    return;
  }
  auto entry = *item.begin();
  std::string name = entry.first.IsScalar() ? entry.first.Scalar() : "";
  if (name == "loop") return load_loop(ctx, entry.second, out, prefix);
  const OpKind* kind = find_op_kind(name);
  if (!kind) {
    ctx.error(entry.first, fmt::format("unknown op '{}'{} (ops: {}; and loop)", name, did_you_mean(name, op_names()),
                                       join(op_names())));
    return;
  }
  Op op;
  op.kind = kind;
  op.loc = ctx.loc(entry.first);
  MapReader r(ctx, entry.second, fmt::format("op '{}'", name), op_keys(*kind));
  if (!r.ok()) return;
  read_id(r, op, number, out, prefix);
  kind->parse(r, op);
  op.allow = read_allow(r);
  out.push_back(std::move(op));
}

// An op may use a buffer that ops allocate only after its allocation and before its free.
void check_lifetimes(LoadContext& ctx) {
  const Experiment& exp = ctx.exp;
  for (size_t i = 0; i < exp.ops.size(); ++i) {
    std::vector<int> reported;  // an op may read and write one buffer: one error
    for (const Access& a : exp.ops[i].kind->accesses(exp, exp.ops[i])) {
      const Buffer& b = exp.buffers[a.range.buffer];
      int at = static_cast<int>(i);
      if (b.alloc_op < 0 || (at > b.alloc_op && (b.free_op < 0 || at < b.free_op))) continue;
      if (std::find(reported.begin(), reported.end(), a.range.buffer) != reported.end()) continue;
      reported.push_back(a.range.buffer);
      const Op& alloc = exp.ops[b.alloc_op];
      std::string lifetime = fmt::format("allocated by op '{}' (line {})", alloc.id, alloc.loc.line);
      if (b.free_op >= 0)
        lifetime += fmt::format(", freed by op '{}' (line {})", exp.ops[b.free_op].id, exp.ops[b.free_op].loc.line);
      ctx.diags.error(exp.ops[i].loc, fmt::format("op '{}' uses buffer '{}' outside its lifetime: {}", exp.ops[i].id,
                                                  b.name, lifetime));
    }
  }
}

// An event recorded inside a graph marks a fork or join of its capture; outside the graph it
// would name what the capture saw, not a replay: such events stay inside graphs.
void check_graph_events(LoadContext& ctx) {
  std::map<int, const Op*> recorded_in;  // event -> the graph op recording it
  for (const Op& op : ctx.exp.ops)
    for (const Op& b : op.body)
      if (b.event >= 0) recorded_in.try_emplace(b.event, &op);
  for (const Op& op : ctx.exp.ops) {
    auto it = op.event >= 0 ? recorded_in.find(op.event) : recorded_in.end();
    if (it == recorded_in.end()) continue;
    ctx.diags.error(op.loc, fmt::format("op '{}' uses event '{}', which graph '{}' (line {}) uses inside its capture; "
                                        "events of a capture order its ops only: declare another event for this op",
                                        op.id, ctx.exp.events[op.event].name, it->second->id, it->second->loc.line));
  }
}

}  // namespace

void load_ops(LoadContext& ctx, const YAML::Node& node) {
  if (!node.IsDefined()) return;  // reported as missing by the caller
  if (!node.IsSequence()) {
    ctx.error(node, fmt::format("ops: expected a list of ops (`- KIND: {{fields}}`), got {}", describe_node(node)));
    return;
  }
  for (const auto& item : node) load_op(ctx, item, ctx.exp.ops, "");
  check_lifetimes(ctx);
  check_graph_events(ctx);
}

void load_op_list(LoadContext& ctx, const YAML::Node& node, std::vector<Op>& out, std::string_view prefix) {
  if (!node.IsSequence()) {
    ctx.error(node, fmt::format("ops: expected a list of ops (`- KIND: {{fields}}`), got {}", describe_node(node)));
    return;
  }
  for (const auto& item : node) load_op(ctx, item, out, prefix);
}

}  // namespace streamlab
