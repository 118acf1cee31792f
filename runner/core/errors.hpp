#pragma once
// The errors a run may end with, apart from a bad experiment (which load reports as diagnostics).
#include <cstdint>
#include <stdexcept>
#include <string>

#include "runner/core/experiment.hpp"

namespace streamlab {

// An op the host backend cannot perform (a kernel compiled by NVRTC for a GPU): it skips the op
// and what depends on it, and says so.
class HostUnsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What Backend::contents throws for a buffer whose contents the backend did not compute (the host
// backend skipped an op that writes it); checks of it are not evaluated.
class ContentsUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A CUDA or runtime failure while running; the message names the op and its YAML line (exit 3).
class RunError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A fault of device code (an illegal address, a trap): CUDA reports it at whatever call comes
// next, often a later op's or the final synchronize, and the context is unusable after it. The CLI
// finds the op that caused it by running the experiment again with every op synchronized.
class DeviceFault : public RunError {
 public:
  DeviceFault(const std::string& what, std::string cuda_error, uint64_t in_repetition,
              int64_t at_op)
      : RunError(what), error(std::move(cuda_error)), repetition(in_repetition), op(at_op) {}
  std::string error;    // "cudaErrorIllegalAddress: an illegal memory access was encountered"
  uint64_t repetition;  // 1-based, warm-up included
  // The op whose call (or, every op synchronized, whose completion) reported it; -1: the
  // repetition's final synchronize.
  int64_t op;
};

// "op 'k1' (exp.yaml:14:5)": how errors name an op.
std::string op_context(const Op& op);

}  // namespace streamlab
