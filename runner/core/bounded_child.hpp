#pragma once
// Running untrusted work (a compiler given an experiment's kernel source) in a child process with
// a memory, CPU, time and output bound, so that what the text makes the work do (a template that
// instantiates without end, a header that expands into gigabytes) cannot exhaust this process or
// the machine. The work runs in a fork of this process: it must not use CUDA (a forked child
// cannot) and returns its whole result as bytes.
#include <cstdint>
#include <functional>
#include <string>

namespace streamlab {

struct ChildBounds {
  int64_t memory_bytes = 0;  // data the child may allocate beyond what it inherited
  int64_t cpu_seconds = 0;   // CPU time; twice as much wall-clock time (a child that blocks)
  int64_t output_bytes = 0;  // what it may send back
};

struct ChildResult {
  enum Outcome {
    ok,       // `bytes` is what `work` returned
    bounded,  // a bound stopped it, or it crashed: what the work was given is at fault
    failed,   // `work` threw, or the child could not be started: this machine is at fault
  };
  Outcome outcome = failed;
  std::string bytes;
  std::string
      why;  // unless ok: "it needed more than 4096 MiB of memory", the exception's text, ...
};

// Runs `work` in a fork of this process under `bounds` and returns what it returned. An exception
// `work` throws comes back as `failed` with its text (std::bad_alloc as `bounded`: out of memory).
ChildResult run_bounded(const std::function<std::string()>& work, const ChildBounds& bounds);

}  // namespace streamlab
