// How findings are shown: compiler-style text for people, JSON for tools. Apart from analyze.cpp,
// which only finds them.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runner/report/check_report.hpp"
#include "runner/report/json_text.hpp"

#include "runner/analyze/analyze.hpp"
#include "runner/analyze/fixes.hpp"

namespace streamlab {
namespace {

using json = nlohmann::ordered_json;

std::string message_of(const Finding& f) {
  std::string m = f.message;
  if (f.repeats > 1)
    m += fmt::format(" ({} times, from loop iterations; the first is shown)", f.repeats);
  return m + " [" + f.code + "]";
}

// "  help: first line" and the rest of the fix (YAML) indented beneath it.
std::string format_fix(const std::string& fix) {
  if (fix.empty()) return "";
  std::string out = "  help: ";
  for (char c : fix) {
    out += c;
    if (c == '\n') out += "          ";
  }
  return out + "\n";
}

json loc_json(const SourceLoc& loc) {
  return {{"file", loc.file}, {"line", loc.line}, {"col", loc.col}};
}

}  // namespace

std::string format_findings(const Findings& findings, std::string_view source) {
  std::string out;
  SourceLines lines(source);
  for (const auto& f : findings.items()) {
    if (f.acknowledged) continue;
    out += format_diagnostic({f.severity, f.loc, message_of(f)}, lines);
    for (const auto& r : f.related)
      out += format_diagnostic({Severity::note, r.loc, r.message}, lines);
    out += format_fix(format_fix_text(f, source));
  }
  return out;
}

std::string format_counts(const FindingCounts& n) {
  auto plural = [](int k, std::string_view word) {
    return fmt::format("{} {}{}", k, word, k == 1 ? "" : "s");
  };
  std::vector<std::string> parts;
  if (n.errors) parts.push_back(plural(n.errors, "error"));
  if (n.warnings) parts.push_back(plural(n.warnings, "warning"));
  if (n.notes) parts.push_back(plural(n.notes, "note"));
  std::string out = parts.empty() ? "no diagnostics" : fmt::format("{}", fmt::join(parts, ", "));
  if (n.acknowledged) out += fmt::format(" ({} acknowledged)", n.acknowledged);
  return out;
}

json findings_json(const Experiment& exp, const Findings& findings) {
  json items = json::array();
  for (const auto& f : findings.items()) {
    json item = {{"severity", severity_name(f.severity)}, {"code", f.code}};
    item.update(loc_json(f.loc));
    item["message"] = f.message;
    json ops = json::array();
    for (int i : f.ops) {
      json o = {{"id", exp.ops[i].id}};
      o.update(loc_json(exp.ops[i].loc));
      ops.push_back(o);
    }
    item["ops"] = ops;
    item["buffer"] = f.buffer >= 0 ? json(exp.buffers[f.buffer].name) : json(nullptr);
    json related = json::array();
    for (const auto& r : f.related) {
      json rel = loc_json(r.loc);
      rel["message"] = r.message;
      related.push_back(rel);
    }
    item["related"] = related;
    item["fix"] = f.fix.empty() ? json(nullptr) : json(format_fix_text(f, exp.source));
    json edits = json::array();
    for (const Edit& e : f.edits) {
      static const char* kKinds[] = {"insert_after", "insert_before", "append_op",
                                     "remove",       "replace",       "declare"};
      json edit = {{"kind", kKinds[static_cast<int>(e.kind)]}, {"text", e.text}};
      if (e.line > 0) edit["line"] = e.line;
      if (!e.section.empty()) edit["section"] = e.section;
      if (!e.old.empty()) edit["old"] = e.old;
      edits.push_back(edit);
    }
    item["edits"] = edits;
    item["repeats"] = f.repeats;
    item["acknowledged"] = f.acknowledged;
    items.push_back(item);
  }
  return items;
}

std::string format_findings_json(const Experiment& exp, const Findings& findings) {
  FindingCounts n = count_findings(findings);
  json items = findings_json(exp, findings);
  json doc = {{"file", exp.file},
              {"experiment", exp.name},
              {"valid", true},
              {"errors", n.errors},
              {"warnings", n.warnings},
              {"notes", n.notes},
              {"acknowledged", n.acknowledged},
              {"diagnostics", items}};
  return json_text(doc);
}

std::string format_load_errors_json(const std::string& file, const Diagnostics& diags) {
  json items = json::array();
  int errors = 0;
  for (const auto& d : diags.items()) {
    json item = {{"severity", severity_name(d.severity)}, {"code", "invalid"}};
    item.update(loc_json(d.loc));
    item["message"] = d.message;
    item["ops"] = json::array();
    item["buffer"] = nullptr;
    item["related"] = json::array();
    item["fix"] = nullptr;
    item["edits"] = json::array();
    item["repeats"] = 1;
    item["acknowledged"] = false;
    items.push_back(item);
    errors += d.severity == Severity::error;
  }
  json doc = {{"file", file},      {"experiment", nullptr}, {"valid", false},
              {"errors", errors},  {"warnings", 0},         {"notes", 0},
              {"acknowledged", 0}, {"diagnostics", items}};
  return json_text(doc);
}

}  // namespace streamlab
