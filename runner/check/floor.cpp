// The physical floor of a run's times: bytes over the peak rate of the part of the device that
// moves them. A time below its floor did not happen as timed; graders score no timing then.
#include <cmath>

#include <fmt/format.h>

#include "ops/op_kind.hpp"
#include "runner/check/figures.hpp"

namespace streamlab {
namespace {

// Below the floor by more than this share, and by more than the timers' resolution, is impossible:
// the peaks are upper bounds, and a timer's clock has its own granularity.
constexpr double kSlack = 0.95;
constexpr double kResolutionMs = 0.002;

bool below(double measured_ms, double floor_ms) {
  return !std::isnan(measured_ms) && !std::isnan(floor_ms) &&
         measured_ms < kSlack * floor_ms - kResolutionMs;
}

// Bytes through the host link (each direction) and through device memory, per repetition.
struct Traffic {
  double to_device = 0, to_host = 0, memory = 0;
};

// Device memory is a floor only for bytes the L2 cache cannot hold: data that fits may be served
// from it, faster (docs/semantics.md, O4).
constexpr int64_t kBeyondL2 = 4;

// Where one op's bytes go (its bytes count `times:` already, and a device-to-device copy's both
// its reads and its writes: traffic_bytes): a host-device copy over the link, anything else
// through device memory; none for device memory when the op's bytes could sit in L2.
Traffic traffic_of(const Experiment& exp, const Op& op, int64_t bytes, int64_t l2_bytes) {
  double b = static_cast<double>(bytes);
  Engine e = op.kind->engine(exp, op);
  if (e == Engine::copy_h2d) return {b, 0, 0};
  if (e == Engine::copy_d2h) return {0, b, 0};
  if (l2_bytes <= 0 || bytes < kBeyondL2 * l2_bytes) return {0, 0, 0};
  return {0, 0, b};
}

double floor_ms(const Traffic& t, const DevicePeaks& p) {
  double link = (std::isnan(p.link_gbps) ? 0 : std::max(t.to_device, t.to_host) / p.link_gbps);
  double memory = std::isnan(p.memory_gbps) ? 0 : t.memory / p.memory_gbps;
  return std::max(link, memory) / 1e6;  // bytes / (GB/s) = ns; in ms
}

}  // namespace

std::vector<std::string> impossible_timings(const Experiment& exp, const RunRecord& run) {
  std::vector<std::string> out;
  if (!run.device_timing() ||
      (std::isnan(run.peaks.memory_gbps) && std::isnan(run.peaks.link_gbps)))
    return out;
  Traffic all;
  for (size_t i = 0; i < exp.ops.size(); ++i) {
    const OpFigures& f = run.figures.ops[i];
    if (f.bytes <= 0 || !exp.ops[i].body.empty()) continue;
    Traffic t = traffic_of(exp, exp.ops[i], f.bytes, run.peaks.l2_bytes);
    all.to_device += t.to_device, all.to_host += t.to_host, all.memory += t.memory;
    double floor = floor_ms(t, run.peaks);
    if (f.device.n && below(f.device.median, floor))
      out.push_back(fmt::format(
          "op '{}' (line {}) took {:.4f} ms for {}: the device cannot move "
          "that in less than {:.4f} ms",
          exp.ops[i].id, exp.ops[i].loc.line, f.device.median, format_bytes(f.bytes), floor));
  }
  double floor = floor_ms(all, run.peaks);
  for (auto [what, span] :
       {std::pair{"GPU span", &run.figures.device_span}, std::pair{"span", &run.figures.host_span}})
    if (span->n && below(span->median, floor))
      out.push_back(
          fmt::format("the {} of {:.4f} ms is below the {:.4f} ms the device needs for "
                      "the repetition's bytes",
                      what, span->median, floor));
  return out;
}

}  // namespace streamlab
