// The cuda backend: every op issued to the real CUDA runtime, every call checked, device intervals
// measured by the chosen DeviceTimer (device_timer.hpp).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "ops/op_kind.hpp"
#include "runner/context/buffer_init.hpp"
#include "runner/context/cuda_check.hpp"
#include "runner/context/cuda_handles.hpp"
#include "runner/context/cuda_state.hpp"
#include "runner/context/device_timer.hpp"
#include "runner/core/diagnostics.hpp"
#include "runner/execute/backend.hpp"
#include "runner/execute/memory_budget.hpp"
#include "runner/execute/nvtx.hpp"
#include "runner/execute/start_gate.hpp"
#include "runner/load/environment.hpp"

namespace streamlab {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

using Memory = std::unique_ptr<void, void (*)(void*)>;

void free_device(void* p) { STREAMLAB_CUDA_NOEXCEPT(cudaFree(p)); }
void free_pinned(void* p) { STREAMLAB_CUDA_NOEXCEPT(cudaFreeHost(p)); }
void free_pageable(void* p) { std::free(p); }

Memory allocate(const Buffer& b) {
  void* p = nullptr;
  auto bytes = static_cast<size_t>(b.bytes);
  switch (b.memory) {
    case MemoryKind::device:
      STREAMLAB_CUDA(cudaMalloc(&p, bytes));
      return Memory(p, free_device);
    case MemoryKind::pinned:
      STREAMLAB_CUDA(cudaMallocHost(&p, bytes));
      return Memory(p, free_pinned);
    case MemoryKind::managed:
      STREAMLAB_CUDA(cudaMallocManaged(&p, bytes));
      return Memory(p, free_device);
    // Under unified addressing (every 64-bit platform CUDA 13 runs on) the host pointer of mapped
    // memory is also its device pointer.
    case MemoryKind::mapped:
      STREAMLAB_CUDA(cudaHostAlloc(&p, bytes, cudaHostAllocMapped));
      return Memory(p, free_pinned);
    case MemoryKind::pageable:
      break;
  }
  // Plain malloc, as a hand-written program gets its pageable buffers: the driver's staging of
  // pageable copies depends on the source's alignment and pages, so anything else would differ.
  p = std::malloc(bytes);
  if (!p) throw std::bad_alloc();
  return Memory(p, free_pageable);
}

std::string error_text(cudaError_t e) {
  return fmt::format("{}: {}", cudaGetErrorName(e), cudaGetErrorString(e));
}

std::string describe_buffer(const Buffer& b) {
  return fmt::format("buffer '{}' ({}:{}:{}, {} bytes of {} memory)", b.name, b.loc.file,
                     b.loc.line, b.loc.col, b.bytes, memory_kind_name(b.memory));
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(const Experiment& exp, int device, CudaOptions options)
      : exp_(exp), device_(device), options_(options), state_{exp, {}, {}, {}, {},
                                                              {},  {}, {}, {}, {}} {}

  ~CudaBackend() override {
    // Work may still be queued after a failure, some of it held by the gate: let it finish
    // before its memory is freed.
    if (gate_) gate_->open();
    STREAMLAB_CUDA_NOEXCEPT(cudaDeviceSynchronize());
    for (size_t b = 0; b < exp_.buffers.size() && b < state_.buffers.size(); ++b)
      if (exp_.buffers[b].alloc_op >= 0 && state_.buffers[b]) free_op_allocation(b);
  }

  std::string name() const override { return "cuda"; }
  std::string description() const override { return description_; }
  std::string device_name() const override { return device_name_; }
  bool measures_device_time() const override { return true; }
  std::string timer() const override { return timer_ ? timer_->name() : "none"; }
  std::string timer_description() const override { return timer_ ? timer_->description() : ""; }
  std::vector<std::string> notes() const override { return notes_; }
  DevicePeaks peaks() const override { return peaks_; }
  Facts device_facts() const override { return facts_; }

  void prepare() override {
    STREAMLAB_CUDA(cudaSetDevice(device_));
    describe_device();
    peaks_ = cuda_device_peaks(device_);
    facts_ = cuda_device_facts(device_, peaks_);
    check_host_memory(exp_, true);
    check_device_memory();
    create_streams();
    for (const Buffer& b : exp_.buffers) {
      try {
        allocate_and_fill(b);
      } catch (const CudaError& e) {
        throw RunError(fmt::format("{}: {}", describe_buffer(b), e.what()));
      } catch (const std::bad_alloc&) {
        throw RunError(fmt::format("{}: out of host memory", describe_buffer(b)));
      }
    }
    for (const Event& e : exp_.events)
      state_.events.push_back(own(create_event((e.blocking_sync ? cudaEventBlockingSync : 0u) |
                                               (e.disable_timing ? cudaEventDisableTiming : 0u))));
    keep_initial_contents();
    prepare_ops();
    notes_.insert(notes_.end(), state_.notes.begin(), state_.notes.end());
    state_.answers.assign(exp_.ops.size(), -1);
    timer_ = choose_timer();
    // Every op synchronized: a held stream would never finish the first op, so no gate.
    gate_ =
        std::make_unique<StartGate>(exp_, state_, options_.gate && !options_.synchronize_each_op);
    if (!gate_->note().empty()) notes_.push_back(gate_->note());
    ends_synchronized_ = ends_with_device_synchronize(exp_);
    STREAMLAB_CUDA(cudaDeviceSynchronize());
    ready_ = true;
  }

  RepetitionSample run_repetition() override {
    RepetitionSample rep;
    rep.number = ++repetitions_;
    release_op_allocations();
    restore_initial_contents();
    auto t0 = Clock::now();
    state_.t0 = t0;
    issued_ = 0;
    // The timer's base first: the events timer's base event, recorded after the gate's waits,
    // could sit behind one of them in a hardware queue that its stream shares with a held stream
    // (CUDA_DEVICE_MAX_CONNECTIONS), and fire only when the gate opens. The gate's closing then
    // falls after t0: in the ops' issue times, not in the span, which starts at the opening.
    timer_->begin_repetition(rep.number, t0);
    if (gate_->used()) gate_->close();
    for (size_t i = 0; i < exp_.ops.size(); ++i) {
      if (gate_->used() && i == gate_->opens_before()) open_gate(rep, t0);
      rep.ops.push_back(issue(i, t0));
    }
    if (gate_->used() && gate_->opens_before() == exp_.ops.size()) open_gate(rep, t0);
    // A repetition ends with the device idle. Where its last op is a deviceSynchronize, it is: a
    // second one would only add its own cost (2 us on the H200) to the span.
    waiting_ = true;
    if (!ends_synchronized_) wait_for_device();
    waiting_ = false;
    rep.host_span_ms = ms_since(t0) - (std::isnan(rep.gate_open_ms) ? 0 : rep.gate_open_ms);
    for (size_t i = 0; i < exp_.ops.size(); ++i) {
      rep.ops[i].answer = state_.answers[i];
      if (exp_.ops[i].self_timed) {
        const auto& run = state_.host_function_runs.at(&exp_.ops[i]);
        rep.ops[i].start_ms = run.start_ms, rep.ops[i].end_ms = run.end_ms;
      }
    }
    timer_->end_repetition(rep);
    if (gate_->timed_out() && !gate_timed_out_) {
      gate_timed_out_ = true;
      notes_.push_back(fmt::format(
          "start gate: timed out after {} s in repetition {}: its ops ran before all were "
          "issued",
          StartGate::kTimeoutNs / 1'000'000'000, rep.number));
    }
    if (std::string late = gate_->take_late_note(); !late.empty()) notes_.push_back(late);
    return rep;
  }

  void finish(std::vector<RepetitionSample>& timed) override {
    timer_->finish(timed);
    // Only ops with device work have a device interval (CUPTI records a host-to-host copy too):
    // the figures, the span and the reports then agree on what a device op is.
    for (auto& rep : timed) {
      for (size_t i = 0; i < exp_.ops.size(); ++i)
        if (!exp_.ops[i].device_work) rep.ops[i].start_ms = rep.ops[i].end_ms = NAN;
      set_device_span(rep);
    }
    for (size_t i = 0; i < exp_.ops.size(); ++i)
      if (auto finish_op = exp_.ops[i].kind->finish_cuda)
        for (auto& rep : timed) finish_op(state_, exp_.ops[i], rep.ops[i]);
  }

  // Streams still busy say which ops may not have finished; where the timer can tell (the events
  // timer), each op says for itself.
  std::string unfinished() const override {
    if (!ready_) return "";
    std::vector<std::string> lines;
    size_t issued = issued_;
    std::vector<int> busy(exp_.streams.size(), -1);  // per stream: -1 not asked, 0 idle, 1 busy
    std::vector<const Op*> first(exp_.streams.size(), nullptr);  // first unfinished op per stream
    for (size_t i = 0; i < issued && i < exp_.ops.size(); ++i) {
      const Op& op = exp_.ops[i];
      if (op.stream < 0 || !op.device_work) continue;
      if (busy[op.stream] < 0)
        busy[op.stream] = cudaStreamQuery(state_.streams[op.stream]) == cudaErrorNotReady;
      std::optional<bool> done = busy[op.stream] ? timer_->finished(i) : std::optional<bool>(true);
      if (done == true) continue;
      const Op* before = first[op.stream];
      if (!before) first[op.stream] = &op;
      std::string state = done == false ? (before ? fmt::format("queued behind op '{}'", before->id)
                                                  : "had not finished")
                                        : "may not have finished (its stream was still busy)";
      lines.push_back(fmt::format("  op '{}' ({}:{}:{}), {} in stream '{}': {}", op.id, op.loc.file,
                                  op.loc.line, op.loc.col, op.kind->name,
                                  exp_.streams[op.stream].name, state));
    }
    constexpr size_t kShown = 12;
    if (lines.size() > kShown) {
      size_t more = lines.size() - kShown;
      lines.resize(kShown);
      lines.push_back(fmt::format("  and {} more", more));
    }
    int64_t calling = calling_;
    if (calling >= 0) {
      const Op& op = exp_.ops[static_cast<size_t>(calling)];
      lines.push_back(fmt::format("  the host was in the call of op '{}' ({}:{}:{}), a {}", op.id,
                                  op.loc.file, op.loc.line, op.loc.col, op.kind->name));
    } else if (waiting_) {
      lines.push_back(
          "  the host was waiting for the repetition's ops to finish (cudaDeviceSynchronize)");
    }
    if (lines.empty()) return "";
    return fmt::format(
        "what had not finished{}:\n{}",
        timer_->name() == "events"
            ? ""
            : " (the " + timer_->name() +
                  " timer cannot tell which op of a busy stream was running: --timer events can)",
        fmt::join(lines, "\n"));
  }

  std::string activity() const override {
    if (!ready_) return "";
    int64_t calling = calling_;
    if (calling >= 0) {
      const Op& op = exp_.ops[static_cast<size_t>(calling)];
      return fmt::format("in the call of op '{}' ({}, line {})", op.id, op.kind->name, op.loc.line);
    }
    if (waiting_)
      return fmt::format("waiting for the device to finish the repetition's {} ops",
                         issued_.load());
    return "";
  }

  std::span<const std::byte> contents(int index) override {
    const Buffer& b = exp_.buffers[index];
    auto* p = static_cast<std::byte*>(state_.buffers[index]);
    if (!p)
      throw RunError(
          fmt::format("buffer '{}' has no contents at the end of the run: op '{}' freed it", b.name,
                      b.free_op >= 0 ? exp_.ops[b.free_op].id : "?"));
    if (host_accessible(b.memory)) return {p, static_cast<size_t>(b.bytes)};
    // One staging copy per buffer: a check reads two buffers' contents at once.
    staging_.resize(exp_.buffers.size());
    auto& copy = staging_[index];
    copy.resize(static_cast<size_t>(b.bytes));
    STREAMLAB_CUDA(cudaMemcpy(copy.data(), p, copy.size(), cudaMemcpyDeviceToHost));
    return copy;
  }

 private:
  void open_gate(RepetitionSample& rep, Clock::time_point t0) {
    gate_->open();
    rep.gate_open_ms = ms_since(t0);
  }

  // What ops make once: library handles, algorithms, captured graphs, compiled kernels. Their
  // warm-up calls run on real memory: buffers that ops allocate each repetition (mallocAsync) get a
  // stand-in for the while (graphs may not capture them: load refuses it).
  void prepare_ops() {
    std::vector<Memory> stand_ins;
    auto forget = [&] {  // the stand-ins are freed with `stand_ins`, never as the ops' allocations
      for (size_t b = 0; b < exp_.buffers.size(); ++b)
        if (exp_.buffers[b].alloc_op >= 0) state_.buffers[b] = nullptr;
    };
    try {
      for (size_t b = 0; b < exp_.buffers.size(); ++b) {
        if (exp_.buffers[b].alloc_op < 0) continue;
        stand_ins.push_back(allocate(exp_.buffers[b]));
        state_.buffers[b] = stand_ins.back().get();
      }
      prepare_each_op();
      STREAMLAB_CUDA(cudaDeviceSynchronize());  // the warm-ups are done with the stand-ins
    } catch (...) {
      STREAMLAB_CUDA_NOEXCEPT(cudaDeviceSynchronize());
      forget();
      throw;
    }
    forget();
  }

  void prepare_each_op() {
    for (const Op& op : exp_.ops) {
      if (!op.kind->prepare_cuda) continue;
      try {
        op.kind->prepare_cuda(state_, op);
      } catch (
          const InvalidExperiment&) {  // a user kernel that does not compile: its own diagnostics
        throw;
      } catch (const std::runtime_error& e) {  // CudaError, RunError
        throw RunError(fmt::format("{}: {}", op_context(op), e.what()));
      }
    }
  }

  void wait_for_device() {
    try {
      STREAMLAB_CUDA(cudaDeviceSynchronize());
    } catch (const CudaError& e) {
      std::string what = fmt::format(
          "while waiting for the ops of repetition {} to finish (an asynchronous failure of "
          "an op issued before): {}",
          repetitions_, e.what());
      if (is_device_fault(e.code)) throw DeviceFault(what, error_text(e.code), repetitions_, -1);
      throw RunError(what);
    }
  }

  // Every op synchronized (CudaOptions::synchronize_each_op): a fault is the op's own.
  void synchronize_after(size_t i) {
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) return;
    std::string what =
        fmt::format("{}: {}: {} (when it finished, every op synchronized)", op_context(exp_.ops[i]),
                    cudaGetErrorName(e), cudaGetErrorString(e));
    if (is_device_fault(e))
      throw DeviceFault(what, error_text(e), repetitions_, static_cast<int64_t>(i));
    throw RunError(what);
  }

  OpSample issue(size_t i, Clock::time_point t0) {
    const Op& op = exp_.ops[i];
    OpSample s;
    cudaStream_t stream = op.stream >= 0 ? state_.streams[op.stream] : nullptr;
    NvtxRange range(op.id);
    try {
      timer_->before_op(i, stream);
      s.issue_ms = ms_since(t0);
      calling_ = static_cast<int64_t>(i);
      op.kind->run_cuda(state_, op);
      calling_ = -1;
      s.return_ms = ms_since(t0);
      timer_->after_op(i, stream);
      issued_ = i + 1;
    } catch (const CudaError& e) {
      calling_ = -1;
      std::string what = fmt::format("{}: {}", op_context(op), e.what());
      if (is_device_fault(e.code))
        throw DeviceFault(what, error_text(e.code), repetitions_, static_cast<int64_t>(i));
      throw RunError(what);
    } catch (const std::runtime_error& e) {  // a library's RunError
      calling_ = -1;
      throw RunError(fmt::format("{}: {}", op_context(op), e.what()));
    }
    if (options_.synchronize_each_op) synchronize_after(i);
    return s;
  }

  // --timer: what the command line names, else what the experiment asks for, else CUPTI. CUPTI
  // is a preference unless the command line names it: where it cannot trace this process (not
  // installed, or another tool such as compute-sanitizer holds it), timing events measure instead,
  // said in a note.
  std::unique_ptr<DeviceTimer> choose_timer() {
    TimerChoice choice = options_.timer;
    if (choice == TimerChoice::automatic && !exp_.timer.empty()) {
      choice = exp_.timer == "cupti"    ? TimerChoice::automatic
               : exp_.timer == "events" ? TimerChoice::events
                                        : TimerChoice::none;
      notes_.push_back(
          fmt::format("timer: {}, as the experiment asks (`timer: {}`; --timer overrides it)",
                      exp_.timer, exp_.timer));
    }
    switch (choice) {
      case TimerChoice::cupti:
        return make_cupti_timer(exp_);
      case TimerChoice::events:
        return make_event_timer(exp_);
      case TimerChoice::none:
        return make_no_timer();
      case TimerChoice::automatic:
        break;
    }
    try {
      return make_cupti_timer(exp_);
    } catch (const RunError& e) {
      notes_.push_back(fmt::format("timer: CUDA events instead of CUPTI ({})", e.what()));
      return make_event_timer(exp_);
    }
  }

  // Before anything is allocated: buffers that cannot fit fail at once, naming what they need.
  void check_device_memory() {
    size_t free = 0, total = 0;
    STREAMLAB_CUDA(cudaMemGetInfo(&free, &total));
    int64_t need = memory_need(exp_, true).device;
    if (need <= static_cast<int64_t>(free)) return;
    throw RunError(fmt::format(
        "the experiment's device and managed buffers need {}; device {} has {} free (of {}): "
        "nothing was allocated",
        format_size(need), device_, format_size(static_cast<int64_t>(free)),
        format_size(static_cast<int64_t>(total))));
  }

  void describe_device() {
    cudaDeviceProp p{};
    STREAMLAB_CUDA(cudaGetDeviceProperties(&p, device_));
    device_name_ = p.name;
    description_ = fmt::format("{} (sm_{}{}, {} SMs, {} copy engines, device {})", p.name, p.major,
                               p.minor, p.multiProcessorCount, p.asyncEngineCount, device_);
  }

  void create_streams() {
    int least = 0, greatest = 0;  // CUDA: lower numbers are higher priorities
    STREAMLAB_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    for (const Stream& s : exp_.streams) {
      if (s.legacy || s.per_thread) {
        state_.streams.push_back(s.legacy ? cudaStreamLegacy : cudaStreamPerThread);
        continue;
      }
      int priority = least;  // cudaStreamCreate's default
      if (s.priority) {
        priority = static_cast<int>(std::clamp<int64_t>(*s.priority, greatest, least));
        notes_.push_back(fmt::format(
            "stream '{}': priority {}{} (this device: {} lowest to {} highest)", s.name, priority,
            priority != *s.priority ? fmt::format(", clamped from {}", *s.priority) : "", least,
            greatest));
      }
      streams_.push_back(create_stream(s.non_blocking, priority));
      state_.streams.push_back(streams_.back().get());
    }
  }

  void allocate_and_fill(const Buffer& b) {
    if (b.alloc_op >= 0) {  // an op allocates it, each repetition
      memory_.push_back(Memory(nullptr, free_device));
      state_.buffers.push_back(nullptr);
      return;
    }
    memory_.push_back(allocate(b));
    void* p = memory_.back().get();
    state_.buffers.push_back(p);
    if (host_accessible(b.memory)) {
      fill_initial(b, static_cast<std::byte*>(p));  // also touches every page before timing
    } else if (is_poisoned(b)) {
      STREAMLAB_CUDA(cudaMemset(p, kPoisonByte, static_cast<size_t>(b.bytes)));
    } else {
      std::vector<std::byte> initial(static_cast<size_t>(b.bytes));
      fill_initial(b, initial.data());
      STREAMLAB_CUDA(cudaMemcpy(p, initial.data(), initial.size(), cudaMemcpyHostToDevice));
    }
  }

  // What an op allocated and the op list did not free stays, for the checks, until the next
  // repetition (or the end of the run).
  void release_op_allocations() {
    for (size_t b = 0; b < exp_.buffers.size(); ++b)
      if (exp_.buffers[b].alloc_op >= 0 && state_.buffers[b]) free_op_allocation(b);
  }

  void free_op_allocation(size_t b) noexcept {
    if (exp_.buffers[b].memory == MemoryKind::pinned)
      STREAMLAB_CUDA_NOEXCEPT(cudaFreeHost(state_.buffers[b]));
    else
      STREAMLAB_CUDA_NOEXCEPT(cudaFree(state_.buffers[b]));
    state_.buffers[b] = nullptr;
  }

  // Buffers with an init that ops write start every repetition from their initial contents.
  void keep_initial_contents() {
    std::vector<std::string> names;
    for (int b : buffers_to_restore(exp_)) {
      const Buffer& buf = exp_.buffers[b];
      initial_.push_back({b, std::vector<std::byte>(static_cast<size_t>(buf.bytes))});
      fill_initial(buf, initial_.back().second.data());
      names.push_back(buf.name);
    }
    if (!names.empty())
      notes_.push_back(fmt::format(
          "restored to their init before every repetition, untimed (ops write them): {}",
          fmt::join(names, ", ")));
  }

  void restore_initial_contents() {
    for (const auto& [b, bytes] : initial_) {
      if (host_accessible(exp_.buffers[b].memory))
        std::memcpy(state_.buffers[b], bytes.data(), bytes.size());
      else
        STREAMLAB_CUDA(
            cudaMemcpy(state_.buffers[b], bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
    }
  }

  cudaEvent_t own(UniqueEvent e) {
    user_events_.push_back(std::move(e));
    return user_events_.back().get();
  }

  const Experiment& exp_;
  int device_;
  CudaOptions options_;
  std::string description_;
  std::string device_name_;
  Facts facts_;
  DevicePeaks peaks_;
  CudaState state_;
  // Declaration order is destruction order reversed: memory goes after the streams using it.
  std::vector<Memory> memory_;
  std::vector<UniqueStream> streams_;
  std::vector<UniqueEvent> user_events_;
  std::unique_ptr<DeviceTimer>
      timer_;  // destroyed before the streams: it may own events and streams
  std::unique_ptr<StartGate> gate_;
  std::vector<std::string> notes_;
  uint64_t repetitions_ = 0;
  bool gate_timed_out_ = false;
  bool ends_synchronized_ = false;  // the last op is a deviceSynchronize
  // Progress, read by unfinished() on the time limit's thread.
  std::atomic<bool> ready_{false}, waiting_{false};
  std::atomic<int64_t> calling_{-1};  // the op whose API call the host is in
  std::atomic<size_t> issued_{0};     // ops of this repetition whose calls returned
  std::vector<std::vector<std::byte>> staging_;
  std::vector<std::pair<int, std::vector<std::byte>>> initial_;  // buffer, its initial contents
};

}  // namespace

// The errors CUDA documents as leaving the context unusable, raised by device code.
bool is_device_fault(int cuda_error) {
  switch (static_cast<cudaError_t>(cuda_error)) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
      return true;
    default:
      return false;
  }
}

std::unique_ptr<Backend> make_cuda_backend(const Experiment& exp, int device, CudaOptions options) {
  return std::make_unique<CudaBackend>(exp, device, options);
}

void release_cuda_device(int device) {
  if (cudaSetDevice(device) == cudaSuccess)
    (void)cudaDeviceReset();  // best effort: the context is already broken
}

int cuda_device_count(std::string* why) {
  // Load every kernel when the context is created, so lazy loading never lands in a timed
  // repetition; a value the user set is kept.
  setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  mark_cuda_initialized();
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    if (why) *why = fmt::format("{}: {}", cudaGetErrorName(e), cudaGetErrorString(e));
    return 0;
  }
  if (count == 0 && why) *why = "no CUDA device found";
  return count;
}

}  // namespace streamlab
