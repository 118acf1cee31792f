#pragma once
// Finding the op behind a device fault. CUDA reports a fault of device code (an illegal address,
// a trap) at whatever call comes next, and the process's context is unusable after it: so the
// experiment runs again in a child process of this program, up to the repetition that faulted,
// with cudaDeviceSynchronize after every op, where the first op that reports the fault is the one
// that caused it. (CUDA_LAUNCH_BLOCKING=1 would add nothing to that, and it is not set: an
// experiment's own setting stays as it was.)
#include <cstdint>
#include <string>
#include <vector>

namespace streamlab {

struct LocatedFault {
  int64_t op = -1;     // the op index, or -1 when the fault did not recur
  std::string detail;  // what the child said, when it did not name an op
};

// `args`: the child's command line after the program (`run FILE --set ... --repeat R ...`,
// `--locate-fault` included). The child is stopped by its own --timeout: what is left of the
// parent's.
LocatedFault locate_fault(const std::vector<std::string>& args);

// The child's report to the parent: the op that faulted (-1: at the final synchronize), written
// to file descriptor kLocatedFd, a pipe of its own: the child's stderr can hold the experiment's
// own text, which must not be able to pose as the answer.
inline constexpr int kLocatedFd = 3;
void report_located(int64_t op);

}  // namespace streamlab
