#include "runner/execute/start_gate.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "ops/kernels/gate.hpp"
#include "ops/op_kind.hpp"
#include "runner/context/cuda_check.hpp"
#include "ops/start_gate_rule.hpp"

namespace streamlab {
namespace {

std::string describe(const Experiment& exp, size_t opens_before, size_t blocking) {
  if (opens_before == exp.ops.size())
    return fmt::format("start gate: every stream held until all {} ops were issued",
                       exp.ops.size());
  const Op& op = exp.ops[opens_before];
  if (opens_before == blocking)
    return fmt::format(
        "start gate: opened before op '{}' (line {}), a {} that blocks the host; {} ops held",
        op.id, op.loc.line, op.kind->name, opens_before);
  return fmt::format("start gate: opened after {} ops, the most it holds", opens_before);
}

}  // namespace

StartGate::StartGate(const Experiment& exp, const CudaState& state, bool enabled) {
  size_t blocking = first_blocking_op(exp);
  opens_before_ = std::min({blocking, exp.ops.size(), kGateMaxHeld});
  if (!enabled || !exp.gate) {
    note_ = enabled ? "start gate: off (the experiment says `gate: false`: it measures the cost of "
                      "issuing its ops)"
                    : "start gate: off (--no-gate)";
    return;
  }
  if (opens_before_ == 0) {
    if (!exp.ops.empty())
      note_ = fmt::format("start gate: not used: the first op, '{}' ({}), blocks the host",
                          exp.ops[0].id, exp.ops[0].kind->name);
    return;
  }
  note_ = describe(exp, opens_before_, blocking);
  for (size_t i = 0; i < opens_before_; ++i) {
    int s = exp.ops[i].stream;
    if (s >= 0 && std::find(streams_.begin(), streams_.end(), state.streams[s]) == streams_.end())
      streams_.push_back(state.streams[s]);
  }
  void* p = nullptr;
  STREAMLAB_CUDA(cudaHostAlloc(&p, 2 * sizeof(int), cudaHostAllocMapped));
  host_ = static_cast<volatile int*>(p);
  host_[0] = 0;
  host_[1] = 0;
  STREAMLAB_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_), p, 0));
}

StartGate::~StartGate() {
  if (host_) STREAMLAB_CUDA_NOEXCEPT(cudaFreeHost(const_cast<int*>(host_)));
}

void StartGate::close() {
  host_[0] = 0;
  for (cudaStream_t s : streams_)
    STREAMLAB_CUDA(launch_start_gate(s, device_, device_ + 1, kTimeoutNs));
}

void StartGate::open() { host_[0] = 1; }

bool StartGate::timed_out() {
  if (!host_ || host_[1] == 0) return false;
  host_[1] = 0;
  return true;
}

}  // namespace streamlab
