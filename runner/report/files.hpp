#pragma once
// Machine-readable reports of a finished run. Formatting only; each is a stable, versioned
// interface (schema_version) that scripts can rely on.
#include <string>

#include "runner/execute/execute.hpp"

namespace streamlab {

inline constexpr int kResultsSchemaVersion = 1;

// JSON: the experiment, every op with its statistics and raw per-repetition samples, the spans
// and the checks. Described by schemas/results.schema.json. Times in ms; unmeasured values null.
std::string format_json(const Experiment& exp, const RunRecord& run);

// CSV: a header, then one row per op per timed repetition. Unmeasured values are empty.
std::string format_csv(const Experiment& exp, const RunRecord& run);

// Chrome trace event JSON (opens in Perfetto and chrome://tracing): a track per stream on the GPU
// and one for the host thread; the timed repetitions laid end to end on the host clock.
std::string format_trace(const Experiment& exp, const RunRecord& run);

// HTML: one self-contained file (no network, no JavaScript): an SVG timeline of the median
// repetition and the tables of the console report.
std::string format_html(const Experiment& exp, const RunRecord& run);

}  // namespace streamlab
