// `sweep:`, the params an experiment is run over and what is plotted against them:
//   sweep:
//     params: {K: [1, 2, 4, 8], MIB: [64, "2*MIB"]}
//     plot: ["duration(k[0])", "bandwidth(in[0])"]
// and the command line's --sweep NAME=V1,V2,... and --plot EXPR, which take their place.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "runner/check/expect.hpp"
#include "runner/context/load_context.hpp"
#include "runner/core/errors.hpp"
#include "runner/core/expr.hpp"
#include "runner/core/limits.hpp"
#include "runner/core/suggest.hpp"
#include "runner/load/load.hpp"

namespace streamlab {
namespace {

std::vector<std::string> param_names(const Experiment& exp) {
  std::vector<std::string> names;
  for (const auto& p : exp.params) names.push_back(p.first);
  return names;
}

// Why `name` cannot be swept, or "".
std::string axis_name_problem(const Experiment& exp, const std::vector<SweepAxis>& axes,
                              const std::string& name) {
  auto names = param_names(exp);
  if (std::find(names.begin(), names.end(), name) == names.end())
    return fmt::format("the experiment has no param '{}'{}{}", name, did_you_mean(name, names),
                       names.empty() ? "" : " (params: " + join_some(names) + ")");
  for (const auto& a : axes)
    if (a.name == name) return fmt::format("param '{}' is swept twice", name);
  return "";
}

// Why the axes' product is too many points, or "".
std::string size_problem(const std::vector<SweepAxis>& axes) {
  int64_t points = 1;
  for (const auto& a : axes) {
    points *= static_cast<int64_t>(a.values.size());  // each factor <= kSweepPoints: no overflow
    if (points > limits::kSweepPoints)
      return fmt::format("the sweep has more than {} points; a sweep runs at most {}",
                         limits::kSweepPoints, limits::kSweepPoints);
  }
  return "";
}

void load_axis(LoadContext& ctx, const YAML::Node& key, const YAML::Node& list,
               std::vector<SweepAxis>& axes) {
  std::string name = ctx.scalar(key, "swept param").value_or("");
  if (name.empty()) return;
  if (auto problem = axis_name_problem(ctx.exp, axes, name); !problem.empty())
    return ctx.error(key, "sweep: " + problem);
  if (!list.IsSequence() || list.size() == 0)
    return ctx.error(list, fmt::format("sweep: param '{}': expected a list of values ([1, 2, 4]), "
                                       "got {}",
                                       name, describe_node(list)));
  SweepAxis axis{name, {}, ctx.loc(key)};
  for (const auto& v : list) {
    if (static_cast<int64_t>(axis.values.size()) >= limits::kSweepPoints)
      return ctx.error(list, fmt::format("sweep: param '{}' has more than {} values", name,
                                         limits::kSweepPoints));
    auto value = ctx.integer(v, fmt::format("sweep: param '{}'", name));
    if (!value) continue;
    if (std::find(axis.values.begin(), axis.values.end(), *value) != axis.values.end())
      return ctx.error(v, fmt::format("sweep: param '{}' takes the value {} twice", name, *value));
    axis.values.push_back(*value);
  }
  axes.push_back(std::move(axis));
}

void load_plots(LoadContext& ctx, const YAML::Node& node, std::vector<SweepPlot>& plots) {
  if (!node.IsDefined()) return;
  if (!node.IsSequence())
    return ctx.error(node, fmt::format("sweep: plot: expected a list of measures "
                                       "([\"duration(k[0])\"]), got {}",
                                       describe_node(node)));
  for (const auto& item : node) {
    if (!ctx.room_for(item, plots, limits::kSweepPlots, "plots")) return;
    if (auto root = load_measure(ctx, item, "plot"))
      plots.push_back({item.Scalar(), ctx.loc(item), root});
  }
}

}  // namespace

void load_sweep(LoadContext& ctx, const YAML::Node& node, const LoadOptions& options) {
  if (!node.IsDefined() || node.IsNull()) return;
  MapReader r(ctx, node, "sweep", {"params", "plot?"});
  if (!r.ok()) return;
  if (options.sweep_point) {
    // The axes were read once, before the points; the plots name the point's own ops (out[K-1]),
    // so they are read again at each point, where their errors have a line and a column.
    load_plots(ctx, r.get("plot"), ctx.exp.sweep.plots);
    return;
  }
  YAML::Node params = r.require("params");
  if (!params.IsMap() || params.size() == 0)
    return ctx.error(params, fmt::format("sweep: params: expected a mapping {{NAME: [values]}}, "
                                         "got {}",
                                         describe_node(params)));
  SweepSpec spec;
  std::set<std::string, std::less<>> seen;  // also the axes that were refused: K twice is an error
  for (auto it = params.begin(); it != params.end(); ++it) {
    if (it->first.IsScalar() && !seen.insert(it->first.Scalar()).second) {
      ctx.error(it->first, fmt::format("sweep: param '{}' is swept twice", it->first.Scalar()));
      continue;
    }
    // A --set pins the axis (it is left out): its values, read with the pinned value, could
    // collide (`[64, 2*N]` with N=128), and a child run of one point sets every axis so.
    if (it->first.IsScalar() &&
        std::any_of(options.overrides.begin(), options.overrides.end(),
                    [&](const auto& o) { return o.first == it->first.Scalar(); }))
      continue;
    load_axis(ctx, it->first, it->second, spec.axes);
  }
  if (auto problem = size_problem(spec.axes); !problem.empty()) ctx.error(params, "sweep: " + problem);
  load_plots(ctx, r.get("plot"), spec.plots);
  ctx.exp.sweep = std::move(spec);
}

namespace {

// "1,2,4" -> {"1", "2", "4"}.
std::vector<std::string> split_values(std::string_view text) {
  std::vector<std::string> out(1);
  for (char c : text) {
    if (c == ',')
      out.emplace_back();
    else
      out.back() += c;
  }
  return out;
}

SweepAxis axis_from_arg(const Experiment& exp, const std::vector<SweepAxis>& axes,
                        const std::string& arg) {
  auto eq = arg.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
    throw CommandLineError(fmt::format("--sweep {}: expected NAME=V1,V2,... (e.g. --sweep K=1,2,4,8)", arg));
  SweepAxis axis{arg.substr(0, eq), {}, {"command line", 0, 0}};
  if (auto problem = axis_name_problem(exp, axes, axis.name); !problem.empty())
    throw CommandLineError(fmt::format("--sweep {}: {}", arg, problem));
  ParamScope params;
  for (const auto& [name, value] : exp.params) params[name] = value;
  for (const std::string& text : split_values(std::string_view(arg).substr(eq + 1))) {
    if (static_cast<int64_t>(axis.values.size()) >= limits::kSweepPoints)
      throw CommandLineError(fmt::format("--sweep {}: more than {} values", axis.name,
                                         limits::kSweepPoints));
    auto value = evaluate(text, params);
    if (auto* error = std::get_if<ExprError>(&value))
      throw CommandLineError(fmt::format("--sweep {}: value '{}': {}", axis.name, text, error->message));
    int64_t v = std::get<int64_t>(value);
    if (std::find(axis.values.begin(), axis.values.end(), v) != axis.values.end())
      throw CommandLineError(fmt::format("--sweep {}: the value {} is given twice", axis.name, v));
    axis.values.push_back(v);
  }
  return axis;
}

bool is_set(const std::vector<std::string>& sets, const std::string& name) {
  return std::any_of(sets.begin(), sets.end(), [&](const std::string& s) { return s.substr(0, s.find('=')) == name; });
}

}  // namespace

SweepSpec sweep_from_args(const Experiment& exp, const std::vector<std::string>& sweeps,
                          const std::vector<std::string>& plots, const std::vector<std::string>& sets) {
  SweepSpec spec;
  if (sweeps.empty())  // the experiment's own sweep, less the params --set pins
    for (const auto& axis : exp.sweep.axes)
      if (!is_set(sets, axis.name)) spec.axes.push_back(axis);
  if (sweeps.empty() && spec.axes.empty()) {
    if (!plots.empty()) throw CommandLineError("--plot: only with a sweep (--sweep NAME=V1,V2,... or the experiment's `sweep:`)");
    return spec;
  }
  for (const auto& arg : sweeps) {
    spec.axes.push_back(axis_from_arg(exp, spec.axes, arg));
    if (is_set(sets, spec.axes.back().name))
      throw CommandLineError(fmt::format("--sweep {}: param '{}' is also given by --set; sweep it or set it",
                                         arg, spec.axes.back().name));
  }
  if (auto problem = size_problem(spec.axes); !problem.empty()) throw CommandLineError("--sweep: " + problem);
  if (plots.empty()) spec.plots = exp.sweep.plots;
  for (const auto& text : plots) {
    if (static_cast<int64_t>(spec.plots.size()) >= limits::kSweepPlots)
      throw CommandLineError(fmt::format("--plot: at most {} plots", limits::kSweepPlots));
    std::string error;
    auto root = parse_measure(exp, text, &error);
    if (!root) throw CommandLineError(fmt::format("--plot {}: {}", text, error));
    spec.plots.push_back({text, {"command line", 0, 0}, root});
  }
  return spec;
}

}  // namespace streamlab
