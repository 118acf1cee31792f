// The host backend: every op performed on host memory in issue order, kernels through their host
// references. It validates experiments where there is no GPU; its timings are host times of the
// emulation and are never reported as GPU times.
#include <atomic>
#include <chrono>
#include <cstdlib>

#include <fmt/format.h>

#include "ops/op_kind.hpp"
#include "runner/context/buffer_init.hpp"
#include "runner/context/host_state.hpp"
#include "runner/execute/backend.hpp"
#include "runner/execute/memory_budget.hpp"
#include "runner/execute/nvtx.hpp"

namespace streamlab {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

class HostBackend final : public Backend {
 public:
  explicit HostBackend(const Experiment& exp) : exp_(exp), state_{exp, {}, {}, {}} {}

  std::string name() const override { return "host"; }
  std::string description() const override { return "host emulation (no GPU timing)"; }
  Facts device_facts() const override {
    return {{"backend", "host: the ops performed on host memory, no device used"}};
  }
  bool measures_device_time() const override { return false; }
  std::string timer() const override { return "none"; }
  std::string timer_description() const override {
    return "none: the host backend measures no GPU time";
  }
  std::vector<std::string> notes() const override { return notes_; }
  void finish(std::vector<RepetitionSample>&) override {}

  void prepare() override {
    check_host_memory(exp_, false);
    for (const Buffer& b : exp_.buffers) {
      if (b.alloc_op >= 0) {  // an op allocates it
        storage_.emplace_back();
        state_.buffers.push_back(nullptr);
        continue;
      }
      try {
        storage_.emplace_back(new std::byte[static_cast<size_t>(b.bytes)]);
      } catch (const std::bad_alloc&) {
        throw RunError(fmt::format("buffer '{}' ({}:{}:{}, {} bytes): out of host memory", b.name,
                                   b.loc.file, b.loc.line, b.loc.col, b.bytes));
      }
      fill_initial(b, storage_.back().get());
      state_.buffers.push_back(storage_.back().get());
    }
    restored_ = buffers_to_restore(exp_);
    unavailable_.assign(exp_.buffers.size(), "");
    state_.answers.assign(exp_.ops.size(), -1);
    state_.op_allocated.resize(exp_.buffers.size());
  }

  RepetitionSample run_repetition() override {
    RepetitionSample rep;
    rep.number = ++repetitions_;
    if (rep.number > 1)  // the first repetition starts from prepare's contents
      for (int b : restored_) fill_initial(exp_.buffers[b], state_.buffers[b]);
    auto t0 = Clock::now();
    for (const Op& op : exp_.ops) {
      OpSample s;
      NvtxRange range(op.id);
      s.issue_ms = ms_since(t0);
      performing_ = static_cast<int64_t>(op_index(exp_, op));
      perform(op, rep.number == 1);
      performing_ = -1;
      s.return_ms = ms_since(t0);
      s.answer = state_.answers[op_index(exp_, op)];
      rep.ops.push_back(s);
    }
    rep.host_span_ms = ms_since(t0);
    return rep;
  }

  std::string unfinished() const override {
    int64_t i = performing_;
    if (i < 0) return "";
    const Op& op = exp_.ops[static_cast<size_t>(i)];
    return fmt::format("the host backend was performing op '{}' ({}:{}:{}), a {}", op.id,
                       op.loc.file, op.loc.line, op.loc.col, op.kind->name);
  }

  std::string activity() const override {
    int64_t i = performing_;
    if (i < 0) return "";
    const Op& op = exp_.ops[static_cast<size_t>(i)];
    return fmt::format("performing op '{}' ({}, line {})", op.id, op.kind->name, op.loc.line);
  }

  std::span<const std::byte> contents(int buffer) override {
    if (!unavailable_[buffer].empty())
      throw ContentsUnavailable(
          fmt::format("buffer '{}' is not what the experiment computes on a GPU: {}",
                      exp_.buffers[buffer].name, unavailable_[buffer]));
    if (!state_.buffers[buffer])
      throw RunError(
          fmt::format("buffer '{}' has no contents at the end of the run: an op freed it",
                      exp_.buffers[buffer].name));
    return {state_.buffers[buffer], static_cast<size_t>(exp_.buffers[buffer].bytes)};
  }

 private:
  // Runs the op, unless it cannot run here (a user kernel) or reads what such an op would have
  // written: then it is skipped, what it writes is marked unavailable, and a note says why. Never
  // pretends a skipped op ran.
  void perform(const Op& op, bool first_repetition) {
    std::string why;
    for (const Access& a : op.kind->accesses(exp_, op))
      if (!a.write && !unavailable_[a.range.buffer].empty()) {
        why = fmt::format("it reads '{}', left unwritten by {}", exp_.buffers[a.range.buffer].name,
                          unavailable_[a.range.buffer]);
        break;
      }
    if (why.empty()) {
      try {
        op.kind->run_host(state_, op);
        return;
      } catch (const HostUnsupported& e) {
        why = e.what();
      }
    }
    for (const Access& a : op.kind->accesses(exp_, op))
      if (a.write)
        unavailable_[a.range.buffer] =
            fmt::format("op '{}' (line {}), which the host backend skipped", op.id, op.loc.line);
    if (first_repetition)
      notes_.push_back(
          fmt::format("host backend: skipped op '{}' (line {}): {}", op.id, op.loc.line, why));
  }

  const Experiment& exp_;
  HostState state_;
  std::vector<std::string> notes_;
  std::vector<std::string>
      unavailable_;  // per buffer: why its contents are not computed (empty: they are)
  std::vector<std::unique_ptr<std::byte[]>> storage_;
  uint64_t repetitions_ = 0;
  std::vector<int> restored_;            // buffers_to_restore()
  std::atomic<int64_t> performing_{-1};  // the op being performed, for the time limit's message
};

}  // namespace

std::unique_ptr<Backend> make_host_backend(const Experiment& exp) {
  return std::make_unique<HostBackend>(exp);
}

}  // namespace streamlab
