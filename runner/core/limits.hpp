#pragma once
// The bounds on what an experiment may ask for. An experiment file is untrusted input (a grader
// runs what a student wrote): every structure that repeats or nests, and every file it names, has
// a limit here, so that loading, checking and running stay linear (or near it) in the size of the
// file and can neither exhaust the stack nor the memory. Each limit is reported, where it is hit,
// as a located error that names it. docs/safety.md says why each value is what it is.
#include <cstddef>
#include <cstdint>

namespace streamlab::limits {

// --- files ---
inline constexpr int64_t kExperimentFileBytes = 16 << 20;  // the experiment file itself
inline constexpr int64_t kSourceFileBytes = 1 << 20;     // a kernel `file:` or a header it includes
inline constexpr int kIncludedFiles = 64;                // headers included by one kernel, in all
inline constexpr int64_t kKernels = 256;                 // user kernels (`kernels:`)
inline constexpr int64_t kKernelSourceBytes = 16 << 20;  // their sources and headers, all together
// What compiling one user kernel may take (NVRTC runs in a child process under these bounds): a
// template that instantiates without end must not take the machine with it.
inline constexpr int64_t kCompileMemoryBytes = int64_t{4} << 30;
inline constexpr int64_t kCompileCpuSeconds = 300;

// --- nesting (each level is a stack frame of a recursive parser) ---
inline constexpr int kExpressionDepth = 200;  // parentheses and unary operators in one expression
inline constexpr int kBlockDepth = 16;        // loops and graphs nested in one another
inline constexpr size_t kExpectationChars = 4096;  // one line of `expect:`
// Checks and expectations after their loops are expanded: each check reads whole buffers.
inline constexpr int64_t kItems = 10'000;
// Ops named by the op sets of expectations (`window(in, out)` names every in[k] and out[k]), in
// all: each is kept, and each is read again per repetition when the expectation is evaluated.
inline constexpr int64_t kExpectationOpRefs = 4'000'000;

// --- the YAML document ---
// Nodes after expanding aliases (`*name`): an alias repeats its anchor's whole subtree, so a few
// lines can stand for billions of nodes.
inline constexpr int64_t kYamlNodes = 1'000'000;

// --- declarations ---
inline constexpr int64_t kStreams = 1024;  // declared, with the default streams
inline constexpr int64_t kEvents = 4096;
inline constexpr int64_t kBuffers = 4096;
inline constexpr int64_t kArray = 4096;  // elements of one `array:`
inline constexpr int64_t kParams = 4096;

// --- the op list ---
inline constexpr int64_t kExpandedOps = 100'000;  // after loops, graph bodies included
// Bodies repeated by loops, in all (nested loops multiply): a body that adds no op still costs a
// pass, and ten billion of them would never end.
inline constexpr int64_t kLoopIterations = 1'000'000;
inline constexpr int64_t kRepeatsPerOp = 1'000'000;  // a graph's `replays`, a launch's `times`
// Operations issued in one repetition: each op once, a graph's body ops `replays` times, a
// launch `times` times. The host backend performs every one of them.
inline constexpr int64_t kIssuedPerRepetition = 10'000'000;
// Per-op samples kept over a run: ops x (warm-up + timed repetitions).
inline constexpr int64_t kSamples = 2'000'000;
inline constexpr int64_t kRepetitions = 1'000'000;

// --- sweeps (each point is a whole run, kept for the reports) ---
inline constexpr int64_t kSweepPoints = 1024;  // points of the product of the axes
// Per-op samples kept over every point of a sweep together (each point is bounded by kSamples).
inline constexpr int64_t kSweepSamples = 8'000'000;
inline constexpr int64_t kSweepPlots = 16;  // measures plotted against the swept params
// `streamlab compare`: a results file it reads (a sweep of 1024 points with their samples fits),
// and the files of a folder.
inline constexpr int64_t kResultsFileBytes = int64_t{1} << 30;
inline constexpr int64_t kResultsFiles = 10'000;
// A device profile (`--profile`, what `calibrate` writes: a few KiB).
inline constexpr int64_t kProfileFileBytes = 1 << 20;

// --- time ---
inline constexpr int64_t kDefaultTimeoutSeconds = 60;  // a lab's experiment runs in seconds
// What an experiment's own `timeout:` may ask for: the file is untrusted, so it may not give itself
// hours; whoever runs it may (--timeout, up to a day, or 0 for none).
inline constexpr int64_t kExperimentTimeoutSeconds = 600;
inline constexpr int64_t kMaxTimeoutSeconds = 86'400;

}  // namespace streamlab::limits
