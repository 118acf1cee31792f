#pragma once
// The start gate (docs/semantics.md, "The start gate"): a spin kernel in every stream the
// experiment uses holds the streams while a repetition is issued, so the host's issue cost does not
// serialize work that could overlap, and a timing event recorded on an idle stream does not fire
// before its op arrives. It opens once every op is queued, or just before the first op that
// blocks the host (which would otherwise wait for ever), or after kGateMaxHeld ops (start_gate_rule.hpp).
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "runner/context/cuda_state.hpp"

namespace streamlab {

class StartGate {
 public:
  static constexpr uint64_t kTimeoutNs = 5'000'000'000;

  // `enabled` false (--no-gate) or no op to hold: the gate is not used.
  StartGate(const Experiment& exp, const CudaState& state, bool enabled);
  ~StartGate();
  StartGate(const StartGate&) = delete;
  StartGate& operator=(const StartGate&) = delete;

  bool used() const { return !streams_.empty(); }
  size_t opens_before() const { return opens_before_; }  // op index; ops.size() = after the last op
  const std::string& note() const { return note_; }      // how the gate was used, for reports

  void close();      // before a repetition: a gate kernel in each held stream
  void open();       // let the held streams run
  bool timed_out();  // after the repetition's final synchronize; clears the flag

 private:
  std::vector<cudaStream_t> streams_;
  size_t opens_before_ = 0;
  std::string note_;
  volatile int* host_ = nullptr;  // mapped host memory: [0] the flag, [1] timed out
  int* device_ = nullptr;         // the same memory, as the device sees it
};

}  // namespace streamlab
