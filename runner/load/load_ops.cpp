// The `ops:` section: a list of {kind: {fields}} in host issue order; each kind's fields are
// read by its own parse function (ops/).
#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "ops/op_kind.hpp"
#include "runner/context/load_context.hpp"
#include "runner/core/limits.hpp"
#include "runner/core/suggest.hpp"

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
void read_id(MapReader& r, Op& op, int number, std::string_view prefix) {
  op.id = fmt::format("{}{}#{}", prefix, op.kind->name, number);
  if (!r.has("id")) return;
  auto id = r.ctx.id(r.get("id"));
  if (!id) return;
  auto [earlier, fresh] = r.ctx.op_ids.try_emplace(*id, op.loc.line);
  if (!fresh) {
    r.ctx.error(r.get("id"),
                fmt::format("op id '{}' is used twice (first at line {})", *id, earlier->second));
    return;
  }
  op.id = *id;
}

void load_op(LoadContext& ctx, const YAML::Node& item, std::vector<Op>& out,
             std::string_view prefix);

// `- loop: {var: i, count: E, ops: [...]}`: the body once per value 0 .. E-1 of `var`, a param
// inside it; loops nest. Every repetition of a body counts towards limits::kLoopIterations,
// whether or not it adds ops.
void load_loop(LoadContext& ctx, const YAML::Node& key, const YAML::Node& body,
               std::vector<Op>& out, std::string_view prefix) {
  MapReader r(ctx, body, "loop", {"var", "count", "ops"});
  if (!r.ok()) return;
  auto var = ctx.scalar(r.require("var"), "loop var");
  auto count = ctx.integer(r.require("count"), "loop count");
  YAML::Node ops = r.require("ops");
  if (!var || !count || !ops.IsDefined()) return;
  if (!is_identifier(*var) || ctx.params.contains(*var)) {
    ctx.error(r.get("var"),
              fmt::format("loop var '{}' {}", *var,
                          is_identifier(*var) ? "is already a param" : "is not an identifier"));
    return;
  }
  if (*count < 0 || *count > limits::kExpandedOps) {
    ctx.error(r.get("count"),
              fmt::format("loop count {}; expected 0 to {}", *count, limits::kExpandedOps));
    return;
  }
  if (!ops.IsSequence()) {
    ctx.error(ops, fmt::format("loop ops: expected a list of ops, got {}", describe_node(ops)));
    return;
  }
  BlockLevel level(ctx, body);
  if (!level.ok()) return;
  size_t errors = ctx.diags.count();
  ctx.loop_stack.push_back({++ctx.loop_instances, *var, 0, *count, r.get("count").Scalar(),
                            ctx.loc(key).line, ctx.loc(key).col});
  LoopStack outer = ctx.loops;
  for (int64_t v = 0; v < *count; ++v) {
    if (++ctx.loop_iterations > limits::kLoopIterations) {
      ctx.error(r.get("count"),
                fmt::format("loops repeat their bodies more than {} times in all (count x body, "
                            "nested loops multiplied)",
                            limits::kLoopIterations));
      break;
    }
    ctx.params[*var] = v;
    ctx.loop_stack.back().value = v;
    ctx.loops = std::make_shared<const std::vector<LoopLevel>>(ctx.loop_stack);
    for (const auto& item : ops) load_op(ctx, item, out, prefix);
    if (ctx.diags.count() > errors) break;  // the same mistake once, not once per iteration
  }
  ctx.loop_stack.pop_back();
  ctx.loops = outer;
  ctx.params.erase(*var);
}

void load_op(LoadContext& ctx, const YAML::Node& item, std::vector<Op>& out,
             std::string_view prefix) {
  int number = static_cast<int>(out.size()) + 1;
  if (!item.IsMap() || item.size() != 1) {
    ctx.error(
        item,
        fmt::format(
            "expected one op per list item, as `- KIND: {{fields}}` (e.g. `- deviceSynchronize: "
            "{{}}`), got {}",
            item.IsMap() ? fmt::format("a mapping of {} keys", item.size()) : describe_node(item)));
    return;
  }
  auto entry = *item.begin();
  std::string name = entry.first.IsScalar() ? entry.first.Scalar() : "";
  if (name == "loop") return load_loop(ctx, entry.first, entry.second, out, prefix);
  if (++ctx.expanded_ops > limits::kExpandedOps) {
    if (ctx.expanded_ops == limits::kExpandedOps + 1)
      ctx.error(item,
                fmt::format(
                    "more than {} ops, with loops expanded and graph bodies counted: an experiment "
                    "has at most {}",
                    limits::kExpandedOps, limits::kExpandedOps));
    return;
  }
  const OpKind* kind = find_op_kind(name);
  if (!kind) {
    // Not the list of ops: it grows with every op, and `streamlab list` prints it with each op's
    // keys.
    ctx.error(entry.first,
              fmt::format("unknown op '{}'{} (`streamlab list` shows every op and its keys; `loop` "
                          "repeats ops)",
                          name, did_you_mean(name, op_names())));
    return;
  }
  Op op;
  op.kind = kind;
  op.loc = ctx.loc(entry.first);
  MapReader r(ctx, entry.second, fmt::format("op '{}'", name), op_keys(*kind));
  if (!r.ok()) return;
  read_id(r, op, number, prefix);
  kind->parse(r, op);
  op.allow = read_allow(r);
  op.loops = ctx.loops;
  if (r.has("stream") && r.get("stream").IsScalar()) op.stream_text = r.get("stream").Scalar();
  out.push_back(std::move(op));
}

// An op may use a buffer that ops allocate only after its allocation and before its free.
void check_lifetimes(LoadContext& ctx) {
  const Experiment& exp = ctx.exp;
  for (size_t i = 0; i < exp.ops.size(); ++i) {
    std::vector<int> reported;  // an op may read and write one buffer: one error
    for (const Access& a : exp.ops[i].kind->accesses(exp, exp.ops[i])) {
      if (!a.range.valid()) continue;  // a name already reported unknown
      const Buffer& b = exp.buffers[a.range.buffer];
      int at = static_cast<int>(i);
      if (b.alloc_op < 0 || (at > b.alloc_op && (b.free_op < 0 || at < b.free_op))) continue;
      if (std::find(reported.begin(), reported.end(), a.range.buffer) != reported.end()) continue;
      reported.push_back(a.range.buffer);
      const Op& alloc = exp.ops[b.alloc_op];
      std::string lifetime =
          fmt::format("allocated by op '{}' (line {})", alloc.id, alloc.loc.line);
      if (b.free_op >= 0)
        lifetime += fmt::format(", freed by op '{}' (line {})", exp.ops[b.free_op].id,
                                exp.ops[b.free_op].loc.line);
      ctx.diags.error(exp.ops[i].loc,
                      fmt::format("op '{}' uses buffer '{}' outside its lifetime: {}",
                                  exp.ops[i].id, b.name, lifetime));
    }
  }
}

// A capture records the addresses its ops use; a buffer that an op allocates gets a new address
// each repetition, so a replay would use memory that is no longer the buffer's.
void check_graph_buffers(LoadContext& ctx) {
  const Experiment& exp = ctx.exp;
  for (const Op& op : exp.ops)
    for (const Op& b : op.body)
      for (const Access& a : b.kind->accesses(exp, b)) {
        if (!a.range.valid() || exp.buffers[a.range.buffer].alloc_op < 0) continue;
        const Buffer& buf = exp.buffers[a.range.buffer];
        ctx.diags.error(
            b.loc,
            fmt::format("op '{}' in graph '{}' uses buffer '{}', which op '{}' (line {}) allocates "
                        "anew each repetition: a captured op keeps the address it had at capture; "
                        "declare '{}' for the whole run instead",
                        b.id, op.id, buf.name, exp.ops[buf.alloc_op].id,
                        exp.ops[buf.alloc_op].loc.line, buf.name));
        break;
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
    ctx.diags.error(
        op.loc,
        fmt::format("op '{}' uses event '{}', which graph '{}' (line {}) uses inside its capture; "
                    "events of a capture order its ops only: declare another event for this op",
                    op.id, ctx.exp.events[op.event].name, it->second->id, it->second->loc.line));
  }
}

// What one repetition issues: each op once, a graph's body and a launch's `times` as often as they
// repeat. The host backend performs every one of them, so their number is bounded.
void check_issued(LoadContext& ctx) {
  int64_t issued = 0;
  for (const Op& op : ctx.exp.ops) {
    int64_t per_replay = 0;
    for (const Op& b : op.body) per_replay += b.replays;
    issued += op.body.empty() ? op.replays : op.replays * per_replay;  // both bounded: no overflow
    if (issued > limits::kIssuedPerRepetition) {
      ctx.diags.error(
          op.loc,
          fmt::format("with this op, one repetition issues more than {} operations (graph replays "
                      "x their ops, launch `times`): the most a repetition may issue",
                      limits::kIssuedPerRepetition));
      return;
    }
  }
}

}  // namespace

void load_ops(LoadContext& ctx, const YAML::Node& node) {
  if (!node.IsDefined()) return;  // reported as missing by the caller
  if (!node.IsSequence()) {
    ctx.error(node, fmt::format("ops: expected a list of ops (`- KIND: {{fields}}`), got {}",
                                describe_node(node)));
    return;
  }
  for (const auto& item : node) load_op(ctx, item, ctx.exp.ops, "");
  check_issued(ctx);
  check_lifetimes(ctx);
  check_graph_buffers(ctx);
  check_graph_events(ctx);
}

void load_op_list(LoadContext& ctx, const YAML::Node& node, std::vector<Op>& out,
                  std::string_view prefix) {
  if (!node.IsSequence()) {
    ctx.error(node, fmt::format("ops: expected a list of ops (`- KIND: {{fields}}`), got {}",
                                describe_node(node)));
    return;
  }
  for (const auto& item : node) load_op(ctx, item, out, prefix);
}

}  // namespace streamlab
