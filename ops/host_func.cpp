// launchHostFunc: a built-in host function queued in a stream (cudaLaunchHostFunc). The CUDA
// driver calls it on its own thread once the stream's earlier work is done; later work in the
// stream waits for it to return. Its interval is measured by the function itself.
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "ops/op_kind.hpp"
#include "runner/context/cuda_check.hpp"
#include "runner/context/cuda_state.hpp"
#include "runner/context/host_state.hpp"
#include "runner/context/load_context.hpp"

namespace streamlab {
namespace {

constexpr std::string_view kHostFuncKeys[] = {"fn", "us?", "buffer?", "stream?"};
constexpr int kSleep = 0, kRead = 2;  // and 1: mark, which only records when it runs
const std::vector<std::string> kFunctions = {"sleep", "mark", "read"};
constexpr int64_t kMaxSleepUs = 10'000'000;  // 10 s, as spin

void parse_read(MapReader& r, Op& op);

void parse_host_func(MapReader& r, Op& op) {
  op.stream = r.stream("stream", false);
  op.device_work = op.self_timed = true;
  op.host_fn =
      static_cast<int>(r.ctx.choice(r.require("fn"), "host function", kFunctions).value_or(0));
  if (op.host_fn == kSleep) {
    auto us = r.ctx.integer(r.require("us"), "us");
    if (us && (*us < 0 || *us > kMaxSleepUs))
      r.ctx.error(r.get("us"), fmt::format("us is {}; expected 0..{} (10 s)", *us, kMaxSleepUs));
    op.value = us.value_or(0);
  } else if (r.has("us")) {
    r.ctx.error(r.get("us"),
                "us: only the sleep function takes a duration; mark records the time it runs");
  }
  if (op.host_fn == kRead)
    parse_read(r, op);
  else if (r.has("buffer"))
    r.ctx.error(r.get("buffer"), "buffer: only the read function reads a buffer");
}

// read: the host function reads `buffer` as a callback consuming a result would, so the analyzer
// knows host code reads it at that point of the stream.
void parse_read(MapReader& r, Op& op) {
  op.dst = r.range("buffer");
  if (!op.dst.valid()) return;
  const Buffer& b = r.ctx.exp.buffers[op.dst.buffer];
  if (!host_accessible(b.memory))
    r.ctx.error(r.get("buffer"),
                fmt::format("host function read needs memory the host can read (pinned, pageable, "
                            "managed or mapped); '{}' is device memory",
                            b.name));
}

// Sums the bytes, volatile so that the read happens.
void read_bytes(const void* p, int64_t bytes) {
  const volatile unsigned char* c = static_cast<const unsigned char*>(p);
  uint64_t sum = 0;
  for (int64_t i = 0; i < bytes; ++i) sum += c[i];
  volatile uint64_t keep = sum;
  (void)keep;
}

void run_function(const Op& op, const void* buffer, int64_t bytes) {
  if (op.host_fn == kSleep) std::this_thread::sleep_for(std::chrono::microseconds(op.value));
  if (op.host_fn == kRead) read_bytes(buffer, bytes);
}

int64_t read_size(const Experiment& exp, const Op& op) {
  return op.host_fn == kRead ? range_bytes(exp, op.dst) : 0;
}

void host_host_func(HostState& s, const Op& op) {
  run_function(op, op.host_fn == kRead ? s.at(op.dst) : nullptr, read_size(s.exp, op));
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// On the driver's thread: no CUDA calls allowed, so it only reads the clock and sleeps.
void CUDART_CB trampoline(void* data) {
  auto* run = static_cast<CudaState::HostFunctionRun*>(data);
  run->start_ms = ms_since(run->state->t0);
  const Op& op = *run->op;
  run_function(op, op.host_fn == kRead ? run->state->at(op.dst) : nullptr,
               read_size(run->state->exp, op));
  run->end_ms = ms_since(run->state->t0);
}

void cuda_host_func(CudaState& s, const Op& op) {
  auto& run = s.host_function_runs[&op];
  run = {&s, &op, 0, 0};
  STREAMLAB_CUDA(cudaLaunchHostFunc(s.streams[op.stream], trampoline, &run));
}

std::string describe_host_func(const Experiment& exp, const Op& op) {
  if (op.host_fn == kRead) return fmt::format("read({})", range_name(exp, op.dst));
  return op.host_fn == kSleep ? fmt::format("sleep({} us)", op.value) : "mark()";
}

std::vector<Access> host_func_accesses(const Experiment&, const Op& op) {
  if (op.host_fn != kRead || !op.dst.valid()) return {};
  return {{op.dst, false, true}};
}

// A host thread of the runtime runs it while its stream waits: sleep's time, or next to none.
Work host_func_work(const Experiment&, const Op& op, const DeviceProfile& p) {
  Work w;
  w.resource = Work::Resource::host;
  w.ms = p.launch_latency_us / 1000 + (op.host_fn == kSleep ? static_cast<double>(op.value) / 1000 : 0);
  return w;
}

}  // namespace

extern const OpKind kLaunchHostFunc = {
    .name = "launchHostFunc",
    .summary =
        "cudaLaunchHostFunc: a host function in a stream (fn: sleep with us, mark, or read with "
        "buffer); the "
        "stream waits for it",
    .keys = kHostFuncKeys,
    .parse = parse_host_func,
    .run_host = host_host_func,
    .run_cuda = cuda_host_func,
    .describe = describe_host_func,
    .blocks_host = never_blocks,
    .bytes = no_bytes,
    .accesses = host_func_accesses,
    .order = order_in_stream,
    .work = host_func_work,
};

}  // namespace streamlab
