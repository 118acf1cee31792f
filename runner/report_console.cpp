#include "runner/report_console.hpp"

#include <fmt/format.h>

#include "ops/kernels/kernel.hpp"
#include "ops/op.hpp"
#include "runner/stats.hpp"

namespace streamlab {
namespace {

std::string_view direction(const Experiment& exp, const Op& op) {
  bool from_host = is_host_memory(exp.buffers[op.src].memory);
  bool to_host = is_host_memory(exp.buffers[op.dst].memory);
  if (from_host) return to_host ? "H2H" : "H2D";
  return to_host ? "D2H" : "D2D";
}

std::string describe_launch(const Experiment& exp, const Op& op) {
  const KernelInfo& k = kernel_table()[op.kernel];
  std::string args;
  for (size_t i = 0; i < op.args.size(); ++i) {
    if (i) args += ", ";
    args += op.args[i].buffer >= 0 ? exp.buffers[op.args[i].buffer].name : std::to_string(op.args[i].scalar);
  }
  auto dims = [](const std::array<int64_t, 3>& d) {
    return d[2] > 1 ? fmt::format("[{},{},{}]", d[0], d[1], d[2]) : fmt::format("[{},{}]", d[0], d[1]);
  };
  return fmt::format("{}<<<{}, {}{}>>>({})", k.name, dims(op.grid), dims(op.block),
                     op.shared_bytes ? fmt::format(", {}", op.shared_bytes) : "", args);
}

std::string ms(double v) { return std::isnan(v) ? "-" : fmt::format("{:.3f}", v); }

std::string span_line(std::string_view what, const Summary& s) {
  return fmt::format("  {:<38} median {:>9.3f} ms   min {:.3f}   max {:.3f}   cv {:.1f}%\n", what, s.median, s.min,
                     s.max, 100 * s.cv);
}

std::string header(const Experiment& exp, const RunRecord& run) {
  std::string params;
  for (const auto& [name, value] : exp.params) params += fmt::format("{}{}={}", params.empty() ? "" : " ", name, value);
  std::string out = fmt::format("{} ({})\n", exp.name, exp.file);
  out += fmt::format("  backend   {}: {}\n", run.backend, run.device);
  if (!params.empty()) out += fmt::format("  params    {}\n", params);
  out += fmt::format("  runs      {} warm-up + {} timed repetition{}\n", run.warmup, run.reps.size(),
                     run.reps.size() == 1 ? "" : "s");
  if (run.device_timing) out += "  timing    CUDA events around each device op, in its own stream; host steady clock around each call\n";
  return out;
}

std::string op_table(const Experiment& exp, const RunRecord& run) {
  std::string out = run.device_timing
      ? fmt::format("\n  {:>3}  {:<16} {:<18} {:<10} {:>5}  {:>10}  {:>10}  {}\n", "#", "op", "kind", "stream", "line",
                    "device ms", "host ms", "what")
      : fmt::format("\n  {:>3}  {:<16} {:<18} {:<10} {:>5}  {}\n", "#", "op", "kind", "stream", "line", "what");
  for (size_t i = 0; i < exp.ops.size(); ++i) {
    const Op& op = exp.ops[i];
    std::string stream = op.stream >= 0 ? exp.streams[op.stream].name : "-";
    std::vector<double> device, host;
    for (const auto& r : run.reps) device.push_back(r.ops[i].device_ms()), host.push_back(r.ops[i].host_ms());
    std::string timings = run.device_timing
        ? fmt::format("  {:>10}  {:>10}", op.device_work ? ms(summarize(device).median) : "-", ms(summarize(host).median))
        : "";
    out += fmt::format("  {:>3}  {:<16} {:<18} {:<10} {:>5}{}  {}\n", i + 1, op.id, op.kind->name, stream,
                       op.loc.line, timings, describe_op(exp, op));
  }
  return out;
}

std::string spans(const RunRecord& run) {
  if (!run.device_timing)
    return "\n  host backend: ops emulated on host memory in issue order; no GPU times are measured\n";
  std::vector<double> host, device;
  for (const auto& r : run.reps) host.push_back(r.host_span_ms), device.push_back(r.device_span_ms);
  std::string out = "\n  medians over the timed repetitions; device ms from the op's timing events\n";
  out += span_line("span (host: first issue to final sync)", summarize(host));
  if (summarize(device).n) out += span_line("span (GPU: first op start to last end)", summarize(device));
  return out;
}

std::string checks(const RunRecord& run) {
  if (run.checks.empty()) return "\nchecks: none\n";
  std::string out = "\nchecks\n";
  size_t passed = 0;
  for (const auto& c : run.checks) {
    passed += c.passed;
    out += c.passed ? fmt::format("  PASS  {}\n", c.title) : fmt::format("  FAIL  {}: {}\n", c.title, c.detail);
  }
  out += fmt::format("\n{} of {} checks passed\n", passed, run.checks.size());
  return out;
}

}  // namespace

std::string format_bytes(int64_t bytes) {
  constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.4g} {}", v, units[u]);
}

std::string describe_op(const Experiment& exp, const Op& op) {
  std::string_view kind = op.kind->name;
  if (kind == "memcpy" || kind == "memcpyAsync")
    return fmt::format("{} -> {} ({}, {})", exp.buffers[op.src].name, exp.buffers[op.dst].name, direction(exp, op),
                       format_bytes(exp.buffers[op.dst].bytes));
  if (kind == "memset" || kind == "memsetAsync")
    return fmt::format("{} = {:#04x} bytes ({})", exp.buffers[op.dst].name, op.value, format_bytes(exp.buffers[op.dst].bytes));
  if (kind == "launch") return describe_launch(exp, op);
  if (op.event >= 0) return exp.events[op.event].name;
  return "";
}

std::string format_console_report(const Experiment& exp, const RunRecord& run) {
  return header(exp, run) + op_table(exp, run) + spans(run) + checks(run);
}

}  // namespace streamlab
