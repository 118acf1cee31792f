// Allocation inside the op list: malloc/free (cudaMalloc/cudaFree), mallocHost/freeHost
// (cudaMallocHost/cudaFreeHost) and mallocAsync/freeAsync (stream-ordered, cudaMallocAsync/
// cudaFreeAsync). The buffer is declared as usual; its allocating op gives it memory each
// repetition, and ops may use it only between that op and its free (checked at load).
#include <fmt/format.h>

#include "ops/op_kind.hpp"
#include "runner/context/cuda_check.hpp"
#include "runner/context/cuda_state.hpp"
#include "runner/context/happens_before.hpp"
#include "runner/context/host_state.hpp"
#include "runner/context/load_context.hpp"
#include "runner/core/findings.hpp"

namespace streamlab {
namespace {

constexpr std::string_view kKeys[] = {"buffer"};
constexpr std::string_view kAsyncKeys[] = {"buffer", "stream?"};

int op_index(const MapReader& r) {
  return static_cast<int>(r.ctx.exp.ops.size());
}  // the op being read

// Inside a graph's body an allocation is refused by the capture check (it cannot be captured);
// it must not mark the buffer's lifetime, since the op has no index in `exp.ops`.
bool captured(const MapReader& r) { return r.ctx.capture_depth > 0; }

// The whole buffer: an allocation has no element range.
BufferRange whole_buffer(MapReader& r) {
  int b = r.buffer("buffer");
  return b < 0 ? BufferRange{} : BufferRange{b, 0, r.ctx.exp.buffers[b].count};
}

void parse_alloc(MapReader& r, Op& op, MemoryKind memory) {
  op.dst = whole_buffer(r);
  if (!op.dst.valid() || captured(r)) return;
  Buffer& b = r.ctx.exp.buffers[op.dst.buffer];
  if (b.memory != memory)
    r.ctx.error(r.get("buffer"),
                fmt::format("{} allocates {} memory; buffer '{}' is declared {}", op.kind->name,
                            memory_kind_name(memory), b.name, memory_kind_name(b.memory)));
  if (b.init.kind != InitSpec::Kind::none)
    r.ctx.error(r.get("buffer"),
                fmt::format("buffer '{}' is allocated by an op, so its contents start undefined; "
                            "remove its init (line {}) and fill it with ops",
                            b.name, b.loc.line));
  if (b.alloc_op >= 0) {
    r.ctx.error(r.get("buffer"),
                fmt::format("buffer '{}' is already allocated by op '{}' (line {})", b.name,
                            r.ctx.exp.ops[b.alloc_op].id, r.ctx.exp.ops[b.alloc_op].loc.line));
    return;
  }
  b.alloc_op = op_index(r);
}

// `allocators`: the op kinds whose memory this one may free.
void parse_free(MapReader& r, Op& op, std::initializer_list<std::string_view> allocators) {
  op.dst = whole_buffer(r);
  if (!op.dst.valid() || captured(r)) return;
  Buffer& b = r.ctx.exp.buffers[op.dst.buffer];
  if (b.alloc_op < 0) {
    r.ctx.error(r.get("buffer"),
                fmt::format("{} of buffer '{}', which no earlier op allocates (buffers live for "
                            "the whole run unless an op allocates them)",
                            op.kind->name, b.name));
    return;
  }
  const Op& alloc = r.ctx.exp.ops[b.alloc_op];
  if (b.free_op >= 0) {
    r.ctx.error(r.get("buffer"),
                fmt::format("buffer '{}' is already freed by op '{}' (line {})", b.name,
                            r.ctx.exp.ops[b.free_op].id, r.ctx.exp.ops[b.free_op].loc.line));
    return;
  }
  if (std::find(allocators.begin(), allocators.end(), alloc.kind->name) == allocators.end())
    r.ctx.error(r.get("buffer"),
                fmt::format("{} cannot free buffer '{}': op '{}' (line {}) allocated it with {}; "
                            "free it with {}",
                            op.kind->name, b.name, alloc.id, alloc.loc.line, alloc.kind->name,
                            alloc.kind->name == "mallocHost" ? "freeHost (cudaFreeHost)"
                                                             : "free or freeAsync"));
  b.free_op = op_index(r);
}

void parse_malloc(MapReader& r, Op& op) { parse_alloc(r, op, MemoryKind::device); }
void parse_malloc_host(MapReader& r, Op& op) { parse_alloc(r, op, MemoryKind::pinned); }
void parse_malloc_async(MapReader& r, Op& op) {
  parse_alloc(r, op, MemoryKind::device);
  op.stream = r.stream("stream", false);
}
void parse_free_device(MapReader& r, Op& op) { parse_free(r, op, {"malloc", "mallocAsync"}); }
void parse_free_host(MapReader& r, Op& op) { parse_free(r, op, {"mallocHost"}); }
void parse_free_async(MapReader& r, Op& op) {
  parse_free(r, op, {"malloc", "mallocAsync"});
  op.stream = r.stream("stream", false);
}

size_t bytes_of(const Experiment& exp, const Op& op) {
  return static_cast<size_t>(exp.buffers[op.dst.buffer].bytes);
}

void host_alloc(HostState& s, const Op& op) {
  auto& storage = s.op_allocated[op.dst.buffer];
  storage.reset(new std::byte[bytes_of(s.exp, op)]);
  s.buffers[op.dst.buffer] = storage.get();
}

void host_free(HostState& s, const Op& op) {
  s.op_allocated[op.dst.buffer].reset();
  s.buffers[op.dst.buffer] = nullptr;
}

void* allocated(CudaState& s, const Op& op, void* p) { return s.buffers[op.dst.buffer] = p; }

void cuda_malloc(CudaState& s, const Op& op) {
  void* p = nullptr;
  STREAMLAB_CUDA(cudaMalloc(&p, bytes_of(s.exp, op)));
  allocated(s, op, p);
}
void cuda_malloc_host(CudaState& s, const Op& op) {
  void* p = nullptr;
  STREAMLAB_CUDA(cudaMallocHost(&p, bytes_of(s.exp, op)));
  allocated(s, op, p);
}
void cuda_malloc_async(CudaState& s, const Op& op) {
  void* p = nullptr;
  STREAMLAB_CUDA(cudaMallocAsync(&p, bytes_of(s.exp, op), s.streams[op.stream]));
  allocated(s, op, p);
}
void cuda_free(CudaState& s, const Op& op) {
  STREAMLAB_CUDA(cudaFree(s.buffers[op.dst.buffer]));
  allocated(s, op, nullptr);
}
void cuda_free_host(CudaState& s, const Op& op) {
  STREAMLAB_CUDA(cudaFreeHost(s.buffers[op.dst.buffer]));
  allocated(s, op, nullptr);
}
void cuda_free_async(CudaState& s, const Op& op) {
  STREAMLAB_CUDA(cudaFreeAsync(s.buffers[op.dst.buffer], s.streams[op.stream]));
  allocated(s, op, nullptr);
}

std::string describe_alloc(const Experiment& exp, const Op& op) {
  return fmt::format("{} ({})", exp.buffers[op.dst.buffer].name,
                     format_bytes(exp.buffers[op.dst.buffer].bytes));
}

// I4: cudaFree does an implicit cudaDeviceSynchronize.
void order_free(HappensBefore& hb, const Experiment&, const Op&) { hb.sync_device(); }

// Allocation calls that block the host or the device (docs/semantics.md: I2, I4):
// a note, since an experiment may measure exactly that.
void lint_blocking_alloc(const Experiment& exp, const Op& op, int index, Findings& out) {
  const std::string& name = exp.buffers[op.dst.buffer].name;
  std::string what, fix;
  if (op.kind->name == "malloc") {
    what = "cudaMalloc may synchronize the device, and costs host time in every repetition";
    fix = fmt::format(
        "declare '{}' without an allocating op (it lives for the whole run), or use mallocAsync",
        name);
  } else if (op.kind->name == "free") {
    what = "cudaFree waits for all work on the device (an implicit deviceSynchronize)";
    fix = fmt::format("use freeAsync, or let '{}' live for the whole run", name);
  } else if (op.kind->name == "mallocHost") {
    what =
        "cudaMallocHost pins pages: tens of ms of host time in every repetition, a gap in the "
        "launches";
    fix = fmt::format("declare '{}' pinned without an allocating op (it lives for the whole run)",
                      name);
  } else {
    what = "cudaFreeHost may wait for the device";
    fix = fmt::format("let '{}' live for the whole run", name);
  }
  Finding& f = out.add(
      "blocking-alloc", op.loc,
      fmt::format("op '{}' ({} of '{}') inside the op list: {}", op.id, op.kind->name, name, what));
  f.fix = fix;
  f.ops = {index};
}

}  // namespace

// cudaMalloc and cudaMallocHost may synchronize the device; cudaFree and cudaFreeHost do
// (docs/semantics.md, I4): the host waits, so the start gate opens before them.
extern const OpKind kMalloc = {
    .name = "malloc",
    .summary = "cudaMalloc: allocate the (device) buffer here; it exists until its free",
    .keys = kKeys,
    .parse = parse_malloc,
    .run_host = host_alloc,
    .run_cuda = cuda_malloc,
    .describe = describe_alloc,
    .blocks_host = always_blocks,
    .bytes = no_bytes,
    .accesses = no_accesses,
    .order = order_nothing,
    .lint = lint_blocking_alloc,
    .uncapturable =
        "cudaMalloc is prohibited while a stream captures in global mode "
        "(cudaErrorStreamCaptureUnsupported)",
};
extern const OpKind kFree = {
    .name = "free",
    .summary =
        "cudaFree: free a buffer malloc or mallocAsync allocated; waits for the whole device",
    .keys = kKeys,
    .parse = parse_free_device,
    .run_host = host_free,
    .run_cuda = cuda_free,
    .describe = describe_alloc,
    .blocks_host = always_blocks,
    .bytes = no_bytes,
    .accesses = no_accesses,
    .order = order_free,
    .lint = lint_blocking_alloc,
    .uncapturable =
        "cudaFree is prohibited while a stream captures in global mode "
        "(cudaErrorStreamCaptureUnsupported)",
};
extern const OpKind kMallocHost = {
    .name = "mallocHost",
    .summary = "cudaMallocHost: allocate the (pinned) buffer here; it exists until freeHost",
    .keys = kKeys,
    .parse = parse_malloc_host,
    .run_host = host_alloc,
    .run_cuda = cuda_malloc_host,
    .describe = describe_alloc,
    .blocks_host = always_blocks,
    .bytes = no_bytes,
    .accesses = no_accesses,
    .order = order_nothing,
    .lint = lint_blocking_alloc,
    .uncapturable =
        "cudaMallocHost is prohibited while a stream captures in global mode "
        "(cudaErrorStreamCaptureUnsupported)",
};
extern const OpKind kFreeHost = {
    .name = "freeHost",
    .summary = "cudaFreeHost: free a buffer mallocHost allocated; waits for the whole device",
    .keys = kKeys,
    .parse = parse_free_host,
    .run_host = host_free,
    .run_cuda = cuda_free_host,
    .describe = describe_alloc,
    .blocks_host = always_blocks,
    .bytes = no_bytes,
    .accesses = no_accesses,
    .order = order_nothing,
    .lint = lint_blocking_alloc,
    .uncapturable =
        "cudaFreeHost is prohibited while a stream captures in global mode "
        "(cudaErrorStreamCaptureUnsupported)",
};
extern const OpKind kMallocAsync = {
    .name = "mallocAsync",
    .summary =
        "cudaMallocAsync: allocate the (device) buffer in stream order; the host does not wait",
    .keys = kAsyncKeys,
    .parse = parse_malloc_async,
    .run_host = host_alloc,
    .run_cuda = cuda_malloc_async,
    .describe = describe_alloc,
    .blocks_host = never_blocks,
    .bytes = no_bytes,
    .accesses = no_accesses,
    .order = order_in_stream,
    .uncapturable =
        "streamlab does not capture stream-ordered allocations (graph memory nodes): allocate "
        "before the graph",
};
extern const OpKind kFreeAsync = {
    .name = "freeAsync",
    .summary =
        "cudaFreeAsync: free the buffer in stream order, once the stream's earlier work is done",
    .keys = kAsyncKeys,
    .parse = parse_free_async,
    .run_host = host_free,
    .run_cuda = cuda_free_async,
    .describe = describe_alloc,
    .blocks_host = never_blocks,
    .bytes = no_bytes,
    .accesses = no_accesses,
    .order = order_in_stream,
    .uncapturable =
        "streamlab does not capture stream-ordered allocations (graph memory nodes): free after "
        "the graph",
};

}  // namespace streamlab
