// libFuzzer target: an experiment file is untrusted input (docs/safety.md), so whatever its text
// says, loading, checking, running it on the host backend and formatting every report must end in a
// result or in one of the errors streamlab reports (InvalidExperiment, RunError); never in a
// crash, a sanitizer report, an unbounded hang or unbounded memory.
//
//   build:  cmake -S . -B build-sanitize -DCMAKE_CXX_COMPILER=clang++ -DSTREAMLAB_FUZZ=ON
//           cmake --build build-sanitize --target fuzz_experiment
//   run:    build-sanitize/tests/fuzz/fuzz_experiment -dict=tests/fuzz/experiment.dict \
//             -timeout=10 -rss_limit_mb=2048 -artifact_prefix=/tmp/fuzz- NEW_CORPUS_DIR
//             tests/fuzz/corpus
//
// The input is the YAML text. The pipeline is the one `streamlab check` and `streamlab run
// --backend host --allow-races` follow (runner/cli/cli.cpp): the CLI runs experiments that analyze
// finds errors in when told to, so the host backend must survive races, uses after free and the
// rest. Only experiments small enough to run in well under a second are run (see Budget): an
// experiment that legitimately sleeps or multiplies large matrices for minutes is not a bug, and
// the run-time limit for those belongs to the program, not to this target.
//
// The target writes no files and reads none outside the source tree: while an input is processed,
// opening a file for writing aborts (a finding; libFuzzer's own artifacts excepted), and opening
// one for reading outside the tree fails with EACCES, which load reports like any unreadable file
// (kernel `file:` paths are the experiment's to choose: /dev/zero, /dev/stdin, /proc/...).
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "ops/op_kind.hpp"
#include "runner/analyze/analyze.hpp"
#include "runner/core/diagnostics.hpp"
#include "runner/core/experiment.hpp"
#include "runner/execute/backend.hpp"
#include "runner/execute/execute.hpp"
#include "runner/load/environment.hpp"
#include "runner/load/load.hpp"
#include "runner/report/console.hpp"
#include "runner/report/files.hpp"

namespace {

using namespace streamlab;

// ---------------------------------------------------------------------------------------------
// File access while an input is processed.

bool g_guard = false;          // set while LLVMFuzzerTestOneInput runs
char g_root[PATH_MAX];         // the source tree, resolved
std::string g_exact_artifact;  // libFuzzer's -exact_artifact_path, if given

bool inside_tree(const char* path) {
  if (!g_root[0]) return false;
  char resolved[PATH_MAX];
  if (!realpath(path, resolved)) return true;  // does not resolve: the open fails by itself
  size_t n = strlen(g_root);
  return strncmp(resolved, g_root, n) == 0 && (resolved[n] == '/' || resolved[n] == '\0');
}

// libFuzzer writes its artifact (<prefix>crash-<sha1>, timeout-, oom-, leak-, slow-unit-, and
// minimized-from-<sha1> while minimizing) while the input is still being processed: from the
// sanitizer's death callback, a signal handler, the RSS thread. Those writes must go through;
// streamlab's own code never names a file so.
bool libfuzzer_artifact(const char* path) {
  if (!g_exact_artifact.empty() && g_exact_artifact == path) return true;
  std::string_view p = path;
  constexpr size_t kSha1 = 40;
  if (p.size() <= kSha1 || p[p.size() - kSha1 - 1] != '-') return false;
  for (char c : p.substr(p.size() - kSha1))
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  std::string_view head = p.substr(0, p.size() - kSha1);
  for (std::string_view kind :
       {"crash-", "timeout-", "oom-", "leak-", "slow-unit-", "minimized-from-"})
    if (head.ends_with(kind)) return true;
  return false;
}

// Whether an open of `path` may go ahead; sets errno when not. Aborts on writes: streamlab has
// no business writing a file while it loads, checks, runs or formats an experiment.
bool allowed(const char* path, bool write) {
  if (!g_guard || !path) return true;
  if (write) {
    if (libfuzzer_artifact(path)) return true;
    g_guard = false;
    fprintf(stderr, "fuzz_experiment: the experiment made streamlab open '%s' for writing\n", path);
    abort();
  }
  if (inside_tree(path)) return true;
  errno = EACCES;
  return false;
}

bool fopen_writes(const char* mode) {
  return mode && (strchr(mode, 'w') || strchr(mode, 'a') || strchr(mode, '+'));
}
bool open_writes(int flags) {
  return (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC));
}
bool open_has_mode(int flags) { return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE; }

template <class F>
F* next(F*, const char* name) {
  return reinterpret_cast<F*>(dlsym(RTLD_NEXT, name));
}

// ---------------------------------------------------------------------------------------------
// What running an experiment on the host backend costs, from the Experiment.

struct Budget {
  static constexpr int64_t kBufferBytes = 16 << 20;  // all buffers together
  static constexpr int64_t kIssued = 2000;  // ops issued in the repetition (loops, times, replays)
  static constexpr double kWork =
      256.0 * (1 << 20);  // bytes touched by ops and checks (kMacCost per multiply-add)
  static constexpr double kMacCost = 8;  // a host reference's multiply-add, in bytes' worth of time
  static constexpr double kSleepUs = 100'000;  // host functions that sleep: 0.1 s in all
};

double range_cost(const Experiment& exp, const BufferRange& r) {
  if (!r.valid() || r.buffer >= static_cast<int>(exp.buffers.size())) return 0;
  return static_cast<double>(std::max<int64_t>(0, range_bytes(exp, r)));
}

double elements(const Experiment& exp, const BufferRange& r) {
  if (!r.valid() || r.buffer >= static_cast<int>(exp.buffers.size())) return 0;
  return static_cast<double>(std::max<int64_t>(0, r.count));
}

// Multiply-adds of a GEMM (m*n*k = sqrt(|A| |B| |C|)) and of a convolution (|y| * C*R*S, with
// C*R*S = |w| / K), at kMacCost each; bytes touched for everything else.
double op_cost(const Experiment& exp, const Op& op) {
  std::string_view kind = op.kind ? op.kind->name : std::string_view();
  if (kind == "gemm" && op.args.size() >= 3) {
    double a = elements(exp, op.args[0].range), b = elements(exp, op.args[1].range),
           c = elements(exp, op.args[2].range);
    return Budget::kMacCost * std::sqrt(a) * std::sqrt(b) * std::sqrt(c) +
           range_cost(exp, op.args[2].range);
  }
  if (kind == "convolutionForward" && op.args.size() >= 3) {
    double x = elements(exp, op.args[0].range), w = elements(exp, op.args[1].range),
           y = elements(exp, op.args[2].range);
    const BufferRange& wr = op.args[1].range;
    double k = 1;
    if (wr.valid() && wr.buffer < static_cast<int>(exp.buffers.size()) &&
        !exp.buffers[wr.buffer].shape.empty())
      k = std::max<double>(1, static_cast<double>(exp.buffers[wr.buffer].shape[0]));
    return Budget::kMacCost * y * w / k + x;
  }
  double bytes = range_cost(exp, op.dst) + range_cost(exp, op.src) + range_cost(exp, op.workspace);
  for (const KernelArg& a : op.args) bytes += range_cost(exp, a.range);
  return bytes + 64;  // every op costs something, even one that moves nothing
}

bool small_enough(const Experiment& exp) {
  int64_t bytes = 0;
  for (const Buffer& b : exp.buffers) {
    if (b.bytes < 0 || b.bytes > Budget::kBufferBytes - bytes) return false;
    bytes += b.bytes;
  }
  // Ops with how many times each is issued; graph bodies and `times` multiply. Iterative, so a
  // deeply nested input cannot overflow this target's stack (load's nesting limit is not ours to
  // rely on).
  struct Item {
    const Op* op;
    double times;
  };
  std::vector<Item> todo;
  for (const Op& op : exp.ops) todo.push_back({&op, 1});
  double issued = 0, work = 0, sleep_us = 0;
  while (!todo.empty()) {
    Item it = todo.back();
    todo.pop_back();
    const Op& op = *it.op;
    double times = it.times * static_cast<double>(std::max<int64_t>(1, op.replays));
    std::string_view kind = op.kind ? op.kind->name : std::string_view();
    if (kind == "graph") {
      issued += times;  // its launches
      for (const Op& b : op.body) todo.push_back({&b, times});
      continue;
    }
    issued += times;
    work += times * op_cost(exp, op);
    if (kind == "launchHostFunc" && op.host_fn == 0)
      sleep_us += times * static_cast<double>(op.value);
    if (issued > Budget::kIssued || work > Budget::kWork || sleep_us > Budget::kSleepUs)
      return false;
  }
  for (const CheckSpec& c : exp.checks) {
    for (const BufferRange& r : check_ranges(c)) work += range_cost(exp, r);
    if (c.op >= 0 && c.op < static_cast<int>(exp.ops.size())) work += op_cost(exp, exp.ops[c.op]);
  }
  return work <= Budget::kWork;
}

// Reading every byte of a result, so that nothing the formatters produce is optimized away.
volatile size_t g_sink = 0;
void consume(const std::string& s) {
  g_sink = g_sink + s.size() + (s.empty() ? 0 : static_cast<unsigned char>(s.back()));
}

void run_on_host(const Experiment& exp, const Findings& findings) {
  try {
    auto backend = make_host_backend(exp);
    RunOptions options;
    options.repeat = 1;
    options.warmup = 0;
    RunRecord record = run_experiment(exp, *backend, options);
    auto env = environment_notes(exp);
    record.notes.insert(record.notes.begin(), env.begin(), env.end());
    record.diagnostics = findings;
    consume(format_console_report(exp, record));
    consume(format_json(exp, record));
    consume(format_csv(exp, record));
    consume(format_trace(exp, record));
    consume(format_html(exp, record));
    g_sink = g_sink + record.checks_passed() + record.expectations_held();
  } catch (const RunError& e) {
    consume(e.what());  // a correct answer: the CLI exits 3 with this message
  }
}

void process(std::string_view text) {
  const std::string file = "fuzz/experiment.yaml";
  Experiment exp;
  try {
    exp = load_string(text, file);
  } catch (const InvalidExperiment& e) {
    // A correct answer: the CLI prints it (check, run) or its JSON form (check --format json).
    consume(e.what());
    consume(format_load_errors_json(file, e.diagnostics));
    return;
  }
  Findings findings = analyze(exp);
  consume(format_findings(findings, exp.source));
  consume(format_counts(count_findings(findings)));
  consume(format_findings_json(exp, findings));
  consume(format_op_list(exp));
  if (small_enough(exp)) run_on_host(exp, findings);
}

}  // namespace

// The C library's file openers, interposed for the guard above (the sanitizer runtime's own
// interceptors, where it has one, are weak and give way; RTLD_NEXT reaches the C library).
extern "C" {

FILE* fopen(const char* path, const char* mode) {
  static auto real = next(&fopen, "fopen");
  return allowed(path, fopen_writes(mode)) ? real(path, mode) : nullptr;
}

FILE* fopen64(const char* path, const char* mode) {
  static auto real = next(&fopen64, "fopen64");
  return allowed(path, fopen_writes(mode)) ? real(path, mode) : nullptr;
}

int open(const char* path, int flags, ...) {
  static auto real = next(&open, "open");
  mode_t mode = 0;
  if (open_has_mode(flags)) {
    va_list ap;
    va_start(ap, flags);
    mode = static_cast<mode_t>(va_arg(ap, int));
    va_end(ap);
  }
  return allowed(path, open_writes(flags)) ? real(path, flags, mode) : -1;
}

int open64(const char* path, int flags, ...) {
  static auto real = next(&open64, "open64");
  mode_t mode = 0;
  if (open_has_mode(flags)) {
    va_list ap;
    va_start(ap, flags);
    mode = static_cast<mode_t>(va_arg(ap, int));
    va_end(ap);
  }
  return allowed(path, open_writes(flags)) ? real(path, flags, mode) : -1;
}

int openat(int dir, const char* path, int flags, ...) {
  static auto real = next(&openat, "openat");
  mode_t mode = 0;
  if (open_has_mode(flags)) {
    va_list ap;
    va_start(ap, flags);
    mode = static_cast<mode_t>(va_arg(ap, int));
    va_end(ap);
  }
  // Relative to a directory descriptor: only absolute paths can be judged here; none of
  // streamlab's code uses openat with a relative path on the experiment's behalf.
  bool judged = path[0] == '/' || dir == AT_FDCWD;
  return !judged || allowed(path, open_writes(flags)) ? real(dir, path, flags, mode) : -1;
}

// UBSan prints a finding's stack only when asked; a finding without one cannot be classified.
const char* __ubsan_default_options() { return "print_stacktrace=1"; }

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  if (!realpath(STREAMLAB_SOURCE_DIR, g_root)) g_root[0] = '\0';
  const std::string_view exact = "-exact_artifact_path=";
  for (int i = 1; i < *argc; ++i)
    if (std::string_view a = (*argv)[i]; a.starts_with(exact))
      g_exact_artifact = a.substr(exact.size());
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  g_guard = true;
  process(std::string_view(reinterpret_cast<const char*>(data), size));
  g_guard = false;
  return 0;
}

}  // extern "C"
