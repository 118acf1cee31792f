#pragma once
// Running untrusted work (a compiler given an experiment's kernel source) in a child process with
// a memory and CPU bound, so that what the text makes the work do (a template that instantiates
// without end, a header that expands into gigabytes) cannot exhaust this process or the machine.
// The work runs in a fork of this process: it must not use CUDA (a forked child cannot) and
// returns its whole result as bytes.
#include <cstdint>
#include <functional>
#include <string>

namespace streamlab {

struct ChildBounds {
  int64_t memory_bytes = 0;  // data the child may allocate beyond what it inherited
  int64_t cpu_seconds = 0;
};

struct ChildResult {
  bool ok = false;
  std::string bytes;  // what `work` returned, when ok
  std::string why;    // otherwise: what stopped it ("it needed more than 4096 MiB of memory", ...)
};

// Runs `work` in a fork of this process under `bounds` and returns what it returned. An exception
// `work` throws comes back as `why` (its text; std::bad_alloc as running out of memory).

ChildResult run_bounded(const std::function<std::string()>& work, const ChildBounds& bounds);

}  // namespace streamlab
