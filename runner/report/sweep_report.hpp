#pragma once
// The reports of a sweep: every point's params, span and plotted measures in one table (console,
// CSV), one document (JSON, schemas/sweep.schema.json, each point's whole results inside), and in
// HTML an SVG plot of each against the swept params. Formatting only: the command measured and
// evaluated everything they show.
#include <string>
#include <vector>

#include "runner/core/experiment.hpp"
#include "runner/core/record.hpp"

namespace streamlab {

struct SweepPointRun {
  SweepPoint params;
  Experiment exp;  // resolved with the point's params
  RunRecord record;
  // Per plot of the sweep, its value on the run (NaN: not measured) and on the prediction (NaN:
  // not predicted).
  std::vector<double> plots, predicted_plots;
};

struct SweepRun {
  SweepSpec spec;
  std::vector<SweepPointRun> points;  // in sweep_points() order
  Verdict verdict() const;            // the worst point's
};

std::string format_sweep_console(const SweepRun& sweep);
std::string format_sweep_json(const SweepRun& sweep);
std::string format_sweep_csv(const SweepRun& sweep);
std::string format_sweep_html(const SweepRun& sweep);

}  // namespace streamlab
