#include <cmath>

#include <fmt/format.h>

#include "ops/op_kind.hpp"
#include "runner/report/files.hpp"

namespace streamlab {
namespace {

std::string field(double v) { return std::isnan(v) ? "" : fmt::format("{:.6f}", v); }

// Names in the IR are identifiers, but a description or file name may hold anything.
std::string quoted(std::string_view s) {
  if (s.find_first_of(",\"\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string format_csv(const Experiment& exp, const RunRecord& run) {
  std::string out =
      "schema_version,repetition,op_index,op_id,kind,stream,line,issue_ms,return_ms,host_ms,"
      "device_start_ms,device_end_ms,device_ms,answer,source\n";
  // The measured repetitions, then the timeline model's one (source "predicted", repetition 1).
  std::vector<std::pair<const RepetitionSample*, std::string_view>> reps;
  for (const RepetitionSample& rep : run.reps) reps.emplace_back(&rep, "measured");
  if (run.predicted) reps.emplace_back(&run.predicted->run.reps.front(), "predicted");
  for (size_t r = 0; r < reps.size(); ++r)
    for (size_t i = 0; i < exp.ops.size(); ++i) {
      const Op& op = exp.ops[i];
      const OpSample& s = reps[r].first->ops[i];
      const size_t number = reps[r].second == "predicted" ? 1 : r + 1;
      std::string_view answer = s.answer < 0 ? ""
                                : s.answer   ? "done"
                                             : "not-ready";  // queries only
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", kResultsSchemaVersion,
                         number, i + 1, quoted(op.id), op.kind->name,
                         op.stream >= 0 ? exp.streams[op.stream].name : "", op.loc.line,
                         field(s.issue_ms), field(s.return_ms), field(s.host_ms()),
                         field(s.start_ms), field(s.end_ms), field(s.device_ms()), answer,
                         reps[r].second);
    }
  return out;
}

}  // namespace streamlab
