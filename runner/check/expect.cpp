// Evaluation of expectations over a finished run, and the table of functions they may call.
#include "runner/check/expect.hpp"

#include <cmath>

#include <fmt/format.h>

#include "runner/check/expect_functions.hpp"

namespace streamlab {
namespace {

using Refs = std::vector<int>;
using Numbers = std::vector<double>;

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

const std::vector<ExpectFunction> kFunctions = {
    {"duration",
     {ExpectArg::op},
     true,
     "ms",
     "median device duration of the op",
     [](const ExpectContext& c, const Refs& r, const Numbers&) {
       return median_or_nan(c.figures.ops[r[0]].device);
     }},
    {"start",
     {ExpectArg::op},
     true,
     "ms",
     "median device start, from the repetition's first issue",
     [](const ExpectContext& c, const Refs& r, const Numbers&) {
       return op_field(c, r[0], &OpSample::start_ms);
     }},
    {"end",
     {ExpectArg::op},
     true,
     "ms",
     "median device end, from the repetition's first issue",
     [](const ExpectContext& c, const Refs& r, const Numbers&) {
       return op_field(c, r[0], &OpSample::end_ms);
     }},
    {"host_time",
     {ExpectArg::op},
     true,
     "ms",
     "median host time spent in the op's API call",
     [](const ExpectContext& c, const Refs& r, const Numbers&) {
       return median_or_nan(c.figures.ops[r[0]].host);
     }},
    {"overlap",
     {ExpectArg::op, ExpectArg::op},
     true,
     "ms",
     "median time both ops ran on the device",
     [](const ExpectContext& c, const Refs& r, const Numbers&) {
       return median_overlap(c.run, r[0], r[1]);
     }},
    {"ready",
     {ExpectArg::op},
     false,
     "",
     "fraction of repetitions in which a streamQuery / eventQuery found the work done",
     [](const ExpectContext& c, const Refs& r, const Numbers&) {
       const OpFigures& f = c.figures.ops[r[0]];
       return f.asked ? double(f.done) / f.asked : NAN;
     }},
    {"bandwidth",
     {ExpectArg::op},
     true,
     "GB/s",
     "bytes / duration (copies count bytes once, kernels read + write)",
     [](const ExpectContext& c, const Refs& r, const Numbers&) {
       return c.figures.ops[r[0]].gbps;
     }},
    {"stream_busy",
     {ExpectArg::stream},
     true,
     "ms",
     "median union of the stream's device intervals",
     [](const ExpectContext& c, const Refs& r, const Numbers&) {
       return stream_busy(c.figures, r[0]);
     }},
    {"span",
     {},
     true,
     "ms",
     "median span on the host clock (from the gate's opening, else the first issue)",
     [](const ExpectContext& c, const Refs&, const Numbers&) {
       return median_or_nan(c.figures.host_span);
     }},
    {"gpu_span",
     {},
     true,
     "ms",
     "median span on the GPU: first device start to last device end",
     [](const ExpectContext& c, const Refs&, const Numbers&) {
       return median_or_nan(c.figures.device_span);
     }},
    {"min",
     {ExpectArg::number, ExpectArg::number},
     false,
     "",
     "the smaller of two numbers",
     [](const ExpectContext&, const Refs&, const Numbers& n) { return std::min(n[0], n[1]); }},
    {"max",
     {ExpectArg::number, ExpectArg::number},
     false,
     "",
     "the larger of two numbers",
     [](const ExpectContext&, const Refs&, const Numbers& n) { return std::max(n[0], n[1]); }},
    {"abs",
     {ExpectArg::number},
     false,
     "",
     "the absolute value",
     [](const ExpectContext&, const Refs&, const Numbers& n) { return std::fabs(n[0]); }},
};

struct ExpectationEvaluator {
  const ExpectContext& ctx;
  ExpectationResult& result;

  double eval(const ExpectNode& n) {
    switch (n.kind) {
      case ExpectNode::Kind::number:
        return n.value;
      case ExpectNode::Kind::negate:
        return -eval(*n.args[0]);
      case ExpectNode::Kind::logical_not:
        return eval(*n.args[0]) == 0 ? 1 : 0;
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
    double v = f->eval(ctx, n.refs, numbers);
    if (f->uses_time) result.values.emplace_back(n.text, v);
    return v;
  }

  double binary(const ExpectNode& n) {
    double a = eval(*n.args[0]), b = eval(*n.args[1]);
    const std::string& op = n.op;
    if (op == "and") return a != 0 && b != 0;
    if (op == "or") return a != 0 || b != 0;
    if (op == "+") return a + b;
    if (op == "-") return a - b;
    if (op == "*") return a * b;
    if (op == "/") return a / b;
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

ExpectationResult evaluate(const Expectation& e, const ExpectContext& ctx) {
  ExpectationResult r{e.text, e.loc, ExpectationResult::Status::not_evaluated, "", {}};
  if (e.uses_time && ctx.run.backend == "host") {
    r.detail = "the host backend measures no GPU time";
    return r;
  }
  double verdict = ExpectationEvaluator{ctx, r}.eval(*e.root);
  bool unmeasured = false;
  for (const auto& [text, v] : r.values) unmeasured = unmeasured || std::isnan(v);
  if (unmeasured) {
    r.detail = fmt::format("not measured with --timer {}: {}", ctx.run.timer, format_values(r));
    return r;
  }
  r.status = verdict != 0 ? ExpectationResult::Status::passed : ExpectationResult::Status::failed;
  r.detail = format_values(r);
  return r;
}

}  // namespace

const std::vector<ExpectFunction>& expect_functions() { return kFunctions; }

const ExpectFunction* find_expect_function(std::string_view name) {
  for (const auto& f : kFunctions)
    if (f.name == name) return &f;
  return nullptr;
}

std::vector<ExpectationResult> evaluate_expectations(const Experiment& exp, const RunRecord& run) {
  ExpectContext ctx{exp, run, run.figures};
  std::vector<ExpectationResult> out;
  for (const auto& e : exp.expectations) out.push_back(evaluate(e, ctx));
  return out;
}

std::vector<FunctionDoc> expectation_functions() {
  std::vector<FunctionDoc> out;
  for (const auto& f : kFunctions) {
    std::string args;
    for (auto a : f.args)
      args += fmt::format("{}{}", args.empty() ? "" : ", ",
                          a == ExpectArg::op       ? "op"
                          : a == ExpectArg::stream ? "stream"
                                                   : "x");
    out.push_back({fmt::format("{}({})", f.name, args), f.unit, f.meaning});
  }
  return out;
}

}  // namespace streamlab
