#include "runner/predict/simulate.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "ops/op_kind.hpp"
#include "ops/start_gate_rule.hpp"
#include "runner/predict/dependencies.hpp"

namespace streamlab {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();
constexpr double kEps = 1e-9;  // ms: times closer than this are the same time
constexpr int64_t kMaxWaves = 4096;  // waves of one kernel the model follows one by one

using Resource = Work::Resource;

// One stream-ordered op's device work while the simulation runs.
struct Job {
  int op = -1;
  Work work;
  int queue = 0;
  int64_t priority = 0;          // lower runs first at block dispatch (CUDA's convention)
  std::vector<int> deps;         // ops that must finish first
  int queue_prev = -1;           // the op before it in its hardware queue
  double arrive = kNever;        // when the device sees it
  double eligible = kNever;      // when its dependencies allow it to start (latency included)
  double start = NAN, end = NAN;
  // Fluid work (copies, host functions, opaque): ms left at full speed.
  double remaining = 0;
  // Blocks (sm): not yet dispatched, resident now, and how long one takes at full speed.
  int64_t undispatched = 0, resident = 0;
  double block_ms = 0;
  int64_t natural = 1;  // blocks resident when it runs alone
  bool started() const { return !std::isnan(start); }
  bool done() const { return !std::isnan(end); }
};

// Blocks of one job dispatched at the same moment: they finish together.
struct Batch {
  int job = -1;
  int64_t blocks = 0;
  double remaining = 0;  // ms at full speed
};

// What the device is busy with during one step of the simulation: the copies of each direction
// and how much of the memory bandwidth the running work asks for.
struct Load {
  int h2d = 0, d2h = 0;
  double memory = 1;  // the speed memory-bound work runs at (1: unhindered)
};

class Simulation {
 public:
  Simulation(const Experiment& exp, const DeviceProfile& p, const ModelOptions& o)
      : exp_(exp), p_(p), o_(o), deps_(dependencies(exp)), jobs_of_(exp.ops.size(), -1) {
    run_.ops.resize(exp.ops.size());
    run_.connections = o.connections > 0 ? o.connections : connections_of(exp, p);
    gate_before_ = o.gate ? gate_opens_before(exp) : 0;
    make_jobs();
  }

  ModelRun run() {
    double now = 0;
    while (next_op_ < exp_.ops.size() || !live_.empty()) {
      issue_due(now);
      start_ready(now);
      double next = next_time(now);
      if (next == kNever) break;  // nothing can move: a wait that never ends (none in valid files)
      advance(now, next);
      now = next;
      finish_due(now);
      unblock_host(now);
    }
    double last = host_time_;
    for (const Job& j : jobs_) last = std::max(last, j.done() ? j.end : last);
    // The cuda backend's closing synchronize, and its wake-up, unless the last op was one.
    const bool closing_sync = o_.host_costs && !ends_with_device_synchronize(exp_);
    run_.end_ms = last + (closing_sync ? p_.wake_us / 1000 : 0);
    return std::move(run_);
  }

 private:
  // --- setting up -------------------------------------------------------------------------------
  void make_jobs() {
    std::vector<int> last_in_queue(static_cast<size_t>(run_.connections), -1);
    for (size_t i = 0; i < exp_.ops.size(); ++i) {
      if (!deps_[i].in_stream) continue;
      const Op& op = exp_.ops[i];
      Job j;
      j.op = static_cast<int>(i);
      j.work = op.kind->work(exp_, op, p_);
      if (j.work.body) j.work.ms = graph_ms(j.work);
      if (!j.work.unknown.empty()) run_.unknown.emplace_back(j.op, j.work.unknown);
      j.queue = op.stream % run_.connections;
      j.priority = exp_.streams[op.stream].priority.value_or(0);
      for (const Dependency& d : deps_[i].device) j.deps.push_back(d.op);
      j.queue_prev = last_in_queue[j.queue];
      last_in_queue[j.queue] = j.op;
      if (j.work.resource == Resource::sm) {
        const int64_t slots = static_cast<int64_t>(p_.sms) * j.work.per_sm;
        // A grid of more waves than kMaxWaves is followed as kMaxWaves waves of longer blocks:
        // its time is kept, only its interleaving with other kernels is coarser. Wave by wave, a
        // grid of 2^31 x 65535 x 65535 blocks would hold the model for ever.
        const int64_t waves = std::min((j.work.blocks + slots - 1) / slots, kMaxWaves);
        j.undispatched = std::min(j.work.blocks, slots * kMaxWaves);
        j.natural = std::min(j.work.blocks, slots);
        j.block_ms = j.work.ms / static_cast<double>(waves);
      }
      j.remaining = j.work.ms;
      jobs_of_[i] = static_cast<int>(jobs_.size());
      jobs_.push_back(std::move(j));
    }
  }

  // A graph's replays: its body simulated as issued all at once, each node costing the profile's
  // per-node time in place of a launch's latency and least kernel time.
  double graph_ms(const Work& w) const {
    Experiment body = exp_;
    body.ops = *w.body;
    body.checks.clear();
    body.expectations.clear();
    DeviceProfile nodes = p_;
    nodes.launch_latency_us = 0;
    nodes.kernel_min_us = p_.graph_node_us;
    ModelRun r = Simulation(body, nodes, {false, run_.connections, false}).run();
    double first = kNever, last = 0;
    for (const ModelOp& m : r.ops)
      if (!std::isnan(m.start_ms)) first = std::min(first, m.start_ms), last = std::max(last, m.end_ms);
    const double span = first == kNever ? 0 : last - first;
    return p_.graph_launch_us / 1000 + static_cast<double>(w.replays) * span;
  }

  Job* job_of(int op) { return jobs_of_[op] >= 0 ? &jobs_[jobs_of_[op]] : nullptr; }
  bool op_done(int op) {
    Job* j = job_of(op);
    return !j || j->done();
  }
  double op_end(int op) {
    Job* j = job_of(op);
    return j ? j->end : run_.ops[op].return_ms;
  }
  // Each step looks only at the jobs issued and not done: a long op list costs its window in
  // flight, not its length.
  void prune() {
    std::erase_if(live_, [&](int k) { return jobs_[k].done(); });
  }

  // --- the host ---------------------------------------------------------------------------------
  void issue_due(double now) {
    while (!blocked_ && next_op_ < exp_.ops.size() && host_time_ <= now + kEps) issue(next_op_++);
  }

  void issue(size_t i) {
    const Op& op = exp_.ops[i];
    ModelOp& m = run_.ops[i];
    m.issue_ms = host_time_;
    const double per_call = o_.host_costs ? p_.host_us_of(std::string(op.kind->name)) / 1000 : 0;
    host_time_ += static_cast<double>(op.kind->calls(exp_, op)) * per_call;
    // With `times`, the first launch reaches the device after one call; the work's own time
    // covers the rest (each launch no sooner than the host issues it).
    if (Job* j = job_of(static_cast<int>(i))) {
      j->arrive = i < gate_before_ ? kNever : m.issue_ms + per_call;
      live_.push_back(jobs_of_[i]);
    }
    if (i + 1 == gate_before_) open_gate();
    waits_ = deps_[i].host_waits;
    if (Job* j = job_of(static_cast<int>(i)); j && j->work.host_staged) waits_.push_back(j->op);
    blocked_ = true;
    unblock_host(host_time_);  // returns at once when nothing it waits for is left
  }

  void open_gate() {
    run_.gate_open_ms = host_time_;
    for (Job& j : jobs_)
      if (static_cast<size_t>(j.op) < gate_before_) j.arrive = host_time_;
  }

  // The host returns from a blocking call once all it waits for is done, a wake-up later.
  void unblock_host(double now) {
    if (!blocked_) return;
    double last = host_time_;
    for (int w : waits_) {
      if (!op_done(w)) return;
      last = std::max(last, op_end(w));
    }
    blocked_ = false;
    if (!waits_.empty() && o_.host_costs) last = std::max(last, now) + p_.wake_us / 1000;
    host_time_ = std::max(host_time_, last);
    run_.ops[next_op_ - 1].return_ms = host_time_;
  }

  // --- the device -------------------------------------------------------------------------------
  void start_ready(double now) {
    bool changed = true;
    while (changed) {  // markers finish at once and may free what waits behind them
      changed = false;
      for (int k : live_) {
        Job& j = jobs_[k];
        if (j.started()) continue;
        if (std::isinf(j.eligible) && j.arrive != kNever && deps_done(j)) {
          double after = j.arrive;
          for (int d : j.deps) after = std::max(after, op_end(d));
          const bool kernel_like = j.work.resource == Resource::sm;
          j.eligible = after + (kernel_like && o_.host_costs ? p_.launch_latency_us / 1000 : 0);
        }
        if (j.eligible > now + kEps) continue;
        if (j.queue_prev >= 0 && !job_of(j.queue_prev)->started()) continue;
        changed |= try_start(j, now);
      }
      changed |= dispatch_blocks(now);
    }
    prune();
  }

  bool busy(Resource r) const {
    return std::any_of(live_.begin(), live_.end(), [&](int k) {
      return jobs_[k].started() && !jobs_[k].done() && jobs_[k].work.resource == r;
    });
  }

  bool deps_done(const Job& j) {
    return std::all_of(j.deps.begin(), j.deps.end(), [&](int d) { return op_done(d); });
  }

  bool try_start(Job& j, double now) {
    switch (j.work.resource) {
      case Resource::none:
        j.start = j.end = now;
        record(j);
        return true;
      case Resource::host:
        if (host_thread_busy_) return false;
        host_thread_busy_ = true;
        break;
      case Resource::sm:
        return false;  // dispatch_blocks starts it
      case Resource::copy_h2d:
      case Resource::copy_d2h:
        // One copy of a direction at a time, in the order they became ready (the H200 runs
        // same-direction copies of different streams one after the other).
        if (busy(j.work.resource)) return false;
        break;
      default:
        break;
    }
    j.start = now;
    if (j.remaining <= kEps) {
      j.end = now;
      if (j.work.resource == Resource::host) host_thread_busy_ = false;
      record(j);
    }
    return true;
  }

  // Block dispatch: free SM share goes to the eligible kernels with blocks left, higher priority
  // first, then in the order they became eligible; running blocks are never preempted.
  bool dispatch_blocks(double now) {
    std::vector<Job*> waiting;
    for (int k : live_)
      if (Job& j = jobs_[k]; j.work.resource == Resource::sm && j.undispatched > 0 && j.eligible <= now + kEps &&
          (j.queue_prev < 0 || job_of(j.queue_prev)->started() || j.started()))
        waiting.push_back(&j);
    // Higher priority first, also between kernels released at the same moment (by the start
    // gate: on the H200 the urgent kernel of C13 then starts at once), then by readiness.
    std::stable_sort(waiting.begin(), waiting.end(), [](const Job* a, const Job* b) {
      if (a->priority != b->priority) return a->priority < b->priority;
      if (a->eligible != b->eligible) return a->eligible < b->eligible;
      return a->op < b->op;
    });
    bool any = false;
    for (Job* j : waiting) {
      double free = static_cast<double>(p_.sms) - sm_used_;
      auto fit = static_cast<int64_t>(std::floor(free * j->work.per_sm + 1e-6));
      const int64_t n = std::min(j->undispatched, fit);
      if (n <= 0) continue;
      batches_.push_back({static_cast<int>(j - jobs_.data()), n, j->block_ms});
      j->undispatched -= n;
      j->resident += n;
      sm_used_ += static_cast<double>(n) / j->work.per_sm;
      if (!j->started()) j->start = now;
      any = true;
    }
    return any;
  }

  // Copies of a direction run one at a time, slower while the other direction copies too;
  // memory-bound work slows down together when its shares of the bandwidth add up past 1.
  Load load() const {
    Load l;
    double demand = 0;
    for (int k : live_) {
      const Job& j = jobs_[k];
      if (!j.started() || j.done()) continue;
      l.h2d += j.work.resource == Resource::copy_h2d;
      l.d2h += j.work.resource == Resource::copy_d2h;
      if (j.work.resource == Resource::sm)
        demand += j.work.memory_share * static_cast<double>(j.resident) / static_cast<double>(j.natural);
      else if (j.work.resource == Resource::copy_d2d)
        demand += j.work.memory_share;
    }
    l.memory = demand > 1 ? 1 / demand : 1;
    return l;
  }

  double speed(const Job& j, const Load& l) const {
    switch (j.work.resource) {
      case Resource::copy_h2d:
        return l.d2h ? p_.duplex_factor : 1.0;
      case Resource::copy_d2h:
        return l.h2d ? p_.duplex_factor : 1.0;
      case Resource::copy_d2d:
      case Resource::sm:
        return j.work.memory_share > 0 ? l.memory : 1.0;
      default:
        return 1.0;
    }
  }

  double next_time(double now) const {
    double next = kNever;
    if (!blocked_ && next_op_ < exp_.ops.size()) next = std::max(host_time_, now);
    const Load l = load();
    for (int k : live_) {
      const Job& j = jobs_[k];
      if (!j.started() && j.eligible > now + kEps && j.eligible != kNever) next = std::min(next, j.eligible);
      if (j.started() && !j.done() && j.work.resource != Resource::sm)
        next = std::min(next, now + j.remaining / speed(j, l));
    }
    for (const Batch& b : batches_) next = std::min(next, now + b.remaining / speed(jobs_[b.job], l));
    return next;
  }

  void advance(double from, double to) {
    const double dt = to - from;
    if (dt <= 0) return;
    const Load l = load();
    // Speeds first: they depend on what runs, which this step does not change.
    for (const Batch& b : batches_) speed_of_batch_.push_back(speed(jobs_[b.job], l));
    for (int k : live_) {
      Job& j = jobs_[k];
      if (j.started() && !j.done() && j.work.resource != Resource::sm) j.remaining -= dt * speed(j, l);
    }
    for (size_t b = 0; b < batches_.size(); ++b) batches_[b].remaining -= dt * speed_of_batch_[b];
    speed_of_batch_.clear();
  }

  void finish_due(double now) {
    for (auto it = batches_.begin(); it != batches_.end();) {
      if (it->remaining > kEps) {
        ++it;
        continue;
      }
      Job& j = jobs_[it->job];
      j.resident -= it->blocks;
      sm_used_ -= static_cast<double>(it->blocks) / j.work.per_sm;
      if (j.resident == 0 && j.undispatched == 0) j.end = now, record(j);
      it = batches_.erase(it);
    }
    if (sm_used_ < 1e-9) sm_used_ = 0;
    for (int k : live_)
      if (Job& j = jobs_[k]; j.started() && !j.done() && j.work.resource != Resource::sm && j.remaining <= kEps) {
        j.end = now;
        if (j.work.resource == Resource::host) host_thread_busy_ = false;
        record(j);
      }
    prune();
  }

  void record(const Job& j) {
    run_.ops[j.op].start_ms = j.start;
    run_.ops[j.op].end_ms = j.end;
  }

  const Experiment& exp_;
  const DeviceProfile& p_;
  ModelOptions o_;
  std::vector<OpDependencies> deps_;
  std::vector<Job> jobs_;
  std::vector<int> jobs_of_;  // op index -> index into jobs_ (-1: host-only op)
  std::vector<Batch> batches_;
  std::vector<int> live_;               // jobs issued and not done, in issue order
  std::vector<double> speed_of_batch_;  // advance()'s scratch
  double sm_used_ = 0;  // SMs' worth of resident blocks
  bool host_thread_busy_ = false;
  size_t next_op_ = 0;
  size_t gate_before_ = 0;  // ops before this index wait for the gate
  double host_time_ = 0;
  bool blocked_ = false;
  std::vector<int> waits_;  // what the blocked host waits for
  ModelRun run_;
};

}  // namespace

int connections_of(const Experiment& exp, const DeviceProfile& profile) {
  for (const auto& [name, value] : exp.env)
    if (name == "CUDA_DEVICE_MAX_CONNECTIONS") return std::max(1, std::atoi(value.c_str()));
  return profile.connections;
}

ModelRun simulate(const Experiment& exp, const DeviceProfile& profile, const ModelOptions& options) {
  return Simulation(exp, profile, options).run();
}

}  // namespace streamlab
