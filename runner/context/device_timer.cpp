#include "runner/context/device_timer.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "runner/context/cuda_handles.hpp"

namespace streamlab {
namespace {

class EventTimer final : public DeviceTimer {
 public:
  explicit EventTimer(const Experiment& exp)
      : exp_(exp), base_(create_event()), timing_stream_(create_stream(true)) {
    for (size_t i = 0; i < exp.ops.size(); ++i) {
      start_.push_back(create_event());
      end_.push_back(create_event());
    }
  }
  std::string name() const override { return "events"; }
  std::string description() const override {
    return "CUDA events around each device op, in its own stream (intervals include time queued "
           "behind "
           "other streams)";
  }
  void begin_repetition(uint64_t, HostClock::time_point) override {
    previous_.reset();
    STREAMLAB_CUDA(
        cudaEventRecord(base_.get(), timing_stream_.get()));  // non-blocking: orders nothing
  }
  // An op issued right after a timed op of the same stream, with nothing issued in between, starts
  // when that one's end event completes: the end event is its start event too. Each event a
  // stream records is work its queue carries (on a busy copy engine, a bubble between copies), so
  // a pipeline of copies and kernels records one event per op instead of two.
  void before_op(size_t op, cudaStream_t stream) override {
    if (!timed(op)) return;
    bool follows = previous_ && timed(*previous_) && previous_stream_ == stream;
    start_of_[op] = follows ? end_[*previous_].get() : start_[op].get();
    if (!follows) STREAMLAB_CUDA(cudaEventRecord(start_[op].get(), stream));
  }
  void after_op(size_t op, cudaStream_t stream) override {
    if (timed(op)) STREAMLAB_CUDA(cudaEventRecord(end_[op].get(), stream));
    previous_ = op, previous_stream_ = stream;
  }
  void end_repetition(RepetitionSample& rep) override {
    previous_.reset();
    for (size_t i = 0; i < exp_.ops.size(); ++i) {
      if (!timed(i)) continue;
      float start = 0, end = 0;
      STREAMLAB_CUDA(cudaEventElapsedTime(&start, base_.get(), start_of_[i]));
      STREAMLAB_CUDA(cudaEventElapsedTime(&end, base_.get(), end_[i].get()));
      rep.ops[i].start_ms = start, rep.ops[i].end_ms = end;
    }
    set_device_span(rep);
  }
  std::optional<bool> finished(size_t op) const override {
    if (!timed(op)) return std::nullopt;
    cudaError_t e = cudaEventQuery(end_[op].get());
    if (e == cudaSuccess) return true;
    if (e == cudaErrorNotReady) return false;
    return std::nullopt;
  }

 private:
  // Host functions time themselves (on the host clock; the base event reaches the GPU within
  // microseconds of the repetition's start, so the two line up to that).
  bool timed(size_t op) const { return exp_.ops[op].device_work && !exp_.ops[op].self_timed; }

  const Experiment& exp_;
  UniqueEvent base_;
  UniqueStream timing_stream_;
  std::vector<UniqueEvent> start_, end_;
  std::vector<cudaEvent_t> start_of_ = std::vector<cudaEvent_t>(exp_.ops.size());  // start_ or a previous end_
  std::optional<size_t> previous_;  // the op issued last in this repetition, and its stream
  cudaStream_t previous_stream_ = nullptr;
};

class NoTimer final : public DeviceTimer {
 public:
  std::string name() const override { return "none"; }
  std::string description() const override { return "none (spans on the host clock only)"; }
  void begin_repetition(uint64_t, HostClock::time_point) override {}
  void before_op(size_t, cudaStream_t) override {}
  void after_op(size_t, cudaStream_t) override {}
  void end_repetition(RepetitionSample&) override {}
};

}  // namespace

std::unique_ptr<DeviceTimer> make_event_timer(const Experiment& exp) {
  return std::make_unique<EventTimer>(exp);
}
std::unique_ptr<DeviceTimer> make_no_timer() { return std::make_unique<NoTimer>(); }

void set_device_span(RepetitionSample& rep) {
  double first = INFINITY, last = -INFINITY;
  for (const auto& s : rep.ops)
    if (!std::isnan(s.start_ms))
      first = std::min(first, s.start_ms), last = std::max(last, s.end_ms);
  rep.device_span_ms = first <= last ? last - first : NAN;
}

uint64_t activity_key(uint64_t repetition, size_t op) { return (repetition << 32) | (op + 1); }

void assign_intervals(const std::vector<DeviceActivity>& activities,
                      const std::vector<Correlation>& correlations, uint64_t repetition,
                      uint64_t t0_ns, RepetitionSample& rep) {
  std::unordered_map<uint32_t, size_t> op_of;  // correlation id -> op index, this repetition only
  for (const auto& c : correlations)
    if ((c.external >> 32) == repetition && (c.external & 0xffffffffu) >= 1 &&
        (c.external & 0xffffffffu) <= rep.ops.size())
      op_of[c.correlation] = (c.external & 0xffffffffu) - 1;
  for (const auto& a : activities) {
    auto it = op_of.find(a.correlation);
    if (it == op_of.end() || a.start_ns == 0 || a.end_ns < a.start_ns) continue;
    OpSample& s = rep.ops[it->second];
    double start = (static_cast<double>(a.start_ns) - static_cast<double>(t0_ns)) / 1e6;
    double end = (static_cast<double>(a.end_ns) - static_cast<double>(t0_ns)) / 1e6;
    s.start_ms = std::isnan(s.start_ms) ? start : std::min(s.start_ms, start);
    s.end_ms = std::isnan(s.end_ms) ? end : std::max(s.end_ms, end);
    if (!a.graph_node) continue;
    auto node = std::find_if(s.graph_nodes.begin(), s.graph_nodes.end(),
                             [&](auto& n) { return n.first == a.graph_node; });
    if (node == s.graph_nodes.end())
      s.graph_nodes.emplace_back(a.graph_node, 0.0), node = s.graph_nodes.end() - 1;
    node->second += end - start;
  }
  set_device_span(rep);
}

}  // namespace streamlab
