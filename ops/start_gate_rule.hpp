#pragma once
// Where the start gate opens (runner/execute/start_gate.hpp), as a rule on the op list alone: the cuda backend
// opens it there, and the timeline model (runner/predict/) holds the same ops behind it.
#include <cstddef>

#include "runner/core/experiment.hpp"

namespace streamlab {

inline constexpr size_t kGateMaxHeld = 256;  // ops queued behind the gate at most: launch queues are finite

// The first op that blocks the host, or ops.size().
size_t first_blocking_op(const Experiment& exp);
// Whether CUDA_LAUNCH_BLOCKING=1 holds, set by the experiment's `env:` or in the process's
// environment: each launch then returns only once its kernel is done, so a launch into a stream
// the gate holds would never return.
bool launches_block(const Experiment& exp);
// The index of the first op issued after the gate opens: the first blocking op, the end of the
// list, or kGateMaxHeld, whichever comes first; 0 with `gate: false` or when launches block.
size_t gate_opens_before(const Experiment& exp);

}  // namespace streamlab
