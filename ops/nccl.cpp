// NCCL collectives on streams: allReduce, broadcast, reduceScatter, allGather over a communicator
// (`communicators:`), one process driving every rank (ncclCommInitAll), the ranks' calls in one
// ncclGroupStart/ncclGroupEnd. Per rank, a send and a receive buffer and a stream, given as lists
// in rank order (a plain name for a single rank). NCCL is loaded when an experiment first needs it.
//
// streamlab runs every stream on device 0 so far, so a communicator has one rank, on device 0
// (NCCL runs single-rank collectives as local copies and reductions). Several devices need
// `device:` on streams and buffers: issue 7.
#include <algorithm>
#include <fmt/format.h>
#include <nccl.h>

#include "ops/library_op.hpp"
#include "ops/op_kind.hpp"
#include "runner/context/cuda_check.hpp"
#include "runner/context/cuda_state.hpp"
#include "runner/context/happens_before.hpp"
#include "runner/context/host_state.hpp"
#include "runner/context/library.hpp"
#include "runner/context/load_context.hpp"

namespace streamlab {
namespace {

enum class Collective { all_reduce, broadcast, reduce_scatter, all_gather };

Collective collective_of(const Op& op) {
  std::string_view n = op.kind->name;
  return n == "allReduce"       ? Collective::all_reduce
         : n == "broadcast"     ? Collective::broadcast
         : n == "reduceScatter" ? Collective::reduce_scatter
                                : Collective::all_gather;
}

// ncclRedOp_t's order.
const std::vector<std::string> kReduceOps = {"sum", "prod", "max", "min", "avg"};

constexpr std::string_view kReduceKeys[] = {"comm", "send", "recv", "op?", "stream"};
constexpr std::string_view kBroadcastKeys[] = {"comm", "send", "recv", "root?", "stream"};
constexpr std::string_view kGatherKeys[] = {"comm", "send", "recv", "stream"};

size_t ranks(const Experiment& exp, const Op& op) {
  return exp.communicators[op.comm].devices.size();
}
const BufferRange& send(const Op& op, size_t r) { return op.args[2 * r].range; }
const BufferRange& recv(const Op& op, size_t r) { return op.args[2 * r + 1].range; }

// A list with one entry per rank, or a plain scalar for a single rank.
std::vector<YAML::Node> per_rank(MapReader& r, std::string_view key, size_t n) {
  YAML::Node node = r.require(key);
  if (!node.IsDefined()) return {};
  std::vector<YAML::Node> out;
  if (node.IsSequence())
    for (const auto& item : node) out.push_back(item);
  else
    out.push_back(node);
  if (out.size() != n) {
    r.ctx.error(
        node,
        fmt::format("{}: {} entr{} for a communicator of {} rank{}; expected one per rank, in rank "
                    "order",
                    key, out.size(), out.size() == 1 ? "y" : "ies", n, n == 1 ? "" : "s"));
    return {};
  }
  return out;
}

// Element counts: reduceScatter receives 1/ranks of what it sends, allGather ranks times.
bool check_counts(MapReader& r, const Op& op) {
  const Experiment& exp = r.ctx.exp;
  auto n = static_cast<int64_t>(ranks(exp, op));
  Collective c = collective_of(op);
  for (size_t k = 0; k < ranks(exp, op); ++k) {
    const Buffer& s = exp.buffers[send(op, k).buffer];
    const Buffer& d = exp.buffers[recv(op, k).buffer];
    int64_t want = c == Collective::reduce_scatter ? send(op, k).count / n
                   : c == Collective::all_gather   ? send(op, k).count * n
                                                   : send(op, k).count;
    if (s.type != d.type || recv(op, k).count != want ||
        (c == Collective::reduce_scatter && send(op, k).count % n)) {
      r.ctx.error(
          r.get("recv"),
          fmt::format("rank {}: {} sends {} {} and receives into {} ({} {}); {} needs {} {} "
                      "elements",
                      k, op.kind->name, send(op, k).count, elem_type_name(s.type),
                      range_name(exp, recv(op, k)), recv(op, k).count, elem_type_name(d.type),
                      op.kind->name, want, elem_type_name(s.type)));
      return false;
    }
  }
  return true;
}

void parse_collective(MapReader& r, Op& op) {
  op.device_work = true;
  std::vector<std::string> names;
  for (const auto& c : r.ctx.exp.communicators) names.push_back(c.name);
  if (auto c = r.ctx.choice(r.require("comm"), "communicator", names))
    op.comm = static_cast<int>(*c);
  if (r.has("op"))
    op.reduce_op = static_cast<int>(r.ctx.choice(r.get("op"), "reduction", kReduceOps).value_or(0));
  if (r.has("root")) op.root = r.ctx.integer(r.get("root"), "root").value_or(0);
  if (op.comm < 0) return;
  size_t n = ranks(r.ctx.exp, op);
  if (op.root < 0 || op.root >= static_cast<int64_t>(n))
    r.ctx.error(r.get("root"),
                fmt::format("root: {}; the communicator's ranks are 0..{}", op.root, n - 1));
  auto streams = per_rank(r, "stream", n);
  auto sends = per_rank(r, "send", n), recvs = per_rank(r, "recv", n);
  for (const auto& s : streams)
    if (auto i = r.ctx.stream(s)) op.rank_streams.push_back(*i);
  if (op.rank_streams.size() != n || sends.size() != n || recvs.size() != n) return;
  op.stream = op.rank_streams[0];
  op.args.resize(2 * n);
  bool good = true;
  for (size_t k = 0; k < n; ++k) {
    for (auto [node, slot] : {std::pair{sends[k], 2 * k}, {recvs[k], 2 * k + 1}}) {
      auto range = r.ctx.range(node);
      good = good && range.has_value();
      if (!range) continue;
      op.args[slot].range = *range;
      const Buffer& b = r.ctx.exp.buffers[range->buffer];
      if (!device_accessible(b.memory) || b.type == ElemType::uint32) {
        r.ctx.error(
            node,
            fmt::format(
                "{} needs memory the device can reach and an element type NCCL has (not uint32); "
                "'{}' is {} {}",
                op.kind->name, b.name, memory_kind_name(b.memory), elem_type_name(b.type)));
        good = false;
      }
    }
  }
  if (good) check_counts(r, op);
}

double reduce(int op, double a, double b) {
  switch (op) {
    case 1:
      return a * b;
    case 2:
      return std::max(a, b);
    case 3:
      return std::min(a, b);
    default:
      return a + b;  // sum, and avg before its division
  }
}

// The host reference: what every rank receives, from what every rank sends, in double.
void host_collective(HostState& s, const Op& op) {
  const Experiment& exp = s.exp;
  size_t n = ranks(exp, op);
  std::vector<Matrix> in, out;
  for (size_t k = 0; k < n; ++k) in.emplace_back(exp, send(op, k), s.at(send(op, k)));
  // Every input read before any output is written: a rank may receive in place.
  std::vector<std::vector<double>> sent(n);
  for (size_t k = 0; k < n; ++k)
    for (int64_t i = 0; i < send(op, k).count; ++i) sent[k].push_back(in[k].get(i));
  for (size_t k = 0; k < n; ++k) out.emplace_back(exp, recv(op, k), s.at(recv(op, k)));
  auto reduced = [&](int64_t i) {
    double v = sent[0][i];
    for (size_t k = 1; k < n; ++k) v = reduce(op.reduce_op, v, sent[k][i]);
    return op.reduce_op == 4 ? v / static_cast<double>(n) : v;
  };
  for (size_t k = 0; k < n; ++k) {
    int64_t count = recv(op, k).count;
    for (int64_t i = 0; i < count; ++i) {
      switch (collective_of(op)) {
        case Collective::all_reduce:
          out[k].set(i, reduced(i));
          break;
        case Collective::broadcast:
          out[k].set(i, sent[op.root][i]);
          break;
        case Collective::reduce_scatter:
          out[k].set(i, reduced(static_cast<int64_t>(k) * count + i));
          break;
        case Collective::all_gather:
          out[k].set(i, sent[i / send(op, 0).count][i % send(op, 0).count]);
          break;
      }
    }
  }
}

struct Nccl {
  decltype(&ncclCommInitAll) init_all = nullptr;
  decltype(&ncclCommDestroy) destroy = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclBroadcast) broadcast = nullptr;
  decltype(&ncclReduceScatter) reduce_scatter = nullptr;
  decltype(&ncclAllGather) all_gather = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
};

const Nccl& nccl() {
  static const Nccl api = [] {
    const SharedLibrary& lib =
        load_library({"NCCL", "libnccl.so.2", "STREAMLAB_NCCL", {"lib64", "lib"}});
    Nccl a;
    lib.resolve(a.init_all, "ncclCommInitAll");
    lib.resolve(a.destroy, "ncclCommDestroy");
    lib.resolve(a.group_start, "ncclGroupStart");
    lib.resolve(a.group_end, "ncclGroupEnd");
    lib.resolve(a.all_reduce, "ncclAllReduce");
    lib.resolve(a.broadcast, "ncclBroadcast");
    lib.resolve(a.reduce_scatter, "ncclReduceScatter");
    lib.resolve(a.all_gather, "ncclAllGather");
    lib.resolve(a.error_string, "ncclGetErrorString");
    return a;
  }();
  return api;
}

void check(ncclResult_t r, const char* call) {
  if (r != ncclSuccess) throw RunError(fmt::format("{} failed: {}", call, nccl().error_string(r)));
}

ncclDataType_t nccl_type(ElemType t) {
  switch (t) {
    case ElemType::int32:
      return ncclInt32;
    case ElemType::int64:
      return ncclInt64;
    case ElemType::uint8:
      return ncclUint8;
    case ElemType::float16:
      return ncclFloat16;
    case ElemType::bfloat16:
      return ncclBfloat16;
    case ElemType::float64:
      return ncclFloat64;
    default:
      return ncclFloat32;
  }
}

// The communicator's ranks, made once per communicator: one per device, by this process.
struct Comms {
  std::vector<ncclComm_t> ranks;
  Comms() = default;
  Comms(const Comms&) = delete;
  Comms& operator=(const Comms&) = delete;
  ~Comms() {  // only made once NCCL is loaded (prepare_collective)
    for (ncclComm_t c : ranks)
      if (c) nccl().destroy(c);
  }
};

void prepare_collective(CudaState& s, const Op& op) {
  const Communicator& c = s.exp.communicators[op.comm];
  auto& slot = s.libraries["nccl:" + c.name];
  if (!slot) {
    nccl();  // loads NCCL, or throws naming it, before anything needs it to clean up
    auto comms = std::make_shared<Comms>();
    std::vector<int> devices(c.devices.begin(), c.devices.end());
    comms->ranks.resize(devices.size());
    check(nccl().init_all(comms->ranks.data(), static_cast<int>(devices.size()), devices.data()),
          "ncclCommInitAll");
    STREAMLAB_CUDA(cudaSetDevice(0));  // ncclCommInitAll leaves another device current
    slot = std::move(comms);
  }
  s.prepared[&op] = slot;
}

void cuda_collective(CudaState& s, const Op& op) {
  const auto& comms = s.prepared_for<Comms>(op);
  ElemType type = s.exp.buffers[send(op, 0).buffer].type;
  auto red = static_cast<ncclRedOp_t>(op.reduce_op);
  check(nccl().group_start(), "ncclGroupStart");
  for (size_t k = 0; k < comms.ranks.size(); ++k) {
    const void* in = s.at(send(op, k));
    void* out = s.at(recv(op, k));
    cudaStream_t stream = s.streams[op.rank_streams[k]];
    auto count = static_cast<size_t>(recv(op, k).count);
    ncclResult_t r = ncclSuccess;
    switch (collective_of(op)) {
      case Collective::all_reduce:
        r = nccl().all_reduce(in, out, count, nccl_type(type), red, comms.ranks[k], stream);
        break;
      case Collective::broadcast:
        r = nccl().broadcast(in, out, count, nccl_type(type), static_cast<int>(op.root),
                             comms.ranks[k], stream);
        break;
      case Collective::reduce_scatter:
        r = nccl().reduce_scatter(in, out, count, nccl_type(type), red, comms.ranks[k], stream);
        break;
      case Collective::all_gather:
        r = nccl().all_gather(in, out, static_cast<size_t>(send(op, k).count), nccl_type(type),
                              comms.ranks[k], stream);
        break;
    }
    if (r != ncclSuccess) {
      nccl().group_end();
      check(r, op.kind->name.data());
    }
  }
  check(nccl().group_end(), "ncclGroupEnd");
}

std::string describe_collective(const Experiment& exp, const Op& op) {
  std::string what =
      fmt::format("{} over '{}' ({} rank{})", op.kind->name, exp.communicators[op.comm].name,
                  ranks(exp, op), ranks(exp, op) == 1 ? "" : "s");
  Collective c = collective_of(op);
  if (c == Collective::all_reduce || c == Collective::reduce_scatter)
    what += ", " + kReduceOps[op.reduce_op];
  if (c == Collective::broadcast) what += fmt::format(", root {}", op.root);
  return what +
         fmt::format(": {} -> {}", range_name(exp, send(op, 0)), range_name(exp, recv(op, 0))) +
         (ranks(exp, op) > 1 ? ", ..." : "");
}

int64_t collective_bytes(const Experiment& exp, const Op& op) {
  int64_t sum = 0;  // what every rank sends, counted once
  for (size_t k = 0; k < ranks(exp, op); ++k) sum += range_bytes(exp, send(op, k));
  return sum;
}

std::vector<Access> collective_accesses(const Experiment& exp, const Op& op) {
  std::vector<Access> out;
  if (op.comm < 0 || op.args.size() != 2 * ranks(exp, op)) return out;  // load errors
  for (size_t k = 0; k < ranks(exp, op); ++k) {
    if (send(op, k).valid()) out.push_back({send(op, k), false});
    if (recv(op, k).valid()) out.push_back({recv(op, k), true});
  }
  return out;
}

void order_collective(HappensBefore& hb, const Experiment&, const Op& op) {
  hb.group_op(op.rank_streams);
}

}  // namespace

void load_communicators(LoadContext& ctx, const YAML::Node& node) {
  if (!node.IsDefined()) return;
  if (!node.IsMap())
    return ctx.error(
        node,
        fmt::format("communicators: expected a mapping of NAME: {{devices: [D, ...]}}, got {}",
                    describe_node(node)));
  for (const auto& entry : node) {
    if (!check_declared_name(ctx, entry.first, ctx.exp.communicators, "communicator")) continue;
    MapReader r(ctx, entry.second, fmt::format("communicator '{}'", entry.first.Scalar()),
                {"devices"});
    if (!r.ok()) continue;
    Communicator c{entry.first.Scalar(), ctx.loc(entry.first), {}};
    YAML::Node devices = r.require("devices");
    if (!devices.IsSequence() || devices.size() == 0) {
      if (devices.IsDefined())
        ctx.error(devices, "devices: expected a list of device numbers, one rank each");
      continue;
    }
    for (const auto& d : devices) {
      auto v = ctx.integer(d, "device");
      if (!v) continue;
      if (*v != 0)  // every stream runs on device 0 so far: ranks elsewhere would have no stream
        ctx.error(
            d,
            fmt::format(
                "device {}: streamlab runs streams on device 0 only so far, so a communicator has "
                "one rank, on device 0",
                *v));
      else if (std::find(c.devices.begin(), c.devices.end(), *v) != c.devices.end())
        ctx.error(d, fmt::format("device {} is listed twice: NCCL takes one rank per device", *v));
      else
        c.devices.push_back(*v);
    }
    if (!c.devices.empty()) ctx.exp.communicators.push_back(std::move(c));
  }
}

// NCCL on one device: its bytes at the profile's bus bandwidth, on a few SMs (its channels), so
// that compute beside it keeps most of the device.
Work collective_work(const Experiment& exp, const Op& op, const DeviceProfile& p) {
  Work w;
  w.resource = Work::Resource::sm;
  w.blocks = 8;
  w.per_sm = 1;
  w.ms = std::max(p.kernel_min_us / 1000,
                  static_cast<double>(collective_bytes(exp, op)) / (p.nccl_gbps * 1e6));
  return w;
}


extern const OpKind kAllReduce = {
    .name = "allReduce",
    .summary =
        "ncclAllReduce on each rank's stream: every rank receives the reduction of all sends",
    .keys = kReduceKeys,
    .parse = parse_collective,
    .run_host = host_collective,
    .run_cuda = cuda_collective,
    .describe = describe_collective,
    .blocks_host = never_blocks,
    .bytes = collective_bytes,
    .accesses = collective_accesses,
    .order = order_collective,
    .lint = no_lint,
    .prepare_cuda = prepare_collective,
    .host_reference = true,
    .engine = compute_engine,
    .work = collective_work,
};
extern const OpKind kBroadcast = {
    .name = "broadcast",
    .summary = "ncclBroadcast: every rank receives the root rank's send buffer",
    .keys = kBroadcastKeys,
    .parse = parse_collective,
    .run_host = host_collective,
    .run_cuda = cuda_collective,
    .describe = describe_collective,
    .blocks_host = never_blocks,
    .bytes = collective_bytes,
    .accesses = collective_accesses,
    .order = order_collective,
    .lint = no_lint,
    .prepare_cuda = prepare_collective,
    .host_reference = true,
    .engine = compute_engine,
    .work = collective_work,
};
extern const OpKind kReduceScatter = {
    .name = "reduceScatter",
    .summary = "ncclReduceScatter: rank k receives part k of the reduction of all sends",
    .keys = kReduceKeys,
    .parse = parse_collective,
    .run_host = host_collective,
    .run_cuda = cuda_collective,
    .describe = describe_collective,
    .blocks_host = never_blocks,
    .bytes = collective_bytes,
    .accesses = collective_accesses,
    .order = order_collective,
    .lint = no_lint,
    .prepare_cuda = prepare_collective,
    .host_reference = true,
    .engine = compute_engine,
    .work = collective_work,
};
extern const OpKind kAllGather = {
    .name = "allGather",
    .summary = "ncclAllGather: every rank receives all sends, in rank order",
    .keys = kGatherKeys,
    .parse = parse_collective,
    .run_host = host_collective,
    .run_cuda = cuda_collective,
    .describe = describe_collective,
    .blocks_host = never_blocks,
    .bytes = collective_bytes,
    .accesses = collective_accesses,
    .order = order_collective,
    .lint = no_lint,
    .prepare_cuda = prepare_collective,
    .host_reference = true,
    .engine = compute_engine,
    .work = collective_work,
};

}  // namespace streamlab
