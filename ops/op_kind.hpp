#pragma once
// The op-kind interface. Each op kind lives in one place (a file under ops/): how it is read
// from YAML, how the host backend performs it, how the cuda backend issues it, and every fact
// the rest of streamlab asks about it. Nothing outside ops/ tests an op by its name: what it
// needs to know is a field here. op_table.cpp lists the kinds; `streamlab list` prints them.
// A kind is defined `extern const OpKind kName = {...}` in its file: without `extern`, a const
// object at namespace scope is private to its file, and the table could not name it.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runner/core/experiment.hpp"
#include "runner/core/profile.hpp"

namespace streamlab {

class MapReader;
struct HostState;
struct CudaState;
class HappensBefore;  // runner/context/happens_before.hpp
class Findings;       // runner/core/findings.hpp

// One buffer range an op reads or writes on the device or the host.
struct Access {
  BufferRange range;
  bool write = false;
  bool host = false;  // made by host code (a host function), not by the device
};

inline std::vector<Access> no_accesses(const Experiment&, const Op&) { return {}; }
// A host call that orders no device work (cudaMalloc, cudaStreamQuery, ...).
inline void order_nothing(HappensBefore&, const Experiment&, const Op&) {}
// Device work (or a marker) in op.stream, which the host does not wait for.
void order_in_stream(HappensBefore& hb, const Experiment& exp, const Op& op);
inline void no_lint(const Experiment&, const Op&, int, Findings&) {}

struct OpSample;  // runner/core/record.hpp

// The part of the device that runs an op's work, for the analyzer's advice on what could overlap
// (docs/semantics.md, O1): a copy engine of each direction, or the SMs.
enum class Engine { none, copy_h2d, copy_d2h, copy_other, compute };
inline Engine no_engine(const Experiment&, const Op&) { return Engine::none; }
inline Engine compute_engine(const Experiment&, const Op&) { return Engine::compute; }

// The timeline model's view of an op's device work (runner/core/profile.hpp, docs/prediction.md).
inline Work no_work(const Experiment&, const Op&, const DeviceProfile&) { return {}; }
// Blocks of `threads` threads using `regs` registers each and `shared` bytes of shared memory: how
// many one SM of the profile's device holds at once (at least 1).
int blocks_per_sm(const DeviceProfile& p, int64_t threads, int regs, int64_t shared);
// Work on the SMs that fills the device and runs at the better of its compute rate (flops at
// `tflops`) and memory rate (bytes at the device's bandwidth): library calls (GEMM, convolution).
Work device_filling_work(const DeviceProfile& p, double flops, double tflops, int64_t bytes);

// What an op does with its `event`, for the analyzer's and the capture check's messages.
enum class EventUse { none, records, stream_waits, host_waits, queries };

inline int64_t one_call(const Experiment&, const Op&) { return 1; }

struct OpKind {
  std::string_view name;                   // the CUDA runtime API name without the `cuda` prefix
  std::string_view summary;                // one line for `streamlab list`
  std::span<const std::string_view> keys;  // YAML keys it accepts besides `id`; `?` marks optional
  // Reads the op's fields into `op` (reporting problems through the reader). Called after
  // `op.kind`, `op.loc` and `op.id` are set.
  void (*parse)(MapReader&, Op&);
  // Performs the op on host memory, in issue order (host backend).
  void (*run_host)(HostState&, const Op&);
  // Issues the op to the CUDA runtime; throws CudaError on failure (cuda backend).
  void (*run_cuda)(CudaState&, const Op&);
  // One line saying what this op does, for reports: "h_in -> d_in (H2D, 4 MiB)".
  std::string (*describe)(const Experiment&, const Op&);
  // Whether the host may wait in the call for device work (docs/semantics.md, H1-H9): no work
  // may be held behind the start gate past such an op, or the host would wait for ever.
  bool (*blocks_host)(const Experiment&, const Op&);
  // Bytes the op moves through device memory, for its bandwidth: a copy counts its bytes once, a
  // kernel the bytes it reads plus those it writes (its signature says how many); 0 when none.
  int64_t (*bytes)(const Experiment&, const Op&);
  // The buffer ranges it reads and writes (restoring initialised buffers between repetitions;
  // races between streams).
  std::vector<Access> (*accesses)(const Experiment&, const Op&) = no_accesses;
  // What the op orders (docs/semantics.md), told to the happens-before model: the stream it runs
  // in, events it records or waits for, what the host waits for before the call returns.
  void (*order)(HappensBefore&, const Experiment&, const Op&) = order_nothing;
  // Pitfalls of the op on its own (`streamlab check`): a pageable async copy, an allocation in
  // the op list. The int is the op's index.
  void (*lint)(const Experiment&, const Op&, int, Findings&) = no_lint;
  // Before the first repetition (cuda backend): what the op makes once and reuses (a library
  // handle, a chosen algorithm, a captured graph, a compiled kernel), kept in
  // CudaState::prepared. nullptr: nothing to prepare. Throws CudaError or RunError.
  void (*prepare_cuda)(CudaState&, const Op&) = nullptr;
  // After the last repetition (cuda backend): what the op turns its timer's records into (a
  // graph: CUPTI's node records into each captured op's time). nullptr: nothing.
  void (*finish_cuda)(const CudaState&, const Op&, OpSample&) = nullptr;
  // Why a stream capture (a graph's body) cannot record it, with the error CUDA gives; empty: it
  // can be captured.
  std::string_view uncapturable = {};
  EventUse event_use = EventUse::none;
  // Its host implementation computes what the GPU should: a `reference` check may name it.
  bool host_reference = false;
  Engine (*engine)(const Experiment&, const Op&) = no_engine;
  // What its device work costs on a device (the timeline model); no_work: a marker, or no device
  // work. Only asked of ops that run in a stream.
  Work (*work)(const Experiment&, const Op&, const DeviceProfile&) = no_work;
  // API calls the op makes (a launch with `times`: one per launch), each costing the profile's
  // host time of the kind.
  int64_t (*calls)(const Experiment&, const Op&) = one_call;
};

// Buffers that have an init and that some op writes: every repetition must start from their
// initial contents, or in-place work (scale, saxpy) would compound from one repetition to the next.
std::vector<int> buffers_to_restore(const Experiment& exp);

inline int64_t no_bytes(const Experiment&, const Op&) { return 0; }
inline int64_t dst_bytes(const Experiment& exp, const Op& op) { return range_bytes(exp, op.dst); }

inline bool never_blocks(const Experiment&, const Op&) { return false; }
inline bool always_blocks(const Experiment&, const Op&) { return true; }

// For ops with nothing to do on the host backend, which runs every op in issue order anyway
// (events, synchronization).
inline void host_no_op(HostState&, const Op&) {}

std::span<const OpKind* const> op_table();
// cudaDeviceSynchronize (ops/sync.cpp). A repetition whose last op is one ends with the device
// idle: the cuda backend adds no synchronize of its own after it, and the timeline model no
// wake-up for one.
extern const OpKind kDeviceSynchronize;
inline bool ends_with_device_synchronize(const Experiment& exp) {
  return !exp.ops.empty() && exp.ops.back().kind == &kDeviceSynchronize;
}
const OpKind* find_op_kind(std::string_view name);

}  // namespace streamlab
