#pragma once
// Whether an experiment's buffers fit, checked before anything is allocated: an experiment may
// declare terabytes, and allocating until the kernel's OOM killer or the driver stops the process
// would take a grader's machine with it.
#include <cstdint>
#include <string>

#include "runner/core/experiment.hpp"

namespace streamlab {

struct MemoryNeed {
  int64_t host = 0;    // bytes of host memory the run allocates (saturating at INT64_MAX)
  int64_t device = 0;  // bytes of device memory (device and managed buffers)
};

// On the host backend every buffer is host memory; on the cuda backend, host and mapped buffers
// are, plus a host copy of each buffer restored between repetitions and of each device buffer a
// check reads.
MemoryNeed memory_need(const Experiment& exp, bool cuda);

// Host memory this process may still allocate: the kernel's MemAvailable, less where an address
// space or data limit (ulimit -v, -d) is lower. INT64_MAX when nothing says.
int64_t host_memory_available();

// Throws RunError naming the need and what is available when the host part does not fit.
void check_host_memory(const Experiment& exp, bool cuda);

// "1.5 GiB"
std::string format_size(int64_t bytes);

}  // namespace streamlab
