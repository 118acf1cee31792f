// Evaluation of expectations over a finished run, and the table of functions they may call.
#include "runner/check/expect.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "runner/check/expect_functions.hpp"

namespace streamlab {
namespace {

using Refs = std::vector<int>;
using Numbers = std::vector<double>;
using Sets = std::vector<std::vector<int>>;

double median_or_nan(const Summary& s) { return s.n ? s.median : NAN; }

// Computed once with the run's figures: an expectation naming a stream many times costs no more.
double stream_busy(const RunFigures& f, int stream) {
  for (const StreamFigures& s : f.streams)
    if (s.stream == stream) return s.busy_ms;
  return NAN;
}

double op_field(const ExpectContext& c, int op, double OpSample::*field) {
  return median_or_nan(summarize(samples(c.run, op, field)));
}

// Per repetition, the latest device end among `last` minus the earliest start among `first`; the
// median over the repetitions (NaN when an op of either was not timed).
double window(const ExpectContext& c, const std::vector<int>& first, const std::vector<int>& last) {
  if (first.empty() || last.empty()) return NAN;
  std::vector<double> spans;
  for (const RepetitionSample& rep : c.run.reps) {
    double begin = INFINITY, end = -INFINITY;
    for (int i : first) begin = std::min(begin, rep.ops[static_cast<size_t>(i)].start_ms);
    for (int i : last) end = std::max(end, rep.ops[static_cast<size_t>(i)].end_ms);
    // std::min and max skip a NaN operand: an op not timed must make the window unmeasured.
    for (int i : first) begin = std::isnan(rep.ops[static_cast<size_t>(i)].start_ms) ? NAN : begin;
    for (int i : last) end = std::isnan(rep.ops[static_cast<size_t>(i)].end_ms) ? NAN : end;
    spans.push_back(end - begin);
  }
  return median_or_nan(summarize(spans));
}

const std::vector<ExpectFunction> kFunctions = {
    {"duration",
     {ExpectArg::op},
     true,
     "ms",
     "median device duration of the op",
     [](const ExpectContext& c, const Refs& r, const Sets&, const Numbers&) {
       return median_or_nan(c.figures.ops[r[0]].device);
     }},
    {"start",
     {ExpectArg::op},
     true,
     "ms",
     "median device start, from the repetition's first issue",
     [](const ExpectContext& c, const Refs& r, const Sets&, const Numbers&) {
       return op_field(c, r[0], &OpSample::start_ms);
     }},
    {"end",
     {ExpectArg::op},
     true,
     "ms",
     "median device end, from the repetition's first issue",
     [](const ExpectContext& c, const Refs& r, const Sets&, const Numbers&) {
       return op_field(c, r[0], &OpSample::end_ms);
     }},
    {"host_time",
     {ExpectArg::op},
     true,
     "ms",
     "median host time spent in the op's API call",
     [](const ExpectContext& c, const Refs& r, const Sets&, const Numbers&) {
       return median_or_nan(c.figures.ops[r[0]].host);
     }},
    {"overlap",
     {ExpectArg::op, ExpectArg::op},
     true,
     "ms",
     "median time both ops ran on the device",
     [](const ExpectContext& c, const Refs& r, const Sets&, const Numbers&) {
       return median_overlap(c.run, r[0], r[1]);
     }},
    {"ready",
     {ExpectArg::op},
     false,
     "",
     "fraction of repetitions in which a streamQuery / eventQuery found the work done",
     [](const ExpectContext& c, const Refs& r, const Sets&, const Numbers&) {
       const OpFigures& f = c.figures.ops[r[0]];
       return f.asked ? double(f.done) / f.asked : NAN;
     }},
    {"bandwidth",
     {ExpectArg::op},
     true,
     "GB/s",
     "bytes / duration (device memory read + written; host<->device copies once)",
     [](const ExpectContext& c, const Refs& r, const Sets&, const Numbers&) {
       return c.figures.ops[r[0]].gbps;
     }},
    {"stream_busy",
     {ExpectArg::stream},
     true,
     "ms",
     "median union of the stream's device intervals",
     [](const ExpectContext& c, const Refs& r, const Sets&, const Numbers&) {
       return stream_busy(c.figures, r[0]);
     }},
    {"window",
     {ExpectArg::ops, ExpectArg::ops},
     true,
     "ms",
     "median time from the first device start among the first ops to the last device end among "
     "the second; each an op id or a loop's ops by name (`in` for every in[k])",
     [](const ExpectContext& c, const Refs&, const Sets& s, const Numbers&) {
       return window(c, s[0], s[1]);
     }},
    {"span",
     {},
     true,
     "ms",
     "median span on the host clock (from the gate's opening, else the first issue)",
     [](const ExpectContext& c, const Refs&, const Sets&, const Numbers&) {
       return median_or_nan(c.figures.host_span);
     }},
    {"gpu_span",
     {},
     true,
     "ms",
     "median span on the GPU: first device start to last device end",
     [](const ExpectContext& c, const Refs&, const Sets&, const Numbers&) {
       return median_or_nan(c.figures.device_span);
     }},
    {"min",
     {ExpectArg::number, ExpectArg::number},
     false,
     "",
     "the smaller of two numbers",
     [](const ExpectContext&, const Refs&, const Sets&, const Numbers& n) {
       return std::min(n[0], n[1]);
     }},
    {"max",
     {ExpectArg::number, ExpectArg::number},
     false,
     "",
     "the larger of two numbers",
     [](const ExpectContext&, const Refs&, const Sets&, const Numbers& n) {
       return std::max(n[0], n[1]);
     }},
    {"abs",
     {ExpectArg::number},
     false,
     "",
     "the absolute value",
     [](const ExpectContext&, const Refs&, const Sets&, const Numbers& n) {
       return std::fabs(n[0]);
     }},
};

// Comparisons of a number that is not finite (a duration of 0 divided into something) are
// unknown (NaN), and and/or/not carry an unknown through unless the other side decides
// (`duration(b) == 0 or duration(a) / duration(b) < 2` holds when b took 0): inf or NaN never
// decides a verdict.
struct ExpectationEvaluator {
  const ExpectContext& ctx;
  ExpectationResult& result;

  double eval(const ExpectNode& n) {
    switch (n.kind) {
      case ExpectNode::Kind::number:
        return n.value;
      case ExpectNode::Kind::negate:
        return -eval(*n.args[0]);
      case ExpectNode::Kind::logical_not: {
        double v = eval(*n.args[0]);
        return std::isnan(v) ? NAN : v == 0 ? 1 : 0;
      }
      case ExpectNode::Kind::call:
        return call(n);
      case ExpectNode::Kind::binary:
        return binary(n);
    }
    return NAN;
  }

  double call(const ExpectNode& n) {
    Numbers numbers;
    for (const auto& a : n.args) numbers.push_back(eval(*a));
    const ExpectFunction* f = find_expect_function(n.op);
    double v = f->eval(ctx, n.refs, n.sets, numbers);
    if (f->uses_time) result.values.emplace_back(n.text, v);
    return v;
  }

  double binary(const ExpectNode& n) {
    double a = eval(*n.args[0]), b = eval(*n.args[1]);
    const std::string& op = n.op;
    auto known = [](double v) { return !std::isnan(v); };
    if (op == "and") return a == 0 || b == 0 ? 0 : known(a) && known(b) ? 1 : NAN;
    if (op == "or")
      return (known(a) && a != 0) || (known(b) && b != 0) ? 1 : known(a) && known(b) ? 0 : NAN;
    if (op == "+") return a + b;
    if (op == "-") return a - b;
    if (op == "*") return a * b;
    if (op == "/") return a / b;
    if (!std::isfinite(a) || !std::isfinite(b)) return NAN;  // a comparison of no number
    if (op == "<") return a < b;
    if (op == "<=") return a <= b;
    if (op == ">") return a > b;
    if (op == ">=") return a >= b;
    if (op == "==") return a == b;
    return a != b;  // "!="
  }
};

std::string format_values(const ExpectationResult& r) {
  std::string out;
  for (const auto& [text, v] : r.values) {
    const ExpectFunction* f = find_expect_function(text.substr(0, text.find('(')));
    out += fmt::format("{}{} = {}", out.empty() ? "" : ", ", text,
                       std::isnan(v)
                           ? "not measured"
                           : fmt::format("{:.4g}{}{}", v, f->unit.empty() ? "" : " ", f->unit));
  }
  return out;
}

// Evaluates `node` (a condition or a measure) into `r.values`; NaN when a value it needs was not
// measured (r.detail then says so).
double evaluate_node(const ExpectNode& node, const ExpectContext& ctx, ExpectationResult& r) {
  double v = ExpectationEvaluator{ctx, r}.eval(node);
  for (const auto& [text, value] : r.values)
    if (std::isnan(value)) {
      r.detail = fmt::format("not measured with --timer {}: {}", ctx.run.timer, format_values(r));
      return NAN;
    }
  if (node.boolean && std::isnan(v))
    r.detail = fmt::format("{}{}the arithmetic gives no finite number (a division by a measured 0?)",
                           format_values(r), format_values(r).empty() ? "" : "; ");
  return v;
}

// The share of a measure's points: 1 at or past full, 0 at or past zero, linear between; lower
// is better when full < zero, higher when full > zero (the caller makes sure they differ).
double fraction_of(double v, double full, double zero) {
  return std::clamp((zero - v) / (zero - full), 0.0, 1.0);
}

ExpectationResult::Status status_of(double fraction) {
  using S = ExpectationResult::Status;
  return fraction >= 1 ? S::passed : fraction <= 0 ? S::failed : S::partial;
}

const PeerRun* find_peer(const ExpectContext& ctx, const std::string& name) {
  for (const PeerRun& p : ctx.peers)
    if (p.name == name) return &p;
  return nullptr;
}

// The measure of the peer this one is relative to, in r.values; NaN (with r.detail) when there is
// none or it was not measured.
double peer_value(const Expectation& e, size_t index, const ExpectContext& ctx,
                  ExpectationResult& r) {
  const PeerRun* peer = find_peer(ctx, e.relative);
  if (!peer || index >= peer->measures.size() || !peer->measures[index]) {
    r.detail = fmt::format(
        "relative to '{}': no such peer ran beside it (`streamlab grade` runs the peers its rubric "
        "names)",
        e.relative);
    return NAN;
  }
  static const std::vector<PeerRun> kNoPeers;
  ExpectContext peer_ctx{*peer->exp, *peer->run, peer->run->figures, kNoPeers};
  ExpectationResult peer_result;
  double v = evaluate_node(*peer->measures[index], peer_ctx, peer_result);
  if (std::isnan(v)) {
    r.detail = fmt::format("{}: {}", e.relative, peer_result.detail);
    return NAN;
  }
  r.values.emplace_back(fmt::format("{} of {}", e.text, e.relative), v);
  return v;
}

void evaluate_measure(const Expectation& e, size_t index, const ExpectContext& ctx,
                      ExpectationResult& r) {
  double v = evaluate_node(*e.root, ctx, r);
  double full = std::isnan(v) ? NAN : evaluate_node(*e.full_at, ctx, r);
  double zero = std::isnan(full) ? NAN : evaluate_node(*e.zero_at, ctx, r);
  if (std::isnan(zero)) {
    if (r.detail.empty())  // no value was unmeasured: the arithmetic itself (0/0) is no number
      r.detail = fmt::format("{} = {:g}, full_at = {:g}: not a number to score", e.text, v, full);
    return;
  }
  if (!std::isfinite(full) || !std::isfinite(zero)) {
    r.detail = fmt::format("full_at is {:g} and zero_at {:g}: bounds to score by must be finite",
                           full, zero);
    return;
  }
  if (full == zero) {
    r.detail = fmt::format(
        "full_at and zero_at are both {:g}, so which side earns the points is "
        "undefined (a pass or fail is a `that:` condition)",
        full);
    return;
  }
  std::string of = e.text;
  if (!e.relative.empty()) {
    double peer = peer_value(e, index, ctx, r);
    if (std::isnan(peer)) return;
    v /= peer;
    of = fmt::format("{} / the same of {}", e.text, e.relative);
  }
  if (!std::isfinite(v)) {
    r.detail = fmt::format("{}{} is {:g}: no number to score (a measure of 0 divided by 0?)",
                           format_values(r).empty() ? "" : format_values(r) + "; ", of, v);
    return;
  }
  r.measured = v;
  r.fraction = fraction_of(v, full, zero);
  r.status = status_of(r.fraction);
  r.detail =
      fmt::format("{}{} = {:.4g}; full points at or {} {:.4g}, none at or {} {:.4g}: {:.0f}%",
                  format_values(r).empty() ? "" : format_values(r) + "; ", of, v,
                  full < zero ? "below" : "above", full, full < zero ? "above" : "below", zero,
                  100 * r.fraction);
}

ExpectationResult evaluate(const Expectation& e, size_t index, const ExpectContext& ctx) {
  ExpectationResult r{e.text, e.loc, ExpectationResult::Status::not_evaluated, "", {}};
  if (e.uses_time && ctx.run.backend == "host") {
    r.detail = "the host backend measures no GPU time";
    return r;
  }
  if (e.form == Expectation::Form::no_diagnostics) return judge_diagnostics(e, ctx.run.diagnostics);
  if (e.form == Expectation::Form::measure) {
    evaluate_measure(e, index, ctx, r);
    return r;
  }
  double verdict = evaluate_node(*e.root, ctx, r);
  if (std::isnan(verdict)) return r;
  r.fraction = verdict != 0 ? 1 : 0;
  r.status = status_of(r.fraction);
  r.detail = format_values(r);
  return r;
}

}  // namespace

// Holds when `streamlab check` found none of the codes, acknowledged or not.
ExpectationResult judge_diagnostics(const Expectation& e, const Findings& findings) {
  ExpectationResult r{e.text, e.loc, ExpectationResult::Status::not_evaluated, "", {}};
  std::vector<const Finding*> found;
  for (const Finding& f : findings.items())
    if (std::find(e.codes.begin(), e.codes.end(), f.code) != e.codes.end()) found.push_back(&f);
  r.fraction = found.empty() ? 1 : 0;
  r.status = found.empty() ? ExpectationResult::Status::passed : ExpectationResult::Status::failed;
  if (found.empty()) return r;
  const Finding& first = *found.front();
  r.detail =
      fmt::format("streamlab check: line {}: {} [{}]{}", first.loc.line, first.message, first.code,
                  found.size() > 1 ? fmt::format(" (and {} more)", found.size() - 1) : "");
  return r;
}

const std::vector<ExpectFunction>& expect_functions() { return kFunctions; }

const ExpectFunction* find_expect_function(std::string_view name) {
  for (const auto& f : kFunctions)
    if (f.name == name) return &f;
  return nullptr;
}

std::vector<ExpectationResult> evaluate_expectations(const Experiment& exp, const RunRecord& run,
                                                     const std::vector<PeerRun>& peers) {
  ExpectContext ctx{exp, run, run.figures, peers};
  std::vector<ExpectationResult> out;
  for (size_t i = 0; i < exp.expectations.size(); ++i)
    out.push_back(evaluate(exp.expectations[i], i, ctx));
  return out;
}

double evaluate_constant(const ExpectNode& node) {
  static const Experiment kNoExperiment;
  static const RunRecord kNoRun;
  static const std::vector<PeerRun> kNoPeers;
  ExpectContext ctx{kNoExperiment, kNoRun, kNoRun.figures, kNoPeers};
  ExpectationResult r;
  return ExpectationEvaluator{ctx, r}.eval(node);
}

double measure_value(const Experiment& exp, const RunRecord& run, const ExpectNode& measure) {
  const std::vector<PeerRun> no_peers;
  ExpectContext ctx{exp, run, run.figures, no_peers};
  ExpectationResult r;
  return evaluate_node(measure, ctx, r);
}

std::vector<FunctionDoc> expectation_functions() {
  std::vector<FunctionDoc> out;
  for (const auto& f : kFunctions) {
    std::string args;
    for (auto a : f.args)
      args += fmt::format("{}{}", args.empty() ? "" : ", ",
                          a == ExpectArg::op       ? "op"
                          : a == ExpectArg::ops    ? "ops"
                          : a == ExpectArg::stream ? "stream"
                                                   : "x");
    out.push_back({fmt::format("{}({})", f.name, args), f.unit, f.meaning});
  }
  return out;
}

}  // namespace streamlab
