// graph: a block of ops captured into a CUDA graph (cudaStreamBeginCapture on its stream, the ops
// issued as written, cudaStreamEndCapture, cudaGraphInstantiate) once before the first repetition,
// then launched `replays` times as one op (cudaGraphLaunch). Work forked to other streams through
// eventRecord + streamWaitEvent joins the capture and must join back (docs/semantics.md, G1-G7).
// What a capture forbids is reported at load where it can be known, with the CUDA error it would
// give; anything else fails at capture with the CUDA error and the captured op's YAML line.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "ops/op_kind.hpp"
#include "runner/context/cuda_check.hpp"
#include "runner/context/cuda_state.hpp"
#include "runner/context/device_timer.hpp"
#include "runner/context/host_state.hpp"
#include "runner/context/load_context.hpp"
#include "runner/core/errors.hpp"
#include "runner/core/limits.hpp"

namespace streamlab {
namespace {

constexpr std::string_view kGraphKeys[] = {"stream", "replays?", "ops"};

// What a capture records, checked op by op as CUDA would: the streams in it (the origin, and
// those forked from it by waiting on an event recorded inside it), and at the end whether every
// forked stream's work is joined back into the origin (cudaErrorStreamCaptureUnjoined otherwise).
class CaptureCheck {
 public:
  CaptureCheck(LoadContext& ctx, const Op& graph)
      : ctx_(ctx),
        graph_(graph),
        n_(ctx.exp.streams.size()),
        known_(n_),
        last_(n_, -1),
        in_(n_, false) {
    in_[graph.stream] = true;
  }

  void op(const Op& b, int i) {
    if (!b.kind->uncapturable.empty()) return error(b, std::string(b.kind->uncapturable));
    if (b.stream < 0) return;
    const Stream& s = ctx_.exp.streams[b.stream];
    if (s.legacy)
      return error(b,
                   "it runs in the legacy default stream, which cannot be captured and whose use "
                   "invalidates "
                   "a capture (cudaErrorStreamCaptureImplicit); use a created stream");
    if (b.kind->event_use == EventUse::stream_waits) return wait(b);
    if (!in_[b.stream])
      return error(
          b, fmt::format(
                 "it runs in stream '{}', which is not part of the capture of '{}': fork it first "
                 "(eventRecord on '{}', then streamWaitEvent on '{}')",
                 s.name, ctx_.exp.streams[graph_.stream].name, ctx_.exp.streams[graph_.stream].name,
                 s.name));
    known(b.stream)[b.stream] = last_[b.stream] = i;
    if (b.kind->event_use == EventUse::records && b.event >= 0)
      recorded_[b.event] = known(b.stream);
  }

  void finish() {
    const int origin = graph_.stream;
    for (size_t t = 0; t < n_; ++t) {
      if (static_cast<int>(t) == origin || !in_[t] || known(origin)[t] >= last_[t]) continue;
      const std::string& name = ctx_.exp.streams[t].name;
      ctx_.diags.error(graph_.loc,
                       fmt::format("graph '{}': stream '{}' joined the capture but its last ops do "
                                   "not join back into '{}' before the capture "
                                   "ends (cudaErrorStreamCaptureUnjoined): end with `- "
                                   "eventRecord: {{event: E, stream: {}}}` and "
                                   "`- streamWaitEvent: {{stream: {}, event: E}}`",
                                   graph_.id, name, ctx_.exp.streams[origin].name, name,
                                   ctx_.exp.streams[origin].name));
    }
  }

 private:
  void wait(const Op& b) {
    if (b.event < 0) return;  // reported by its own load
    auto it = recorded_.find(b.event);
    if (it == recorded_.end())
      return error(
          b, fmt::format(
                 "it waits on event '{}', which no op inside the graph recorded before: a capture "
                 "cannot wait on work outside it (cudaErrorStreamCaptureIsolation); wait before "
                 "the graph op instead",
                 ctx_.exp.events[b.event].name));
    in_[b.stream] = true;  // a fork (or a join, if the stream is already in)
    std::vector<int>& row = known(b.stream);
    for (size_t t = 0; t < n_; ++t) row[t] = std::max(row[t], it->second[t]);
  }

  // A stream's row, made when the capture first reaches the stream: a graph that uses two of a
  // thousand streams costs two rows, not a million entries.
  std::vector<int>& known(int stream) {
    std::vector<int>& row = known_[stream];
    if (row.empty()) row.assign(n_, -1);
    return row;
  }

  void error(const Op& b, const std::string& why) {
    ctx_.diags.error(
        b.loc, fmt::format("op '{}' cannot be captured into graph '{}': {}", b.id, graph_.id, why));
  }

  LoadContext& ctx_;
  const Op& graph_;
  size_t n_;
  std::vector<std::vector<int>>
      known_;              // per stream: per stream, the last body op index it is ordered after
  std::vector<int> last_;  // per stream: its last body op index
  std::vector<bool> in_;   // streams in the capture
  std::map<int, std::vector<int>> recorded_;  // event -> what its record inside the body captured
};

void parse_graph(MapReader& r, Op& op) {
  op.stream = r.stream("stream", true);
  op.device_work = true;
  if (r.has("replays")) {
    op.replays = r.ctx.integer(r.get("replays"), "replays").value_or(1);
    if (op.replays < 1 || op.replays > limits::kRepeatsPerOp)
      r.ctx.error(r.get("replays"),
                  fmt::format("replays: {}; expected 1..{}", op.replays, limits::kRepeatsPerOp));
  }
  YAML::Node ops = r.require("ops");
  if (!ops.IsDefined()) return;
  BlockLevel level(r.ctx, ops);
  if (!level.ok()) return;
  {
    struct Capturing {  // undone on every way out, a limit's exception included
      int& depth;
      ~Capturing() { --depth; }
    } capturing{++r.ctx.capture_depth};
    load_op_list(r.ctx, ops, op.body, op.id + ".");
  }
  if (op.stream < 0 || !ops.IsSequence()) return;
  if (op.body.empty())
    return r.ctx.error(ops, fmt::format("graph '{}' captures no op; expected at least one", op.id));
  CaptureCheck check(r.ctx, op);
  for (size_t i = 0; i < op.body.size(); ++i) check.op(op.body[i], static_cast<int>(i));
  check.finish();
}

void host_graph(HostState& s, const Op& op) {
  for (int64_t r = 0; r < op.replays; ++r)
    for (const Op& b : op.body) b.kind->run_host(s, b);
}

// The captured graph, its executable form, and the nodes each captured op added (for per-node
// times).
struct CapturedGraph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  std::vector<std::vector<cudaGraphNode_t>> nodes_of;  // per body op
  CapturedGraph() = default;
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
  ~CapturedGraph() {
    if (exec) STREAMLAB_CUDA_NOEXCEPT(cudaGraphExecDestroy(exec));
    if (graph) STREAMLAB_CUDA_NOEXCEPT(cudaGraphDestroy(graph));
  }
};

std::vector<cudaGraphNode_t> graph_nodes(cudaGraph_t g) {
  size_t n = 0;
  STREAMLAB_CUDA(cudaGraphGetNodes(g, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  if (n) STREAMLAB_CUDA(cudaGraphGetNodes(g, nodes.data(), &n));
  nodes.resize(n);
  return nodes;
}

// The nodes of the graph being captured that `seen` does not hold yet (added to it).
std::vector<cudaGraphNode_t> new_nodes(cudaStream_t origin, std::set<cudaGraphNode_t>& seen) {
  cudaStreamCaptureStatus status{};
  cudaGraph_t g = nullptr;
  STREAMLAB_CUDA(cudaStreamGetCaptureInfo(origin, &status, nullptr, &g));
  std::vector<cudaGraphNode_t> out;
  if (status != cudaStreamCaptureStatusActive || !g) return out;
  for (cudaGraphNode_t n : graph_nodes(g))
    if (seen.insert(n).second) out.push_back(n);
  return out;
}

// Ends a failed capture so that the stream is usable again, and clears the sticky error.
void abandon_capture(cudaStream_t origin) noexcept {
  cudaGraph_t broken = nullptr;
  if (cudaStreamEndCapture(origin, &broken) == cudaSuccess && broken) cudaGraphDestroy(broken);
  cudaGetLastError();
}

void prepare_graph(CudaState& s, const Op& op) {
  for (const Op& b : op.body)
    if (b.kind->prepare_cuda) b.kind->prepare_cuda(s, b);
  auto captured = std::make_shared<CapturedGraph>();
  cudaStream_t origin = s.streams[op.stream];
  STREAMLAB_CUDA(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal));
  std::set<cudaGraphNode_t> seen;
  for (const Op& b : op.body) {
    try {
      b.kind->run_cuda(s, b);
      captured->nodes_of.push_back(new_nodes(origin, seen));
    } catch (const CudaError& e) {
      abandon_capture(origin);
      throw RunError(fmt::format("captured op '{}' (line {}): {}", b.id, b.loc.line, e.what()));
    }
  }
  cudaError_t end = cudaStreamEndCapture(origin, &captured->graph);
  if (end != cudaSuccess) {
    cudaGetLastError();
    throw RunError(fmt::format("capture of graph '{}' failed: cudaStreamEndCapture: {}: {}", op.id,
                               cudaGetErrorName(end), cudaGetErrorString(end)));
  }
  STREAMLAB_CUDA(cudaGraphInstantiate(&captured->exec, captured->graph, 0));
  STREAMLAB_CUDA(cudaGraphUpload(captured->exec, origin));  // not in the first timed launch
  STREAMLAB_CUDA(cudaStreamSynchronize(origin));
  s.prepared[&op] = std::move(captured);
}

void cuda_graph(CudaState& s, const Op& op) {
  cudaGraphExec_t exec = s.prepared_for<CapturedGraph>(op).exec;
  for (int64_t r = 0; r < op.replays; ++r)
    STREAMLAB_CUDA(cudaGraphLaunch(exec, s.streams[op.stream]));
}

std::string describe_graph(const Experiment& exp, const Op& op) {
  std::set<int> streams;
  int kernels = 0, copies = 0;
  for (const Op& b : op.body) {
    if (b.stream >= 0) streams.insert(b.stream);
    kernels +=
        b.kind->name == "launch" || b.kind->name == "gemm" || b.kind->name == "convolutionForward";
    copies += b.kind->name == "memcpyAsync";
  }
  return fmt::format("{} ops captured ({} kernels, {} copies; {} stream{}) from {}, launched {}x",
                     op.body.size(), kernels, copies, streams.size(),
                     streams.size() == 1 ? "" : "s", exp.streams[op.stream].name, op.replays);
}

// A replay blocks the host where a captured op would: a memcpy node with pageable memory is staged
// by the host during cudaGraphLaunch, which would wait for ever behind the start gate.
bool graph_blocks(const Experiment& exp, const Op& op) {
  return std::any_of(op.body.begin(), op.body.end(),
                     [&](const Op& b) { return b.kind->blocks_host(exp, b); });
}

int64_t graph_bytes(const Experiment& exp, const Op& op) {
  int64_t sum = 0;
  for (const Op& b : op.body) sum += b.kind->bytes(exp, b);
  return sum * op.replays;
}

std::vector<Access> graph_accesses(const Experiment& exp, const Op& op) {
  std::vector<Access> out;
  for (const Op& b : op.body)
    for (const Access& a : b.kind->accesses(exp, b)) out.push_back(a);
  return out;
}

// Turns CUPTI's records of the graph's nodes (sample.graph_nodes) into the device time of each
// captured op in one replay (sample.body_ms). Leaves body_ms empty when the nodes cannot be told
// apart.
void assign_graph_body_times(const CudaState& s, const Op& op, OpSample& sample) {
  auto it = s.prepared.find(&op);
  if (it == s.prepared.end() || sample.graph_nodes.empty()) return;
  const auto& captured = *static_cast<const CapturedGraph*>(it->second.get());
  // CUPTI names a node of a launched graph by an id; the ids of the captured nodes map them to ops.
  // Where the launched graph's ids differ from the captured graph's (a copy made at instantiation),
  // nodes map by rank: copies are numbered in the order of the nodes they copy.
  std::vector<std::pair<uint64_t, size_t>> ids;  // captured node id, body op
  for (size_t j = 0; j < captured.nodes_of.size(); ++j)
    for (cudaGraphNode_t n : captured.nodes_of[j]) ids.emplace_back(cupti_graph_node_id(n), j);
  std::sort(ids.begin(), ids.end());
  auto records = sample.graph_nodes;
  std::sort(records.begin(), records.end());
  std::map<uint64_t, size_t> op_of(ids.begin(), ids.end());
  bool direct =
      std::all_of(records.begin(), records.end(), [&](auto& r) { return op_of.contains(r.first); });
  if (!direct && records.size() != ids.size()) return;  // no way to tell which node is which
  sample.body_ms.assign(op.body.size(), NAN);
  for (size_t k = 0; k < records.size(); ++k) {
    size_t j = direct ? op_of[records[k].first] : ids[k].second;
    double per_replay = records[k].second / static_cast<double>(op.replays);
    sample.body_ms[j] = std::isnan(sample.body_ms[j]) ? per_replay : sample.body_ms[j] + per_replay;
  }
}

// The model times a graph's body itself (runner/predict/): its ops with a node's cost in place
// of a launch's, as often as it is replayed.
Work graph_work(const Experiment&, const Op& op, const DeviceProfile&) {
  Work w;
  w.resource = Work::Resource::opaque;
  w.body = &op.body;
  w.replays = op.replays;
  return w;
}

}  // namespace

extern const OpKind kGraph = {
    .name = "graph",
    .summary =
        "the ops captured into a CUDA graph from stream (forks joined back), launched `replays` "
        "times",
    .keys = kGraphKeys,
    .parse = parse_graph,
    .run_host = host_graph,
    .run_cuda = cuda_graph,
    .describe = describe_graph,
    .blocks_host = graph_blocks,
    .bytes = graph_bytes,
    .accesses = graph_accesses,
    .order = order_in_stream,
    .lint = no_lint,
    .prepare_cuda = prepare_graph,
    .finish_cuda = assign_graph_body_times,
    .uncapturable = "graphs do not nest: capture the ops themselves",
    .work = graph_work,
};

}  // namespace streamlab
