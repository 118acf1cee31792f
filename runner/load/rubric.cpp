// Reading a rubric, and applying its items to a submission one at a time: an item that names what
// the submission does not have is a clear zero with its reason, never a failed grade.
#include "runner/load/rubric.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include <fmt/format.h>

#include "runner/check/checks.hpp"
#include "runner/check/expect.hpp"
#include "runner/check/score.hpp"
#include "runner/context/load_context.hpp"
#include "runner/context/yaml_document.hpp"
#include "runner/core/errors.hpp"
#include "runner/core/limits.hpp"
#include "runner/core/safe_file.hpp"

namespace streamlab {
namespace {

[[noreturn]] void refuse(Diagnostics& diags, const std::string& text) {
  std::string formatted = format_diagnostics(diags, text);
  throw InvalidExperiment(std::move(formatted), std::move(diags));
}

void read_params(LoadContext& ctx, const YAML::Node& node, Rubric& r) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsMap())
    return ctx.error(node, fmt::format("params: expected a mapping {{NAME: integer expression}}, "
                                       "got {}",
                                       describe_node(node)));
  for (auto it = node.begin(); it != node.end(); ++it) {
    std::string name = it->first.IsScalar() ? it->first.Scalar() : "";
    if (!is_identifier(name)) {
      ctx.error(it->first,
                fmt::format("param name {} is not an identifier", describe_node(it->first)));
      continue;
    }
    if (auto v = ctx.integer(it->second, name)) {
      ctx.params[name] = *v;
      r.params.emplace_back(name, *v);
      r.param_texts.push_back(it->second.Scalar());
    }
  }
}

// `peers: {NAME: FILE}`: each FILE read from the rubric's folder, as an experiment names files.
void read_peers(LoadContext& ctx, const YAML::Node& node, Rubric& r) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsMap())
    return ctx.error(node, fmt::format("peers: expected a mapping {{NAME: FILE}} (e.g. reference: "
                                       "solution.yaml), got {}",
                                       describe_node(node)));
  for (auto it = node.begin(); it != node.end(); ++it) {
    std::string name = it->first.IsScalar() ? it->first.Scalar() : "";
    auto file = ctx.scalar(it->second, "peer file");
    if (!is_identifier(name)) {
      ctx.error(it->first,
                fmt::format("peer name {} is not an identifier", describe_node(it->first)));
      continue;
    }
    if (!file) continue;
    auto rel = path_in_folder("", *file);
    FileRead read = read_in_experiment_folder(r.file, *file, {}, limits::kExperimentFileBytes);
    if (!rel || !read.ok()) {
      ctx.error(it->second,
                fmt::format("peer '{}': {} {}", name, *file,
                            rel ? read.refusal : "is not a file in the rubric's folder"));
      continue;
    }
    r.peers.emplace_back(name, folder_of(r.file) + "/" + *rel);
  }
}

int64_t read_count(LoadContext& ctx, MapReader& top, std::string_view key, int64_t fallback,
                   int64_t least, int64_t most) {
  if (!top.has(key)) return fallback;
  auto v = ctx.integer(top.get(key), key);
  if (v && (*v < least || *v > most))
    ctx.error(top.get(key), fmt::format("{}: {}; expected {} to {}", key, *v, least, most));
  return v.value_or(fallback);
}

void read_rubric(LoadContext& ctx, const YAML::Node& root, Rubric& r) {
  MapReader top(ctx, root, "the rubric",
                {"rubric", "description?", "params?", "repeat?", "warmup?", "timeout?", "timer?",
                 "gate?", "peers?", "checks?", "expect?"});
  if (!top.ok()) return;
  r.name = ctx.scalar(top.require("rubric"), "rubric").value_or("");
  r.description = ctx.scalar(top.get("description"), "description").value_or("");
  read_params(ctx, top.get("params"), r);
  r.repeat = read_count(ctx, top, "repeat", r.repeat, 1, limits::kRepetitions);
  r.warmup = read_count(ctx, top, "warmup", r.warmup, 0, limits::kRepetitions);
  r.timeout_s = read_count(ctx, top, "timeout", 0, 1, limits::kMaxTimeoutSeconds);
  if (top.has("timer")) {
    static const std::vector<std::string> timers = {"cupti", "events", "none"};
    if (auto t = ctx.choice(top.get("timer"), "timer", timers)) r.timer = timers[*t];
  }
  if (top.has("gate")) r.gate = ctx.choice(top.get("gate"), "gate", {"false", "true"}).value_or(1);
  read_peers(ctx, top.get("peers"), r);
  if (r.timer == "cupti" && !r.peers.empty())
    ctx.error(top.get("timer"),
              "timer: cupti traces one experiment per process; with peers, use "
              "events or none");
  for (const char* section : {"checks", "expect"})
    if (top.has(section) && !top.get(section).IsSequence())
      ctx.error(top.get(section), fmt::format("{}: expected a list, got {}", section,
                                              describe_node(top.get(section))));
}

// The value of `key` in a mapping, or a null node: reading a missing key of a YAML node is an
// exception in yaml-cpp, and an unapplied item may be anything.
YAML::Node field(const YAML::Node& map, std::string_view key) {
  if (map.IsMap())
    for (auto it = map.begin(); it != map.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == key) return it->second;
  return YAML::Node();
}

// What a rubric item says of itself, read without complaint (it did not apply): its id, name,
// points and visibility; for a loop, its body's points times its count.
ItemMeta lenient_meta(const YAML::Node& item, bool check, const ParamScope& params) {
  ItemMeta m;
  YAML::Node body = item;
  if (item.IsMap() && item.size() == 1 && item.begin()->first.IsScalar()) {
    std::string key = item.begin()->first.Scalar();
    if (key == "loop") {
      YAML::Node loop = item.begin()->second;
      YAML::Node inner = field(loop, check ? "checks" : "expect");
      auto count = field(loop, "count").IsScalar() ? evaluate(field(loop, "count").Scalar(), params)
                                                   : std::variant<int64_t, ExprError>(1);
      double each = 0;
      if (inner.IsSequence())
        for (const auto& i : inner) each += lenient_meta(i, check, params).points;
      m.points = each * static_cast<double>(std::max<int64_t>(
                            0, std::get_if<int64_t>(&count) ? std::get<int64_t>(count) : 1));
      return m;
    }
    if (check) body = item.begin()->second;
  }
  if (!body.IsMap()) return m;
  try {
    if (field(body, "id").IsScalar()) m.id = field(body, "id").Scalar();
    if (field(body, "name").IsScalar()) m.name = field(body, "name").Scalar();
    if (field(body, "points").IsScalar()) {
      auto v = evaluate(field(body, "points").Scalar(), params);  // `points: P*4` too
      m.points = std::get_if<int64_t>(&v)
                     ? static_cast<double>(std::max<int64_t>(0, std::get<int64_t>(v)))
                     : std::max(0.0, std::strtod(field(body, "points").Scalar().c_str(), nullptr));
    }
    if (field(body, "visibility").IsScalar()) {
      std::string v = field(body, "visibility").Scalar();
      m.visibility = v == "hidden"           ? Visibility::hidden
                     : v == "after_due_date" ? Visibility::after_due_date
                                             : Visibility::visible;
    }
  } catch (const YAML::Exception&) {
  }
  return m;
}

std::string lenient_title(const YAML::Node& item, bool check) {
  if (item.IsScalar()) return item.Scalar();
  if (!item.IsMap() || item.size() == 0) return check ? "check" : "expectation";
  if (check && item.begin()->first.IsScalar()) return "check " + item.begin()->first.Scalar();
  for (const char* key : {"that", "measure", "name"})
    if (field(item, key).IsScalar()) return field(item, key).Scalar();
  return "expectation";
}

}  // namespace

void set_rubric_params(Rubric& rubric,
                       const std::vector<std::pair<std::string, std::string>>& overrides) {
  // Not a structured binding: clang 14 (the sanitizer build) cannot capture one in a lambda.
  for (const auto& override_ : overrides) {
    const std::string& name = override_.first;
    if (std::none_of(rubric.params.begin(), rubric.params.end(),
                     [&](const auto& p) { return p.first == name; }))
      throw CommandLineError(fmt::format("--set {}={}: the rubric has no param '{}'", name,
                                         override_.second, name));
  }
  ParamScope scope;
  for (size_t i = 0; i < rubric.params.size(); ++i) {
    auto& [name, value] = rubric.params[i];
    std::string text = rubric.param_texts[i];
    for (const auto& [n, t] : overrides)
      if (n == name) text = t;
    auto v = evaluate(text, scope);
    if (auto* e = std::get_if<ExprError>(&v))
      throw CommandLineError(fmt::format("param {} = {}: {}", name, text, e->message));
    value = scope[name] = std::get<int64_t>(v);
  }
}

std::vector<std::string> declared_params(const std::string& path) {
  FileRead file = read_experiment_file(path);
  if (!file.ok()) return {};
  Diagnostics d;
  YAML::Node root = parse_document(file.text, path, d);
  std::vector<std::string> names;
  YAML::Node params = field(root, "params");
  if (!d.has_errors() && params.IsMap())
    for (auto it = params.begin(); it != params.end(); ++it)
      if (it->first.IsScalar()) names.push_back(it->first.Scalar());
  return names;
}

std::vector<ScoredItem> merge_rubric_items(const Experiment& sub, std::vector<ScoredItem> scored,
                                           const std::vector<UnappliedItem>& unapplied) {
  std::vector<ScoredItem> out;
  auto section = [&](bool check, size_t from, size_t count) {
    for (size_t k = 0; k <= count; ++k) {
      for (const UnappliedItem& u : unapplied)
        if (u.check == check && u.before == k)
          out.push_back(unscored_item(u.meta, u.check, u.title, u.loc, u.why));
      if (k < count && from + k < scored.size()) out.push_back(scored[from + k]);
    }
  };
  section(true, 0, sub.checks.size());
  section(false, sub.checks.size(), sub.expectations.size());
  gate_timing(out);  // a check that did not apply gates timing as one that failed
  make_titles_unique(out);
  return out;
}

Rubric load_rubric(const std::string& path) {
  FileRead file = read_experiment_file(path);
  Diagnostics diags;
  if (!file.ok()) {
    diags.error({path, 0, 0}, file.error == ENOENT ? "cannot read the rubric (does it exist?)"
                                                   : "the rubric " + file.refusal);
    refuse(diags, "");
  }
  Rubric r;
  r.file = path;
  r.source = file.text;
  Experiment scratch;
  scratch.file = path;
  scratch.source = file.text;
  LoadContext ctx(scratch, diags);
  YAML::Node root = parse_document(r.source, path, diags);
  if (!diags.has_errors()) read_rubric(ctx, root, r);
  if (diags.has_errors()) refuse(diags, r.source);
  return r;
}

std::vector<UnappliedItem> rubric_items(const Rubric& rubric, const std::string& why) {
  Diagnostics parsing;
  Experiment scratch;
  scratch.file = rubric.file;
  LoadContext ctx(scratch, parsing);
  YAML::Node root = parse_document(rubric.source, rubric.file, parsing);
  ParamScope scope;
  for (const auto& [name, value] : rubric.params) scope[name] = value;
  std::vector<UnappliedItem> out;
  for (bool check : {true, false}) {
    YAML::Node list = field(root, check ? "checks" : "expect");
    if (!list.IsSequence()) continue;
    for (const auto& item : list)
      out.push_back({lenient_meta(item, check, scope), check, lenient_title(item, check),
                     ctx.loc(item), why, 0});
  }
  return out;
}

std::vector<UnappliedItem> apply_rubric(const Rubric& rubric, Experiment& exp) {
  Diagnostics parsing;
  YAML::Node root = parse_document(rubric.source, rubric.file, parsing);
  ParamScope scope;
  for (const auto& [name, value] : exp.params) scope[name] = value;
  for (const auto& [name, value] : rubric.params) scope[name] = value;
  std::unordered_map<std::string, int> ids;
  std::vector<UnappliedItem> unapplied;
  for (bool check : {true, false}) {
    YAML::Node list = field(root, check ? "checks" : "expect");
    if (!list.IsSequence()) continue;
    for (const auto& item : list) {
      Diagnostics d;
      LoadContext ctx(exp, d);
      ctx.file = rubric.file;
      ctx.params = scope;
      ctx.item_ids = ids;
      size_t before = check ? exp.checks.size() : exp.expectations.size();
      YAML::Node one(YAML::NodeType::Sequence);
      one.push_back(item);
      check ? load_checks(ctx, one) : load_expectations(ctx, one);
      if (!d.has_errors()) {
        ids = std::move(ctx.item_ids);
        continue;
      }
      check ? exp.checks.resize(before) : exp.expectations.resize(before);
      const Diagnostic& first = d.items().front();
      unapplied.push_back({lenient_meta(item, check, scope), check, lenient_title(item, check),
                           ctx.loc(item),
                           fmt::format("not applied to the submission: {} (rubric line {})",
                                       first.message, first.loc.line),
                           before});
    }
  }
  return unapplied;
}

}  // namespace streamlab
