#pragma once
// The experiment IR: what load produces and everything downstream reads. Flat and resolved:
// names are indices, expressions are values, every node keeps its file:line:col.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runner/core/source_loc.hpp"

namespace streamlab {

struct OpKind;
struct ExpectNode;  // expect.hpp

// float16 (IEEE binary16) and bfloat16: 16-bit floats for cuBLAS and cuDNN (half.hpp).
enum class ElemType { int32, uint32, int64, float32, float64, uint8, float16, bfloat16 };
// device: cudaMalloc; pinned: cudaMallocHost; pageable: malloc; managed: cudaMallocManaged (one
// pointer for host and device, pages migrate on touch); mapped: cudaHostAlloc(cudaHostAllocMapped),
// pinned host memory that kernels read and write over the bus (zero-copy).
enum class MemoryKind { device, pinned, pageable, managed, mapped };

std::string_view elem_type_name(ElemType t);
size_t elem_size(ElemType t);
bool is_float(ElemType t);
std::string_view memory_kind_name(MemoryKind m);
bool is_host_memory(MemoryKind m);     // pinned, pageable, mapped: lives in host RAM
bool device_accessible(MemoryKind m);  // kernels and memsets may use it: device, managed, mapped
bool host_accessible(MemoryKind m);    // the host may read and write it directly: all but device

// How a buffer's contents start. Buffers with no init are poisoned instead (see buffer_init.hpp).
struct InitSpec {
  enum class Kind { none, zeros, value, sequence, random } kind = Kind::none;
  double value = 0;   // value: every element; sequence: the first element
  double step = 1;    // sequence: difference between neighbours
  uint64_t seed = 0;  // random
};

struct Buffer {
  std::string name;
  SourceLoc loc;
  ElemType type = ElemType::int32;
  MemoryKind memory = MemoryKind::device;
  std::vector<int64_t> shape;  // as written ([count] when given as `count`)
  int64_t count = 0;           // elements
  int64_t bytes = 0;
  InitSpec init;
  // Buffers whose lifetime is part of the op list: the op that allocates it (malloc, mallocHost,
  // mallocAsync) and the one that frees it; -1 when it lives for the whole run.
  int alloc_op = -1, free_op = -1;
};

// Index 0 is always the legacy default stream (reserved name `legacy`, CUDA's stream 0). The
// per-thread default stream (reserved name `per_thread`, cudaStreamPerThread) joins the list when
// an op first names it.
struct Stream {
  std::string name;
  SourceLoc loc;
  bool legacy = false;
  bool non_blocking = false;  // cudaStreamNonBlocking: no implicit sync with the legacy stream
  bool per_thread = false;
  std::optional<int64_t> priority = std::nullopt;  // as written; the device clamps it to its range
};
inline constexpr int kLegacyStream = 0;
inline constexpr std::string_view kLegacyStreamName = "legacy";
inline constexpr std::string_view kPerThreadStreamName = "per_thread";

struct Event {
  std::string name;
  SourceLoc loc;
  bool blocking_sync =
      false;  // cudaEventBlockingSync: a waiting host thread sleeps instead of spinning
  bool disable_timing = false;  // cudaEventDisableTiming: cheaper; no elapsed times
};

// The elements an op touches in a buffer: the whole buffer unless the YAML says
// {buffer: NAME, offset: E, count: E}.
struct BufferRange {
  int buffer = -1;
  int64_t offset = 0, count = 0;  // in elements
  bool valid() const { return buffer >= 0; }
};

// One bound kernel argument, in the kernel signature's parameter order.
struct KernelArg {
  BufferRange range;   // buffer parameters (range.buffer is -1 for the others)
  int64_t scalar = 0;  // integer parameters
  double real = 0;     // real parameters
};

// `allow: [code, ...]` on an op or a check: diagnostics of `streamlab check` (findings.hpp) that
// the experiment shows on purpose.
struct Allow {
  std::vector<std::string> codes;
  SourceLoc loc;
};

// One loop around an op, as load expanded it: which expansion of which `loop`, and the value of its
// variable there. Fixes that `streamlab check` prints for an op in a loop speak of the variable.
struct LoopLevel {
  int instance = 0;  // each expansion of a `loop` item has its own number
  std::string var;
  int64_t value = 0, count = 0;
  std::string count_text;  // the count as written
  int line = 0, col = 0;   // where its `loop` key is
};
using LoopStack = std::shared_ptr<const std::vector<LoopLevel>>;  // innermost last; null: none

struct Op {
  const OpKind* kind = nullptr;
  SourceLoc loc;
  std::string id;   // the user's `id`, or "<kind>#<n>" (n = 1-based op number)
  int stream = -1;  // stream its device work runs in; -1 for host-only ops
  bool device_work =
      false;  // has a device interval worth timing (copies, memsets, kernels, host functions)
  bool self_timed =
      false;             // the backend measures its interval itself (host functions), not the timer
  BufferRange dst, src;  // copies (dst, src) and memsets (dst)
  int event = -1;        // eventRecord, streamWaitEvent, eventSynchronize
  int64_t value = 0;     // memset byte value; launchHostFunc: microseconds to sleep
  int host_fn = -1;      // launchHostFunc: index into host_functions()
  int kernel = -1;       // launch: index into the kernel table
  std::array<int64_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  int64_t shared_bytes = 0;
  std::vector<KernelArg>
      args;  // launch: the kernel's parameters; gemm, convolutionForward: their operands
  BufferRange
      workspace;  // gemm, convolutionForward: the device memory the library may use (or none)
  int algo = -1;  // convolutionForward: the algorithm named (-1: chosen at run time)
  int comm = -1;  // NCCL collectives: the communicator
  std::vector<int> rank_streams;  // NCCL collectives: the stream of each rank, in rank order
                                  // (stream = the first)
  int reduce_op = 0;              // NCCL reductions: sum, prod, max, min, avg (ncclRedOp_t's order)
  int64_t root = 0;               // broadcast: the rank whose send buffer every rank receives
  int64_t replays =
      1;  // graph: launches of the captured graph; launch: `times`, launches back to back
  std::vector<Op> body;  // graph: the ops captured, in issue order
  Allow allow;
  LoopStack loops;          // the loops the op was expanded from (shared by an iteration's ops)
  std::string stream_text;  // `stream:` as written ("s[i]"); empty when not given
};

// Who sees a graded item's result (Gradescope's visibilities): the student at once, only the
// instructor, or the student once the due date has passed.
enum class Visibility { visible, hidden, after_due_date };
std::string_view visibility_name(Visibility v);

// A check or an expectation as a graded item: `id`, `name`, `points` and `visibility` in the YAML.
struct ItemMeta {
  std::string id;    // `id:`; empty: reports number the item by its place
  std::string name;  // `name:`; empty: reports show what the item tests
  double points = 1;
  bool points_given = false;  // `points:` was written: the experiment is graded
  Visibility visibility = Visibility::visible;
};

struct CheckSpec {
  std::string kind;  // transpose | equal | close | value | checksum | reference
  SourceLoc loc;
  BufferRange a, b;  // transpose: input, output; equal, close: a, b; value, checksum: a
  double value = 0;  // value: every element's; checksum: the expected sum
  double rtol = 0,
         atol = 0;  // close, checksum, reference: |x - expected| <= atol + rtol * |expected|
  int op = -1;      // reference: the launch whose kernel's host reference is applied
  // reference with `kernel:`: a call of a built-in kernel that no op makes, on the buffers it
  // names (op is -1 then).
  std::shared_ptr<const Op> call;
  // reference, per kernel parameter: the range whose initial contents it computes on, and for
  // the parameters it writes, the range its result is compared with at the end.
  std::vector<BufferRange> args, outputs;
  // `expect: mismatch`: the check shows a wrong result (a race): it passes when the contents do
  // not match. Only GPU results can show one; on the host backend it is not evaluated.
  bool expect_mismatch = false;
  Allow allow;
  ItemMeta item;
};

// One item of `expect:`, parsed at load. Three forms:
// - a condition over the run's medians ("overlap(a, b) > 0"), which holds or fails;
// - a measure with partial credit: full points at or past `full_at`, none at or past `zero_at`,
//   linear between (lower is better when full_at < zero_at); with `relative: PEER` the measure is
//   divided by the same measure of a peer experiment that `streamlab grade` runs beside it;
// - `no_diagnostics: [code, ...]`: holds when `streamlab check` finds none of them (acknowledged
//   or not: an `allow` of the experiment does not hide them from a grader).
struct Expectation {
  enum class Form { condition, measure, no_diagnostics };
  Form form = Form::condition;
  std::string text;  // the condition or the measure, as written
  SourceLoc loc;
  std::shared_ptr<const ExpectNode> root;  // the condition or the measure
  std::shared_ptr<const ExpectNode> full_at, zero_at;
  std::string full_text, zero_text;
  std::string relative;  // the peer the measure is divided by; empty: none
  // The values of the loops\' variables around a relative measure (`duration(k[j])` in a loop
  // over j), for parsing it again against the peer.
  std::vector<std::pair<std::string, int64_t>> loop_values;
  std::vector<std::string> codes;  // no_diagnostics
  bool uses_time = false;          // depends on GPU times (not evaluated on the host backend)
  ItemMeta item;
};

// A kernel given as CUDA source in the experiment (`kernels:`), compiled by NVRTC when it runs.
// Its declared parameters type-check launches and tell the analyzer what it reads and writes.
struct UserKernelParam {
  std::string name;
  int kind = 0;                       // a ParamKind (ops/kernels/kernel.hpp)
  ElemType type = ElemType::float32;  // the element type of a buffer; the C type of a value
};
struct UserKernel {
  std::string name;  // the name launches use, and the __global__ function's name
  SourceLoc loc;
  std::string source;       // the CUDA C++ text
  std::string source_file;  // where the text is: the experiment file (inline) or the file beside it
  int first_line = 1;       // the line of that file holding the text's first line
  std::vector<UserKernelParam> params;
  // The files it includes, as load read and vetted them (path in the experiment's folder, text):
  // compiling uses these texts, so what `check` vetted is what NVRTC compiles.
  std::vector<std::pair<std::string, std::string>> headers;
};

// An NCCL communicator (`communicators:`): one rank per device listed, all driven by this process
// (ncclCommInitAll).
struct Communicator {
  std::string name;
  SourceLoc loc;
  std::vector<int64_t> devices;
};

// A sweep (`sweep:`, or --sweep on the command line): the experiment run once per point of the
// cartesian product of its axes, each point a set of param values.
struct SweepAxis {
  std::string name;  // a param of the experiment
  std::vector<int64_t> values;
  SourceLoc loc;
};
// A number plotted against the swept params beside the span: an expectation's measure, such as
// `duration(k[0])` or `bandwidth(h2d)`.
struct SweepPlot {
  std::string text;
  SourceLoc loc;
  std::shared_ptr<const ExpectNode> root;
};
struct SweepSpec {
  std::vector<SweepAxis> axes;  // first axis outermost
  std::vector<SweepPlot> plots;
  bool empty() const { return axes.empty(); }
};
using SweepPoint = std::vector<std::pair<std::string, int64_t>>;  // param -> value, axis order
// Every point of the product, the last axis varying fastest.
std::vector<SweepPoint> sweep_points(const std::vector<SweepAxis>& axes);

struct Experiment {
  std::string name, description;
  std::string file;    // as given on the command line
  std::string source;  // the file's text, for diagnostics after load
  std::vector<std::pair<std::string, int64_t>> params;   // in declaration order, after --set
  std::vector<std::pair<std::string, std::string>> env;  // `env:`, applied before CUDA starts
  int64_t repeat = 10, warmup = 2;
  // `gate: false`: no start gate (start_gate.hpp); for experiments that measure what issuing costs.
  bool gate = true;
  // `timer: cupti | events | none`: the device timer the experiment is measured with when the
  // command line leaves --timer at auto (empty: CUPTI where it loads, else events).
  std::string timer;
  // `timeout: S`: the time limit of a run, in seconds, when the command line gives none (0: unset).
  int64_t timeout_s = 0;
  std::vector<Stream> streams;
  std::vector<Buffer> buffers;
  std::vector<Event> events;
  std::vector<Op> ops;
  std::vector<Communicator> communicators;
  std::vector<UserKernel> kernels;  // `kernels:`; a launch's op.kernel >= kUserKernelBase names one
  std::vector<CheckSpec> checks;
  std::vector<Expectation> expectations;
  SweepSpec sweep;  // `sweep:`; empty: one run
};

// Launches of user kernels have op.kernel = kUserKernelBase + index into Experiment::kernels.
inline constexpr int kUserKernelBase = 1 << 20;

// Every range a check reads (a, b, and a reference's inputs and outputs), valid or not.
std::vector<BufferRange> check_ranges(const CheckSpec& c);
// Whether the range is its whole buffer.
bool is_whole(const Experiment& exp, const BufferRange& r);
// The position of `op` in exp.ops (op refers to an element of it).
inline size_t op_index(const Experiment& exp, const Op& op) {
  return static_cast<size_t>(&op - exp.ops.data());
}
// Byte offset and byte size of a range in its buffer.
int64_t range_offset_bytes(const Experiment& exp, const BufferRange& r);
int64_t range_bytes(const Experiment& exp, const BufferRange& r);
// "h" for a whole buffer, "h[256:512]" (elements, end exclusive) for part of one.
std::string range_name(const Experiment& exp, const BufferRange& r);
// "4 MiB", "1.5 KiB", "12 B".
std::string format_bytes(int64_t bytes);
// "buffer 'h'" or "range 'h[256:512]'", for messages.
std::string range_title(const Experiment& exp, const BufferRange& r);

}  // namespace streamlab
