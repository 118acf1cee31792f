#pragma once
// The start gate (docs/semantics.md, "The start gate"): every stream the experiment uses waits on
// a flag in mapped host memory while a repetition is issued, so the host's issue cost does not
// serialize work that could overlap, and a timing event recorded on an idle stream does not fire
// before its op arrives. It opens once every op is queued, or just before the first op that
// blocks the host (which would otherwise wait for ever), or after kGateMaxHeld ops
// (start_gate_rule.hpp). A gate left closed for kTimeoutNs opens by itself. Where the driver
// lets a stream write memory, the held streams are released one after another, in the order of
// their first ops, as a program that issues the same ops one by one starts them.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
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

  void close();      // before a repetition: each held stream waits (on the flag or the chain)
  void open();       // let the held streams run: one store, nothing else; harmless when open
  bool timed_out();  // after the repetition's final synchronize; clears the flag
  // What changed in how the gate holds since it was made (the driver refused a wait or a write
  // it had accepted before); each once, since the gate stops using what was refused.
  std::string take_late_note() { return std::exchange(late_note_, {}); }

 private:
  std::string order_streams();  // sets up the release in order; what the report says of it
  void hold(size_t k);          // streams_[k]
  void release_next(size_t k);
  void add_late_note(std::string_view what);
  bool chained() const { return chain_ && wait_value_ && write_value_; }  // released in order
  void watch();                                                           // the timeout's thread

  std::vector<cudaStream_t> streams_;  // in the order of their first ops
  size_t opens_before_ = 0;
  std::string note_;
  int* host_ = nullptr;    // mapped host memory: [0] the flag, [1] the gate kernel timed out
  int* device_ = nullptr;  // the same memory, as the device sees it
  // cuStreamWaitValue32, where the driver has it: the stream's own front end waits on the flag,
  // so its first op starts as soon as the flag is seen. Otherwise (or where the call fails) a
  // one-thread kernel spins on the flag, and its exit is what releases the stream's next op.
  void* wait_value_ = nullptr;
  // The release in order: only the first stream waits on the host's flag. Each stream, once
  // released, writes this repetition's number into chain_[k + 1] (cuStreamWriteValue32) ahead of
  // its first op, and stream k + 1 waits for that value (GEQ: a later repetition's number also
  // releases it, so chain_ needs no reset between closings). The first op of stream k is then
  // next in its queue a memory round trip before stream k + 1 is released: first at an engine
  // that both use. That is a race the first op has won in every measured repetition, not a
  // promise of the driver's. An event in place of the write (cudaEventRecord, then
  // cudaStreamWaitEvent) released the next stream within a few microseconds and lost it: three
  // copies started 1, 3, 2 in all 40 repetitions of one H100 run (docs/timing.md). A stream whose
  // predecessor could not write waits on the flag itself, as every stream does behind the kernel.
  void* write_value_ = nullptr;
  uint32_t* chain_ = nullptr;  // device memory, a word per held stream (chain_[0] unused)
  uint32_t generation_ = 0;    // this repetition's number
  std::string late_note_;
  // The timeout, for either kind of gate: a thread that looks every kPollNs and opens a gate
  // still closed kTimeoutNs after its closing (the kernel also times itself out, on the GPU's
  // timer). Nothing wakes it: close() and open() cost the repetition no system call and put no
  // thread on a core just before the span. The lock makes its look and store one step against
  // close(), so it never opens a gate closed since it looked.
  static constexpr uint64_t kPollNs = 250'000'000;
  std::mutex mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point closed_at_;
  std::atomic<bool> host_timed_out_{false};
  std::thread watcher_;
};

}  // namespace streamlab
