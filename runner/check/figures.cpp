#include "runner/check/figures.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "ops/op_kind.hpp"

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

// Device intervals of the ops `indices` (op indices), in one repetition.
double busy(const RepetitionSample& rep, const std::vector<size_t>& indices) {
  std::vector<Interval> v;
  for (size_t i : indices)
    if (!std::isnan(rep.ops[i].start_ms)) v.emplace_back(rep.ops[i].start_ms, rep.ops[i].end_ms);
  return v.empty() ? NAN : union_length(std::move(v));
}

// The ops with device work, grouped once: by stream, and by copy engine direction. Everything
// below walks these groups, so that a figure costs what its ops number, not what the whole list
// does (thousands of host ops, or of streams, must not make the report quadratic).
struct OpGroups {
  std::vector<std::vector<size_t>> by_stream;  // per stream index
  std::vector<size_t> h2d, d2h, device;        // copy engines; every op with device work
};

// Copies between host and device use one copy engine per direction.
enum class CopyEngine { none, h2d, d2h };
CopyEngine engine_of(const Experiment& exp, const Op& op) {
  if (!op.src.valid() || !op.dst.valid() || !op.device_work) return CopyEngine::none;
  bool from_host = is_host_memory(exp.buffers[op.src.buffer].memory);
  bool to_host = is_host_memory(exp.buffers[op.dst.buffer].memory);
  return from_host && !to_host   ? CopyEngine::h2d
         : !from_host && to_host ? CopyEngine::d2h
                                 : CopyEngine::none;
}

OpGroups group_ops(const Experiment& exp) {
  OpGroups g;
  g.by_stream.resize(exp.streams.size());
  for (size_t i = 0; i < exp.ops.size(); ++i) {
    const Op& op = exp.ops[i];
    if (!op.device_work) continue;
    g.device.push_back(i);
    if (op.stream >= 0) g.by_stream[op.stream].push_back(i);
    CopyEngine e = engine_of(exp, op);
    if (e == CopyEngine::h2d) g.h2d.push_back(i);
    if (e == CopyEngine::d2h) g.d2h.push_back(i);
  }
  return g;
}

double median_of(const RunRecord& run, auto per_rep) {
  std::vector<double> v;
  for (const auto& rep : run.reps) v.push_back(per_rep(rep));
  Summary s = summarize(v);
  return s.n ? s.median : NAN;
}

// The busiest stream or copy engine in one repetition: the full-overlap bound.
std::pair<double, std::string> busiest(const Experiment& exp, const OpGroups& g,
                                       const RepetitionSample& rep) {
  std::pair<double, std::string> best{NAN, ""};
  auto consider = [&](double v, std::string what) {
    if (!std::isnan(v) && !(v <= best.first)) best = {v, std::move(what)};
  };
  for (size_t s = 0; s < exp.streams.size(); ++s)
    if (!g.by_stream[s].empty())
      consider(busy(rep, g.by_stream[s]), "stream " + exp.streams[s].name);
  consider(busy(rep, g.h2d), "H2D copy engine");
  consider(busy(rep, g.d2h), "D2H copy engine");
  return best;
}

SpanBounds span_bounds(const Experiment& exp, const OpGroups& g, const RunRecord& run,
                       const Summary& span) {
  SpanBounds b;
  if (span.n == 0) return b;
  b.sum_ms = median_of(run, [&](const RepetitionSample& rep) {
    double sum = 0;
    for (size_t i : g.device)
      if (!std::isnan(rep.ops[i].start_ms)) sum += rep.ops[i].device_ms();
    return sum;
  });
  b.busiest_ms =
      median_of(run, [&](const RepetitionSample& rep) { return busiest(exp, g, rep).first; });
  b.busiest = busiest(exp, g, run.reps[run.reps.size() / 2]).second;
  b.span_ms = span.median;
  if (b.sum_ms > b.busiest_ms) b.efficiency = (b.sum_ms - b.span_ms) / (b.sum_ms - b.busiest_ms);
  if (b.span_ms > 0) b.concurrency = b.sum_ms / b.span_ms;
  return b;
}

// |A and B| = |A| + |B| - |A or B|, with each stream's intervals merged first.
double median_streams_overlap(const OpGroups& g, const RunRecord& run, int a, int b) {
  std::vector<size_t> both = g.by_stream[a];
  both.insert(both.end(), g.by_stream[b].begin(), g.by_stream[b].end());
  return median_of(run, [&](const RepetitionSample& rep) {
    return busy(rep, g.by_stream[a]) + busy(rep, g.by_stream[b]) - busy(rep, both);
  });
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
  return median_of(run,
                   [&](const RepetitionSample& rep) { return overlap(rep.ops[a], rep.ops[b]); });
}

namespace {

// Op pairs only among ops with device work, and only while they are few (pairs grow as n^2).
void add_overlaps(const Experiment& exp, const OpGroups& g, const RunRecord& run, RunFigures& f) {
  f.op_pairs_skipped = g.device.size() > kMaxOpsForPairs;
  for (size_t x = 0; x < g.device.size() && !f.op_pairs_skipped; ++x)
    for (size_t y = x + 1; y < g.device.size(); ++y) {
      size_t a = g.device[x], b = g.device[y];
      if (exp.ops[a].stream != exp.ops[b].stream)
        if (double o = median_overlap(run, a, b); o > 0) f.overlaps.push_back({a, b, o});
    }
  f.stream_pairs_skipped = f.streams.size() > kMaxStreamsForPairs;
  for (size_t i = 0; i < f.streams.size() && !f.stream_pairs_skipped; ++i)
    for (size_t j = i + 1; j < f.streams.size(); ++j) {
      double o = median_streams_overlap(g, run, f.streams[i].stream, f.streams[j].stream);
      if (o > 0)
        f.stream_overlaps.push_back({size_t(f.streams[i].stream), size_t(f.streams[j].stream), o});
    }
}

// The repetition whose host span is the median one.
size_t median_repetition(const RunRecord& run) {
  std::vector<size_t> order(run.reps.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return run.reps[a].host_span_ms < run.reps[b].host_span_ms;
  });
  return order.empty() ? 0 : order[order.size() / 2];
}

// The fastest device-to-device copy of the run, in the ops' convention: what the device's memory
// really sustains for plain traffic, so the fairest yardstick for a kernel of the same run; the
// datasheet peak (which no copy reaches) only when the run has no such copy.
CopyCeiling copy_ceiling(const Experiment& exp, const RunRecord& run, const RunFigures& f) {
  CopyCeiling c;
  for (size_t i = 0; i < exp.ops.size(); ++i) {
    const Op& op = exp.ops[i];
    if (op.kind->engine(exp, op) != Engine::copy_other || !(f.ops[i].gbps > c.gbps)) continue;
    c.gbps = f.ops[i].gbps, c.measured = true;
    c.source = fmt::format("D2D copy '{}' (line {}), measured", op.id, op.loc.line);
  }
  if (c.measured || std::isnan(run.peaks.memory_gbps)) return c;
  c.gbps = run.peaks.memory_gbps;
  c.source = "the device's theoretical peak: " + run.peaks.memory_source;
  return c;
}

// Ops whose traffic is device memory's (not the host link's, not a graph's mix) against it.
void against_ceiling(const Experiment& exp, RunFigures& f) {
  for (size_t i = 0; i < exp.ops.size(); ++i) {
    const Engine e = exp.ops[i].kind->engine(exp, exp.ops[i]);
    if ((e == Engine::compute || e == Engine::copy_other) && exp.ops[i].body.empty())
      f.ops[i].of_ceiling = f.ops[i].gbps / f.ceiling.gbps;
  }
}

}  // namespace

// One convention for every op: device memory traffic is what its bandwidth is limited by, so a
// device-to-device copy, which reads B bytes and writes B, counts 2B like a kernel counts its
// reads + writes; that makes a transpose and a copy of one run compare directly. A copy between
// host and device is limited by the link, where its B bytes cross once (one side is not device
// memory). A graph counts its captured ops' bytes so, per launch.
int64_t traffic_bytes(const Experiment& exp, const Op& op) {
  if (!op.body.empty()) {
    int64_t sum = 0;
    for (const Op& b : op.body) sum += traffic_bytes(exp, b);
    return sum * op.replays;
  }
  const int64_t bytes = op.kind->bytes(exp, op);
  return op.kind->engine(exp, op) == Engine::copy_other ? 2 * bytes : bytes;
}

RunFigures run_figures(const Experiment& exp, const RunRecord& run) {
  RunFigures f;
  f.ops = op_figures(run, exp.ops.size());
  for (size_t i = 0; i < exp.ops.size(); ++i) {
    f.ops[i].bytes = traffic_bytes(exp, exp.ops[i]);
    if (f.ops[i].bytes > 0 && f.ops[i].device.n && f.ops[i].device.median > 0)
      f.ops[i].gbps = static_cast<double>(f.ops[i].bytes) / (f.ops[i].device.median * 1e6);
  }
  for (size_t i = 0; i < exp.ops.size(); ++i)
    if (!exp.ops[i].body.empty()) graph_figures(exp, run, i, f.ops[i]);
  const OpGroups groups = group_ops(exp);
  for (size_t s = 0; s < exp.streams.size(); ++s) {
    if (groups.by_stream[s].empty()) continue;
    double b =
        median_of(run, [&](const RepetitionSample& rep) { return busy(rep, groups.by_stream[s]); });
    if (!std::isnan(b)) f.streams.push_back({int(s), b});
  }
  add_overlaps(exp, groups, run, f);
  f.host_span = host_span(run);
  f.device_span = device_span(run);
  f.bounds = span_bounds(exp, groups, run, f.device_span);
  f.typical_rep = median_repetition(run);
  f.ceiling = copy_ceiling(exp, run, f);
  against_ceiling(exp, f);
  return f;
}

}  // namespace streamlab
