#include "runner/figures.hpp"

namespace streamlab {

std::vector<double> samples(const RunRecord& run, size_t op, double OpSample::*field) {
  std::vector<double> out;
  for (const auto& rep : run.reps) out.push_back(rep.ops[op].*field);
  return out;
}

std::vector<OpFigures> op_figures(const RunRecord& run, size_t op_count) {
  std::vector<OpFigures> out(op_count);
  for (size_t i = 0; i < op_count; ++i) {
    std::vector<double> device, host;
    for (const auto& rep : run.reps) device.push_back(rep.ops[i].device_ms()), host.push_back(rep.ops[i].host_ms());
    out[i] = {summarize(device), summarize(host)};
  }
  return out;
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

}  // namespace streamlab
