// The CUPTI timer: activity records of every kernel, copy and memset, with timestamps on the host's
// steady clock (a timestamp callback), joined to the ops through external correlation ids pushed
// around each op's API call. libcupti is loaded at run time, so the program runs where it is
// missing (the timer then says so) and nothing is traced unless asked.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include <cupti.h>
#include <fmt/format.h>

#include "runner/context/device_timer.hpp"
#include "runner/context/library.hpp"

namespace streamlab {
namespace {

// The CUPTI entry points streamlab uses, resolved from the library found first.
struct CuptiApi {
  std::string path;
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityRegisterTimestampCallback) register_timestamp = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityDisable) disable = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&cuptiActivityPushExternalCorrelationId) push_id = nullptr;
  decltype(&cuptiActivityPopExternalCorrelationId) pop_id = nullptr;
  decltype(&cuptiGetResultString) result_string = nullptr;
  decltype(&cuptiGetGraphNodeId) graph_node_id = nullptr;
};

const CuptiApi& cupti_api() {
  static CuptiApi api = [] {
    const SharedLibrary* lib = nullptr;
    try {
      lib = &load_library({"CUPTI",
                           "libcupti.so.13",
                           "STREAMLAB_CUPTI",
                           {"extras/CUPTI/lib64", "lib64", "lib", "targets/x86_64-linux/lib"}});
    } catch (const RunError& e) {
      throw RunError(fmt::format("--timer cupti: {}, or use --timer events", e.what()));
    }
    CuptiApi a;
    a.path = lib->path();
    lib->resolve(a.register_callbacks, "cuptiActivityRegisterCallbacks");
    lib->resolve(a.register_timestamp, "cuptiActivityRegisterTimestampCallback");
    lib->resolve(a.enable, "cuptiActivityEnable");
    lib->resolve(a.disable, "cuptiActivityDisable");
    lib->resolve(a.flush_all, "cuptiActivityFlushAll");
    lib->resolve(a.next_record, "cuptiActivityGetNextRecord");
    lib->resolve(a.push_id, "cuptiActivityPushExternalCorrelationId");
    lib->resolve(a.pop_id, "cuptiActivityPopExternalCorrelationId");
    lib->resolve(a.result_string, "cuptiGetResultString");
    lib->resolve(a.graph_node_id, "cuptiGetGraphNodeId");
    return a;
  }();
  return api;
}

void check(CUptiResult r, const char* call) {
  if (r == CUPTI_SUCCESS) return;
  const char* text = "unknown error";
  cupti_api().result_string(r, &text);
  // Only one client may trace a process: a tool already attached (compute-sanitizer, Nsight
  // Systems or Compute) holds CUPTI.
  std::string_view why =
      r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
          ? " (another tool traces this process, such as compute-sanitizer or Nsight)"
          : "";
  throw RunError(fmt::format("CUPTI: {} failed: {}{}", call, text, why));
}

uint64_t steady_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(HostClock::now().time_since_epoch())
          .count());
}

// Where CUPTI's callbacks (plain functions, called on CUPTI's thread or at a flush) leave records.
// Buffers are recycled: a fresh one would fault its pages in during the next timed repetition.
struct Collector {
  std::mutex mutex;
  std::vector<DeviceActivity> activities;
  std::vector<Correlation> correlations;
  std::vector<uint8_t*> free_buffers;
};
Collector& collector() {
  static Collector c;
  return c;
}

constexpr size_t kBufferBytes = 8 << 20;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  Collector& c = collector();
  {
    std::lock_guard lock(c.mutex);
    *buffer = nullptr;
    if (!c.free_buffers.empty()) *buffer = c.free_buffers.back(), c.free_buffers.pop_back();
  }
  if (!*buffer) *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

// Kernel, copy and memset records share the fields streamlab reads, at different offsets.
template <class Record>
void take_activity(const CUpti_Activity* r, Collector& c) {
  auto* a = reinterpret_cast<const Record*>(r);
  c.activities.push_back({a->correlationId, a->start, a->end, a->graphNodeId});
}

void take_record(const CUpti_Activity* r, Collector& c) {
  switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      take_activity<CUpti_ActivityKernel10>(r, c);
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      take_activity<CUpti_ActivityMemcpy6>(r, c);
      break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      take_activity<CUpti_ActivityMemset4>(r, c);
      break;
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(r);
      c.correlations.push_back({e->correlationId, e->externalId});
      break;
    }
    default:
      break;
  }
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  Collector& c = collector();
  std::lock_guard lock(c.mutex);
  CUpti_Activity* record = nullptr;
  while (cupti_api().next_record(buffer, valid, &record) == CUPTI_SUCCESS) take_record(record, c);
  c.free_buffers.push_back(buffer);
}

// RUNTIME and DRIVER are needed although their records are not used: CUPTI emits an external
// correlation record only before an API activity record (cuptiActivityPushExternalCorrelationId),
// and libraries launch through either API (cuBLAS's half-precision kernels through the driver's).
constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                         CUPTI_ACTIVITY_KIND_MEMCPY,
                                         CUPTI_ACTIVITY_KIND_MEMSET,
                                         CUPTI_ACTIVITY_KIND_RUNTIME,
                                         CUPTI_ACTIVITY_KIND_DRIVER,
                                         CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};

class CuptiTimer final : public DeviceTimer {
 public:
  CuptiTimer() {
    const CuptiApi& api = cupti_api();
    // Once per process, and the timestamp callback before any activity is ever enabled.
    static const bool registered = [&] {
      check(api.register_timestamp(steady_ns), "cuptiActivityRegisterTimestampCallback");
      check(api.register_callbacks(buffer_requested, buffer_completed),
            "cuptiActivityRegisterCallbacks");
      return true;
    }();
    static_cast<void>(registered);
    prefault_buffers();
    for (auto kind : kKinds) check(api.enable(kind), "cuptiActivityEnable");
  }

  ~CuptiTimer() override {
    const CuptiApi& api = cupti_api();
    for (auto kind : kKinds) api.disable(kind);
    api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    std::lock_guard lock(collector().mutex);
    collector().activities.clear();
    collector().correlations.clear();
  }

  // Buffers whose pages are already faulted in, so CUPTI taking one costs no page faults in a
  // timed repetition.
  static void prefault_buffers() {
    Collector& c = collector();
    std::lock_guard lock(c.mutex);
    while (c.free_buffers.size() < 4) {
      auto* b = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
      if (!b) break;
      std::memset(b, 0, kBufferBytes);
      c.free_buffers.push_back(b);
    }
  }

  std::string name() const override { return "cupti"; }
  std::string description() const override {
    return "CUPTI activity records (kernel, copy and memset execution), on the host clock; from " +
           cupti_api().path;
  }

  void begin_repetition(uint64_t number, HostClock::time_point t0) override {
    repetition_ = number;
    t0_ns_of_[number] = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(t0.time_since_epoch()).count());
  }
  void before_op(size_t op, cudaStream_t) override {
    check(
        cupti_api().push_id(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, activity_key(repetition_, op)),
        "cuptiActivityPushExternalCorrelationId");
  }
  void after_op(size_t, cudaStream_t) override {
    uint64_t last = 0;
    check(cupti_api().pop_id(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last),
          "cuptiActivityPopExternalCorrelationId");
  }

  // Records are collected at the end of the run: a flush per repetition cost the next
  // repetition's first call about a millisecond on an H200 while CUPTI rebuilt its buffers.
  void end_repetition(RepetitionSample&) override {}

  void finish(std::vector<RepetitionSample>& reps) override {
    check(cupti_api().flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
    Collector& c = collector();
    std::lock_guard lock(c.mutex);
    for (auto& rep : reps)
      assign_intervals(c.activities, c.correlations, rep.number, t0_ns_of_[rep.number], rep);
    c.activities.clear();
    c.correlations.clear();
  }

 private:
  uint64_t repetition_ = 0;                // the one being issued: keys the correlation ids
  std::map<uint64_t, uint64_t> t0_ns_of_;  // repetition number -> its start, ns
};

}  // namespace

uint64_t cupti_graph_node_id(cudaGraphNode_t node) {
  uint64_t id = 0;
  try {
    if (cupti_api().graph_node_id(reinterpret_cast<CUgraphNode>(node), &id) != CUPTI_SUCCESS)
      return 0;
  } catch (const RunError&) {
    return 0;
  }
  return id;
}

std::unique_ptr<DeviceTimer> make_cupti_timer(const Experiment&) {
  return std::make_unique<CuptiTimer>();
}

}  // namespace streamlab
