// load: YAML text -> Experiment. One short function per section of the file; each reports its
// problems and carries on, so the user gets every problem of the file in one run.
#include "runner/load/load.hpp"

#include <cerrno>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "ops/user_kernel.hpp"
#include "runner/check/checks.hpp"
#include "runner/check/expect.hpp"
#include "runner/context/load_context.hpp"
#include "runner/context/yaml_document.hpp"
#include "runner/core/limits.hpp"
#include "runner/core/safe_file.hpp"
#include "runner/core/suggest.hpp"
#include "runner/load/environment.hpp"

namespace streamlab {
namespace {

const SourceLoc kCommandLine{"command line", 0, 0};

std::optional<int64_t> apply_override(LoadContext& ctx, const std::string& name,
                                      const std::string& text) {
  auto value = evaluate(text, ctx.params);
  if (auto* v = std::get_if<int64_t>(&value)) return *v;
  bool list = text.find(',') != std::string::npos;  // K=1,2,4: a sweep written as a --set
  const ExprError& e = std::get<ExprError>(value);
  // A --set sees the params declared before its own, as the file's expression would.
  std::string message = e.unknown_name.empty()
                            ? e.message
                            : fmt::format("'{}' is not a param declared before '{}' in the file{}",
                                          e.unknown_name, name,
                                          ctx.params.empty() ? " (none is)" : "");
  ctx.diags.error(kCommandLine,
                  fmt::format("--set {}={}: {}{}", name, text, message,
                              list ? fmt::format("; to run over several values, --sweep {}={}", name, text) : ""));
  return std::nullopt;
}

// The value of param `name`: its --set override (the last one given wins) or its own expression.
std::optional<int64_t> param_value(LoadContext& ctx, const std::string& name,
                                   const YAML::Node& node, const LoadOptions& options) {
  auto set = std::find_if(options.overrides.rbegin(), options.overrides.rend(),
                          [&](const auto& o) { return o.first == name; });
  return set != options.overrides.rend() ? apply_override(ctx, name, set->second)
                                         : ctx.integer(node, name);
}

void check_overrides_exist(LoadContext& ctx, const LoadOptions& options) {
  std::vector<std::string> names;
  for (const auto& p : ctx.exp.params) names.push_back(p.first);
  for (const auto& [name, text] : options.overrides)
    if (std::find(names.begin(), names.end(), name) == names.end())
      ctx.diags.error(kCommandLine,
                      fmt::format("--set {}={}: the experiment has no param '{}'{}{}", name, text,
                                  name, did_you_mean(name, names),
                                  names.empty() ? "" : " (params: " + join(names) + ")"));
}

void load_params(LoadContext& ctx, const YAML::Node& node, const LoadOptions& options) {
  struct Declared {
    std::string name;
    SourceLoc loc;
  };
  std::vector<Declared> declared;
  if (node.IsMap()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!ctx.room_for(it->first, declared, limits::kParams, "params")) break;
      if (!check_declared_name(ctx, it->first, declared, "param")) continue;
      std::string name = it->first.Scalar();
      declared.push_back({name, ctx.loc(it->first)});
      auto value = param_value(ctx, name, it->second, options);
      if (value)
        ctx.params[name] = *value;
      else
        ctx.broken_params.insert(name);  // its uses are not reported again
      ctx.exp.params.emplace_back(name, value.value_or(0));
    }
  } else if (node.IsDefined() && !node.IsNull()) {
    ctx.error(node, fmt::format("params: expected a mapping {{NAME: integer expression}}, got {}",
                                describe_node(node)));
  }
  check_overrides_exist(ctx, options);
}

void load_streams(LoadContext& ctx, const YAML::Node& node) {
  ctx.exp.streams.push_back(
      {.name = std::string(kLegacyStreamName), .loc = {ctx.exp.file, 0, 0}, .legacy = true});
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsMap()) {
    ctx.error(node, fmt::format("streams: expected a mapping {{NAME: {{flags: ...}}}}, got {}",
                                describe_node(node)));
    return;
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it->first.IsScalar() &&
        (it->first.Scalar() == kLegacyStreamName || it->first.Scalar() == kPerThreadStreamName)) {
      ctx.error(it->first,
                fmt::format(
                    "stream name '{}' is reserved for the {} default stream; use it without "
                    "declaring it",
                    it->first.Scalar(),
                    it->first.Scalar() == kLegacyStreamName ? "legacy (CUDA's stream 0)"
                                                            : "per-thread (cudaStreamPerThread)"));
      continue;
    }
    if (!check_declared_name(ctx, it->first, ctx.exp.streams, "stream")) continue;
    Stream s{.name = it->first.Scalar(), .loc = ctx.loc(it->first)};
    MapReader r(ctx, it->second, fmt::format("stream '{}'", s.name),
                {"flags?", "priority?", "array?"});
    if (r.has("flags"))
      s.non_blocking =
          ctx.choice(r.get("flags"), "stream flags", {"blocking", "non-blocking"}).value_or(0) == 1;
    if (r.has("priority")) s.priority = ctx.integer(r.get("priority"), "stream priority");
    for (const auto& name : array_names(ctx, r, s.name)) {
      if (!ctx.room_for(it->first, ctx.exp.streams, limits::kStreams, "streams")) break;
      s.name = name;
      ctx.exp.streams.push_back(s);
    }
  }
}

// NAME: value, each NAME one of the settings an experiment may change (environment.hpp), once.
void load_env_entry(LoadContext& ctx, const YAML::Node& key, const YAML::Node& value) {
  std::string name = key.IsScalar() ? key.Scalar() : "";
  const EnvSetting* setting = find_env_setting(name);
  if (!setting) {
    std::vector<std::string> names;
    for (const EnvSetting& s : env_settings()) names.emplace_back(s.name);
    return ctx.error(
        key,
        fmt::format("env: {} is not a variable an experiment may set{} (it may set: {}); library "
                    "paths and loader settings come from the environment streamlab is started in",
                    describe_node(key), did_you_mean(name, names), join(names)));
  }
  auto earlier = std::find_if(ctx.exp.env.begin(), ctx.exp.env.end(),
                              [&](const auto& v) { return v.first == name; });
  if (earlier != ctx.exp.env.end())
    return ctx.error(key, fmt::format("env: {} is set twice", name));
  if (!value.IsScalar())
    return ctx.error(value, fmt::format("env: {} needs a value ({}), got {}", name, setting->values,
                                        describe_node(value)));
  if (!setting->valid(value.Scalar()))
    return ctx.error(value, fmt::format("env: {}: {} is not a valid value; expected {}", name,
                                        describe_node(value), setting->values));
  ctx.exp.env.emplace_back(name, value.Scalar());
}

void load_env(LoadContext& ctx, const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsMap()) {
    ctx.error(node,
              fmt::format("env: expected a mapping {{NAME: value}}, got {}", describe_node(node)));
    return;
  }
  for (auto it = node.begin(); it != node.end(); ++it) load_env_entry(ctx, it->first, it->second);
}

void load_events(LoadContext& ctx, const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsMap()) {
    ctx.error(node, fmt::format("events: expected a mapping {{NAME: {{}}}}, got {}",
                                describe_node(node)));
    return;
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!check_declared_name(ctx, it->first, ctx.exp.events, "event")) continue;
    Event e{.name = it->first.Scalar(), .loc = ctx.loc(it->first)};
    MapReader r(ctx, it->second, fmt::format("event '{}'", e.name), {"flags?", "array?"});
    if (r.has("flags")) {  // one flag, or a list of them
      YAML::Node flags = r.get("flags");
      auto read = [&](const YAML::Node& f) {
        auto i = ctx.choice(f, "event flag", {"blocking-sync", "disable-timing"});
        if (i) (*i == 0 ? e.blocking_sync : e.disable_timing) = true;
      };
      if (flags.IsSequence())
        for (const auto& f : flags) read(f);
      else
        read(flags);
    }
    for (const auto& name : array_names(ctx, r, e.name)) {
      if (!ctx.room_for(it->first, ctx.exp.events, limits::kEvents, "events")) break;
      e.name = name;
      ctx.exp.events.push_back(e);
    }
  }
}

}  // namespace

// Defined in load_buffers.cpp and load_ops.cpp.
void load_buffers(LoadContext& ctx, const YAML::Node& node);
void load_ops(LoadContext& ctx, const YAML::Node& node);
void load_sweep(LoadContext& ctx, const YAML::Node& node, const LoadOptions& options);  // load_sweep.cpp
void load_communicators(LoadContext& ctx, const YAML::Node& node);  // ops/nccl.cpp

namespace {

int64_t load_count(LoadContext& ctx, MapReader& top, std::string_view key, int64_t fallback,
                   int64_t minimum) {
  if (!top.has(key)) return fallback;
  auto v = ctx.integer(top.get(key), key);
  if (v && *v < minimum)
    ctx.error(top.get(key), fmt::format("{}: {} is less than {}", key, *v, minimum));
  return v.value_or(fallback);
}

void load_top(LoadContext& ctx, const YAML::Node& root, const LoadOptions& options) {
  if (root.IsMap() && root["rubric"])
    return ctx.error(root["rubric"],
                     "this file is a rubric, not an experiment: grade a submission with it, "
                     "`streamlab grade SUBMISSION --rubric FILE`");
  MapReader top(ctx, root, "the experiment",
                {"name", "description?", "params?", "env?", "repeat?", "warmup?", "timeout?",
                 "gate?", "timer?", "streams?", "buffers?", "events?", "kernels?", "communicators?",
                 "ops", "checks?", "expect?", "sweep?"});
  if (!top.ok() || root.IsNull()) {
    if (root.IsNull())
      ctx.diags.error({ctx.exp.file, 1, 1},
                      "the experiment is empty; expected a mapping with "
                      "'name' and 'ops'");
    return;
  }
  ctx.exp.name = ctx.scalar(top.require("name"), "name").value_or("");
  ctx.exp.description = ctx.scalar(top.get("description"), "description").value_or("");
  load_params(ctx, top.get("params"), options);
  ctx.exp.repeat = load_count(ctx, top, "repeat", ctx.exp.repeat, 1);
  ctx.exp.warmup = load_count(ctx, top, "warmup", ctx.exp.warmup, 0);
  ctx.exp.timeout_s = load_count(ctx, top, "timeout", 0, 1);
  if (ctx.exp.timeout_s > limits::kExperimentTimeoutSeconds)
    ctx.error(top.get("timeout"),
              fmt::format("timeout: {} s; an experiment may ask for at most {} (a longer run needs "
                          "--timeout on the command line)",
                          ctx.exp.timeout_s, limits::kExperimentTimeoutSeconds));
  if (top.has("gate"))
    ctx.exp.gate = ctx.choice(top.get("gate"), "gate", {"false", "true"}).value_or(1) == 1;
  if (top.has("timer")) {
    static const std::vector<std::string> timers = {"cupti", "events", "none"};
    if (auto t = ctx.choice(top.get("timer"), "timer", timers)) ctx.exp.timer = timers[*t];
  }
  load_env(ctx, top.get("env"));
  load_streams(ctx, top.get("streams"));
  load_buffers(ctx, top.get("buffers"));
  load_events(ctx, top.get("events"));
  load_user_kernels(ctx, top.get("kernels"));
  load_communicators(ctx, top.get("communicators"));
  load_ops(ctx, top.require("ops"));
  load_checks(ctx, top.get("checks"));
  load_expectations(ctx, top.get("expect"));
  load_sweep(ctx, top.get("sweep"), options);
  std::string too_many = repetitions_problem(ctx.exp, ctx.exp.repeat, ctx.exp.warmup);
  if (!too_many.empty())
    ctx.error(top.has("repeat") ? top.get("repeat") : top.get("warmup"), too_many);
}

}  // namespace

std::string repetitions_problem(const Experiment& exp, int64_t repeat, int64_t warmup) {
  if (repeat > limits::kRepetitions || warmup > limits::kRepetitions)
    return fmt::format("{} timed and {} warm-up repetitions; at most {} of each", repeat, warmup,
                       limits::kRepetitions);
  int64_t ops = std::max<int64_t>(1, static_cast<int64_t>(exp.ops.size()));
  if ((repeat + warmup) * ops <= limits::kSamples) return "";
  return fmt::format(
      "{} repetitions of {} ops would keep {} samples; at most {} (fewer repetitions, or fewer "
      "ops)",
      repeat + warmup, ops, (repeat + warmup) * ops, limits::kSamples);
}

struct ParsedExperiment {
  std::string file, text;
  YAML::Node root;
};

namespace {

[[noreturn]] void throw_diagnostics(Diagnostics&& diags, const std::string& source) {
  std::string formatted = format_diagnostics(diags, source);  // before diags is moved from
  throw InvalidExperiment(std::move(formatted), std::move(diags));
}

ParsedExperiment parse_text(std::string_view text, const std::string& file) {
  ParsedExperiment parsed{file, std::string(text), {}};
  Diagnostics diags;
  parsed.root = parse_document(parsed.text, file, diags);
  if (diags.has_errors()) throw_diagnostics(std::move(diags), parsed.text);
  return parsed;
}

Experiment resolve(const ParsedExperiment& parsed, const LoadOptions& options) {
  Experiment exp;
  exp.file = parsed.file;
  exp.source = parsed.text;
  Diagnostics diags;
  LoadContext ctx(exp, diags);
  load_top(ctx, parsed.root, options);
  if (diags.has_errors()) throw_diagnostics(std::move(diags), exp.source);
  return exp;
}

// A file's text, or InvalidExperiment saying why it cannot be read.
std::string read_text(const std::string& path) {
  FileRead file =
      read_experiment_file(path);  // a FIFO or a device is refused, not waited on or read for ever
  if (file.ok()) return std::move(file.text);
  Diagnostics diags;
  diags.error({path, 0, 0}, file.error == ENOENT
                                ? "cannot read the experiment file (does it exist?)"
                                : "the experiment file " + file.refusal);
  throw_diagnostics(std::move(diags), "");
}

// load_string shows every diagnostic with a line of the experiment; one in a kernel's file, or in
// a header a kernel includes, gets that file's line instead.
template <class F>
auto with_kernel_sources(const ParsedExperiment& parsed, F&& f) {
  try {
    return f();
  } catch (const InvalidExperiment& e) {
    throw InvalidExperiment(format_with_kernel_sources(e.diagnostics, parsed.file, parsed.text),
                            e.diagnostics);
  }
}

}  // namespace

Experiment load_string(std::string_view text, const std::string& file, const LoadOptions& options) {
  return resolve(parse_text(text, file), options);
}

std::shared_ptr<const ParsedExperiment> parse_file(const std::string& path) {
  return std::make_shared<const ParsedExperiment>(parse_text(read_text(path), path));
}

Experiment instantiate(const ParsedExperiment& parsed, const LoadOptions& options) {
  return with_kernel_sources(parsed, [&] { return resolve(parsed, options); });
}

Experiment load_file(const std::string& path, const LoadOptions& options) {
  return instantiate(*parse_file(path), options);
}

}  // namespace streamlab
