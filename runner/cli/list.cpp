// `streamlab list`: the tables the program itself uses, printed: ops, kernels, checks,
// expectation functions, env variables and the diagnostics of check.
#include <iostream>

#include <fmt/format.h>

#include "ops/kernels/kernel.hpp"
#include "ops/op_kind.hpp"
#include "runner/check/checks.hpp"
#include "runner/check/expect.hpp"
#include "runner/cli/cli.hpp"
#include "runner/cli/commands.hpp"
#include "runner/context/load_context.hpp"
#include "runner/core/findings.hpp"
#include "runner/core/suggest.hpp"
#include "runner/load/environment.hpp"

namespace streamlab {
namespace {

std::string op_fields(const OpKind& k) {
  std::vector<std::string> keys(k.keys.begin(), k.keys.end());
  keys.emplace_back("id?");
  return keys.empty() ? "" : join(keys);
}

std::string kernel_params(const KernelKind& k) {
  std::string out;
  for (const auto& p : k.params) {
    out += fmt::format("      {:<6} {:<5} {}\n", p.name, param_kind_name(p.kind), p.doc);
  }
  return out;
}

}  // namespace

int cmd_list() {
  std::string out = "ops (fields; ? = optional)\n";
  for (const OpKind* k : op_table())
    out += fmt::format("  {:<18} {}\n  {:<18} {}\n", k->name, op_fields(*k), "", k->summary);
  out +=
      "\nkernels (args: in, out, inout = a buffer or element range read, written, or both; int = "
      "integer "
      "expression; real = number)\n";
  for (const auto& k : kernel_table())
    out += fmt::format("  {}\n    {}\n{}", k.name, k.summary, kernel_params(k));
  out += "\nchecks\n";
  for (const auto& c : check_kinds())
    out += fmt::format("  {:<10} {:<14} {}\n", c.name, c.fields, c.summary);
  out +=
      "\nexpect functions (medians over the timed repetitions; numbers, params, + - * /, < <= > >= "
      "== !=, and or not)\n";
  for (const auto& f : expectation_functions())
    out += fmt::format("  {:<24} {:<5} {}\n", f.signature, f.unit, f.meaning);
  out += "\nenv (the variables an experiment may set, before CUDA starts; nothing else)\n";
  for (const EnvSetting& e : env_settings())
    out += fmt::format("  {:<30} {:<42} {}\n", e.name, e.values, e.meaning);
  out +=
      "\ndiagnostics of check and run (acknowledge one an experiment shows on purpose with `allow: "
      "[CODE]` on "
      "its op or check)\n";
  for (const auto& c : finding_kinds())
    out += fmt::format("  {:<20} {:<8} {}\n", c.code, severity_name(c.severity), c.meaning);
  std::cout << out;
  return kExitOk;
}

}  // namespace streamlab
