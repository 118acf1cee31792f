#include "runner/figures.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "ops/op.hpp"
#include "runner/execute.hpp"

namespace streamlab {
namespace {

using Interval = std::pair<double, double>;

// Total length covered by the intervals (overlapping ones counted once).
double union_length(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  double total = 0, start = -INFINITY, end = -INFINITY;
  for (const auto& [s, e] : v) {
    if (s > end) {
      if (end > start) total += end - start;
      start = s, end = e;
    } else {
      end = std::max(end, e);
    }
  }
  if (end > start) total += end - start;
  return total;
}

double overlap(const OpSample& a, const OpSample& b) {
  if (std::isnan(a.start_ms) || std::isnan(b.start_ms)) return NAN;
  return std::max(0.0, std::min(a.end_ms, b.end_ms) - std::max(a.start_ms, b.start_ms));
}

// Device intervals of the ops for which `pick` is true, in one repetition.
template <class Pick>
double busy(const Experiment& exp, const RepetitionSample& rep, Pick pick) {
  std::vector<Interval> v;
  for (size_t i = 0; i < exp.ops.size(); ++i)
    if (pick(exp.ops[i]) && !std::isnan(rep.ops[i].start_ms)) v.emplace_back(rep.ops[i].start_ms, rep.ops[i].end_ms);
  return v.empty() ? NAN : union_length(std::move(v));
}

// Copies between host and device use one copy engine per direction.
enum class Engine { none, h2d, d2h };
Engine engine_of(const Experiment& exp, const Op& op) {
  if (!op.src.valid() || !op.dst.valid() || !op.device_work) return Engine::none;
  bool from_host = is_host_memory(exp.buffers[op.src.buffer].memory);
  bool to_host = is_host_memory(exp.buffers[op.dst.buffer].memory);
  return from_host && !to_host ? Engine::h2d : !from_host && to_host ? Engine::d2h : Engine::none;
}

double median_of(const RunRecord& run, auto per_rep) {
  std::vector<double> v;
  for (const auto& rep : run.reps) v.push_back(per_rep(rep));
  Summary s = summarize(v);
  return s.n ? s.median : NAN;
}

// The busiest stream or copy engine in one repetition: the full-overlap bound.
std::pair<double, std::string> busiest(const Experiment& exp, const RepetitionSample& rep) {
  std::pair<double, std::string> best{NAN, ""};
  auto consider = [&](double v, std::string what) {
    if (!std::isnan(v) && !(v <= best.first)) best = {v, std::move(what)};
  };
  for (size_t s = 0; s < exp.streams.size(); ++s)
    consider(busy(exp, rep, [&](const Op& op) { return op.stream == int(s); }), "stream " + exp.streams[s].name);
  consider(busy(exp, rep, [&](const Op& op) { return engine_of(exp, op) == Engine::h2d; }), "H2D copy engine");
  consider(busy(exp, rep, [&](const Op& op) { return engine_of(exp, op) == Engine::d2h; }), "D2H copy engine");
  return best;
}

SpanBounds span_bounds(const Experiment& exp, const RunRecord& run) {
  SpanBounds b;
  if (device_span(run).n == 0) return b;
  b.sum_ms = median_of(run, [&](const RepetitionSample& rep) {
    double sum = 0;
    for (const auto& s : rep.ops)
      if (!std::isnan(s.start_ms)) sum += s.device_ms();
    return sum;
  });
  b.busiest_ms = median_of(run, [&](const RepetitionSample& rep) { return busiest(exp, rep).first; });
  b.busiest = busiest(exp, run.reps[run.reps.size() / 2]).second;
  b.span_ms = device_span(run).median;
  if (b.sum_ms > b.busiest_ms) b.efficiency = (b.sum_ms - b.span_ms) / (b.sum_ms - b.busiest_ms);
  if (b.span_ms > 0) b.concurrency = b.sum_ms / b.span_ms;
  return b;
}

}  // namespace

std::vector<double> samples(const RunRecord& run, size_t op, double OpSample::*field) {
  std::vector<double> out;
  for (const auto& rep : run.reps) out.push_back(rep.ops[op].*field);
  return out;
}

std::vector<OpFigures> op_figures(const RunRecord& run, size_t op_count) {
  std::vector<OpFigures> out(op_count);
  for (size_t i = 0; i < op_count; ++i) {
    std::vector<double> device, host;
    for (const auto& rep : run.reps) {
      device.push_back(rep.ops[i].device_ms()), host.push_back(rep.ops[i].host_ms());
      out[i].asked += rep.ops[i].answer >= 0;
      out[i].done += rep.ops[i].answer == 1;
    }
    out[i].device = summarize(device);
    out[i].host = summarize(host);
  }
  return out;
}

// Per launch and per captured op of a graph op (see OpFigures).
static void graph_figures(const Experiment& exp, const RunRecord& run, size_t i, OpFigures& f) {
  const Op& op = exp.ops[i];
  std::vector<double> per_launch;
  std::vector<std::vector<double>> body(op.body.size());
  for (const auto& rep : run.reps) {
    per_launch.push_back(rep.ops[i].device_ms() / static_cast<double>(op.replays));
    for (size_t j = 0; j < rep.ops[i].body_ms.size() && j < body.size(); ++j)
      if (!std::isnan(rep.ops[i].body_ms[j])) body[j].push_back(rep.ops[i].body_ms[j]);
  }
  f.per_launch = summarize(per_launch);
  for (auto& v : body) f.body.push_back(summarize(v));
}

Summary host_span(const RunRecord& run) {
  std::vector<double> v;
  for (const auto& rep : run.reps) v.push_back(rep.host_span_ms);
  return summarize(v);
}

Summary device_span(const RunRecord& run) {
  std::vector<double> v;
  for (const auto& rep : run.reps) v.push_back(rep.device_span_ms);
  return summarize(v);
}

double median_overlap(const RunRecord& run, size_t a, size_t b) {
  return median_of(run, [&](const RepetitionSample& rep) { return overlap(rep.ops[a], rep.ops[b]); });
}

double median_stream_busy(const Experiment& exp, const RunRecord& run, int stream) {
  return median_of(run, [&](const RepetitionSample& rep) {
    return busy(exp, rep, [&](const Op& op) { return op.stream == stream && op.device_work; });
  });
}

// |A and B| = |A| + |B| - |A or B|, with each stream's intervals merged first.
double median_stream_overlap(const Experiment& exp, const RunRecord& run, int a, int b) {
  return median_of(run, [&](const RepetitionSample& rep) {
    auto in = [&](int s) { return [&exp, s](const Op& op) { return op.stream == s && op.device_work; }; };
    double both = busy(exp, rep, [&](const Op& op) { return in(a)(op) || in(b)(op); });
    return busy(exp, rep, in(a)) + busy(exp, rep, in(b)) - both;
  });
}

namespace {

void add_overlaps(const Experiment& exp, const RunRecord& run, RunFigures& f) {
  size_t device_ops = std::count_if(exp.ops.begin(), exp.ops.end(), [](const Op& op) { return op.device_work; });
  f.op_pairs_skipped = device_ops > kMaxOpsForPairs;
  for (size_t a = 0; a < exp.ops.size() && !f.op_pairs_skipped; ++a)
    for (size_t b = a + 1; b < exp.ops.size(); ++b)
      if (exp.ops[a].stream != exp.ops[b].stream)
        if (double o = median_overlap(run, a, b); o > 0) f.overlaps.push_back({a, b, o});
  for (size_t i = 0; i < f.streams.size(); ++i)
    for (size_t j = i + 1; j < f.streams.size(); ++j) {
      double o = median_stream_overlap(exp, run, f.streams[i].stream, f.streams[j].stream);
      if (o > 0) f.stream_overlaps.push_back({size_t(f.streams[i].stream), size_t(f.streams[j].stream), o});
    }
}

}  // namespace

RunFigures run_figures(const Experiment& exp, const RunRecord& run) {
  RunFigures f;
  f.ops = op_figures(run, exp.ops.size());
  for (size_t i = 0; i < exp.ops.size(); ++i) {
    f.ops[i].bytes = exp.ops[i].kind->bytes(exp, exp.ops[i]);
    if (f.ops[i].bytes > 0 && f.ops[i].device.n && f.ops[i].device.median > 0)
      f.ops[i].gbps = static_cast<double>(f.ops[i].bytes) / (f.ops[i].device.median * 1e6);
  }
  for (size_t i = 0; i < exp.ops.size(); ++i)
    if (!exp.ops[i].body.empty()) graph_figures(exp, run, i, f.ops[i]);
  for (size_t s = 0; s < exp.streams.size(); ++s)
    if (double b = median_stream_busy(exp, run, int(s)); !std::isnan(b)) f.streams.push_back({int(s), b});
  add_overlaps(exp, run, f);
  f.bounds = span_bounds(exp, run);
  return f;
}

}  // namespace streamlab
