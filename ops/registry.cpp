// The table of op kinds. Adding an op: its file under ops/, a declaration in ops.hpp, one line
// here, the schema, a test and an experiment.
#include <fmt/format.h>

#include "ops/ops.hpp"
#include "runner/happens_before.hpp"

namespace streamlab {
namespace {

const OpKind* const kOps[] = {
    &kMemcpy,      &kMemcpyAsync,      &kMemset,          &kMemsetAsync,       &kLaunch,
    &kEventRecord, &kStreamWaitEvent,  &kEventSynchronize, &kStreamSynchronize, &kDeviceSynchronize,
    &kLaunchHostFunc, &kStreamQuery,   &kEventQuery,
    &kMalloc,      &kFree,             &kMallocHost,      &kFreeHost,          &kMallocAsync,   &kFreeAsync,
    &kGraph,       &kGemm,             &kConvolutionForward,
    &kAllReduce,   &kBroadcast,        &kReduceScatter,   &kAllGather,
};

}  // namespace

std::span<const OpKind* const> op_table() { return kOps; }

const OpKind* find_op_kind(std::string_view name) {
  for (const OpKind* k : kOps)
    if (k->name == name) return k;
  return nullptr;
}

std::string_view key_name(std::string_view key) {
  return key_optional(key) ? key.substr(0, key.size() - 1) : key;
}

bool key_optional(std::string_view key) { return !key.empty() && key.back() == '?'; }

void order_in_stream(HappensBefore& hb, const Experiment&, const Op& op) { hb.stream_op(op.stream); }

std::vector<int> buffers_to_restore(const Experiment& exp) {
  std::vector<bool> written(exp.buffers.size());
  for (const Op& op : exp.ops)
    for (const Access& a : op.kind->accesses(exp, op))
      if (a.write) written[a.range.buffer] = true;
  std::vector<int> out;
  for (size_t b = 0; b < exp.buffers.size(); ++b)
    if (written[b] && exp.buffers[b].init.kind != InitSpec::Kind::none) out.push_back(static_cast<int>(b));
  return out;
}

}  // namespace streamlab

namespace streamlab {

std::string format_bytes(int64_t bytes) {
  constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.4g} {}", v, units[u]);
}

}  // namespace streamlab
