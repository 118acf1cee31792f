#include "runner/cli/completion.hpp"

#include <cctype>
#include <iostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "runner/core/version.hpp"

namespace streamlab {
namespace {

// An IsMember check shows in the type name as "TEXT:{auto,cuda,host}": its words.
std::vector<std::string> choices_of(const std::string& type_name) {
  auto open = type_name.find(":{");
  auto close = type_name.rfind('}');
  if (open == std::string::npos || close == std::string::npos || close < open) return {};
  return CLI::detail::split(type_name.substr(open + 2, close - open - 2), ',');
}

OptionModel option_model(CLI::Option& opt) {
  OptionModel o;
  for (auto& n : opt.get_lnames()) o.names.push_back("--" + n);
  for (auto& n : opt.get_snames()) o.names.push_back("-" + n);
  o.help = opt.get_description();
  if (opt.get_items_expected_min() == 0 && !opt.get_positional()) return o;  // a flag
  std::string type = opt.get_type_name();
  o.choices = choices_of(type);
  o.value = type.substr(0, type.find(':'));
  if (opt.get_positional()) {  // EXPERIMENT
    o.value = opt.get_name();
    for (char& ch : o.value) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  }
  o.file = opt.get_positional() || o.value.find("FILE") != std::string::npos ||
           o.value.ends_with(".json");
  return o;
}

CommandModel command_of(CLI::App& app) {
  CommandModel c{app.get_name(), app.get_description(), {}, {}};
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_group().empty()) continue;  // hidden
    (opt->get_positional() ? c.positionals : c.options).push_back(option_model(*opt));
  }
  return c;
}

// ---- bash ----

std::string words(const std::vector<std::string>& list) { return fmt::format("{}", fmt::join(list, " ")); }

std::vector<std::string> option_names(const CommandModel& c) {
  std::vector<std::string> names;
  for (auto& o : c.options) names.insert(names.end(), o.names.begin(), o.names.end());
  return names;
}

// What follows an option of `c` that takes a value: its choices, a file, or nothing to offer.
std::string bash_values(const CommandModel& c) {
  std::string out;
  for (auto& o : c.options) {
    if (o.value.empty()) continue;
    std::string reply = !o.choices.empty() ? fmt::format("COMPREPLY=($(compgen -W '{}' -- \"$cur\"))", words(o.choices))
                        : o.file           ? "COMPREPLY=($(compgen -f -- \"$cur\"))"
                                           : "COMPREPLY=()";
    out += fmt::format("        {}) {}; return ;;\n", fmt::join(o.names, "|"), reply);
  }
  return out;
}

std::string bash_command(const CommandModel& c) {
  std::string positional = c.positionals.empty()
                               ? "COMPREPLY=()"
                               : "COMPREPLY=($(compgen -f -X '!*.y*ml' -- \"$cur\") $(compgen -d -- \"$cur\"))";
  return fmt::format(
      "    {})\n"
      "      case $prev in\n{}"
      "      esac\n"
      "      if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W '{}' -- \"$cur\")); else {}; fi ;;\n",
      c.name, bash_values(c), words(option_names(c)), positional);
}

// ---- zsh ----

// Text inside an _arguments spec's single quotes: quotes closed and reopened, brackets and colons
// escaped as _arguments reads them.
std::string zsh_text(std::string_view text) {
  std::string out;
  for (char ch : text) {
    if (ch == '\'') out += "'\\''";
    else if (ch == '[' || ch == ']' || ch == ':' || ch == '\\') out += std::string("\\") + ch;
    else out += ch;
  }
  return out;
}

std::string zsh_action(const OptionModel& o) {
  if (!o.choices.empty()) return fmt::format("({})", words(o.choices));
  if (o.file && o.names.empty()) return "_files -g \"*.y(|a)ml\"";
  return o.file ? "_files" : " ";
}

std::string zsh_command(const CommandModel& c) {
  std::string specs;
  for (auto& o : c.options)
    for (auto& n : o.names)
      specs += fmt::format(" \\\n        '{}[{}]{}'", n, zsh_text(o.help),
                           o.value.empty() ? "" : ":" + zsh_text(o.value) + ":" + zsh_action(o));
  int k = 0;
  for (auto& p : c.positionals)
    specs += fmt::format(" \\\n        '{}:{}:{}'", ++k, zsh_text(p.value), zsh_action(p));
  return fmt::format("      {}) _arguments{} ;;\n", c.name, specs);
}

// ---- man ----

// Text as roff prints it: backslashes and hyphens escaped, a line starting with . or ' made
// literal.
std::string roff(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (char ch : text) {
    if (line_start && (ch == '.' || ch == '\'')) out += "\\&";
    if (ch == '\\') out += "\\e";
    else if (ch == '-') out += "\\-";
    else out += ch;
    line_start = ch == '\n';
  }
  return out;
}

std::string man_option(const OptionModel& o) {
  std::vector<std::string> names;
  for (auto& n : o.names) names.push_back("\\fB" + roff(n) + "\\fR");
  std::string value = o.choices.empty() ? o.value : fmt::format("{}", fmt::join(o.choices, "|"));
  std::string shown = fmt::format("{}", fmt::join(names, ", "));
  if (!value.empty()) shown += (shown.empty() ? "\\fI" : " \\fI") + roff(value) + "\\fR";
  return fmt::format(".TP\n{}\n{}\n", shown, roff(o.help));
}

std::string man_command(const CommandModel& c) {
  std::string synopsis = "streamlab " + c.name;
  for (auto& p : c.positionals) synopsis += " " + p.value;
  std::string out = fmt::format(".SS \"{}\"\n{}\n", roff(synopsis), roff(c.help));
  for (auto& p : c.positionals) out += man_option(p);
  for (auto& o : c.options) out += man_option(o);
  return out;
}

}  // namespace

ProgramModel program_model(CLI::App& app) {
  ProgramModel m{command_of(app), {}};
  for (CLI::App* sub : app.get_subcommands([](CLI::App* s) { return !s->get_group().empty(); }))
    m.commands.push_back(command_of(*sub));
  return m;
}

std::string bash_completion(const ProgramModel& m) {
  std::vector<std::string> names;
  std::string cases;
  for (auto& c : m.commands) {
    names.push_back(c.name);
    cases += bash_command(c);
  }
  return fmt::format(
      "# bash completion for streamlab: generated by `streamlab completion bash` from its command "
      "line.\n"
      "_streamlab() {{\n"
      "  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}} command= i\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    case ${{COMP_WORDS[i]}} in {}) command=${{COMP_WORDS[i]}}; break ;; esac\n"
      "  done\n"
      "  case $command in\n"
      "    '') COMPREPLY=($(compgen -W '{} {}' -- \"$cur\")) ;;\n"
      "{}"
      "  esac\n"
      "}}\n"
      "complete -o filenames -F _streamlab streamlab\n",
      fmt::join(names, "|"), words(names), words(option_names(m.program)), cases);
}

std::string zsh_completion(const ProgramModel& m) {
  std::string commands, cases;
  for (auto& c : m.commands) {
    commands += fmt::format("    '{}:{}'\n", c.name, zsh_text(c.help));
    cases += zsh_command(c);
  }
  return fmt::format(
      "#compdef streamlab\n"
      "# zsh completion for streamlab: generated by `streamlab completion zsh` from its command "
      "line.\n"
      "_streamlab() {{\n"
      "  local curcontext=$curcontext state line\n"
      "  local -a commands=(\n{}  )\n"
      "  _arguments -C '(- *)--help[Print help]' '(- *)--version[Print the version and commit]' \\\n"
      "    '1:command:->command' '*::argument:->argument'\n"
      "  case $state in\n"
      "    command) _describe -t commands 'streamlab command' commands ;;\n"
      "    argument)\n"
      "      case $line[1] in\n{}"
      "      esac ;;\n"
      "  esac\n"
      "}}\n"
      "_streamlab \"$@\"\n",
      commands, cases);
}

std::string man_page(const ProgramModel& m, const std::string& date, const std::string& version) {
  std::string commands;
  for (auto& c : m.commands) commands += man_command(c);
  std::string options;
  for (auto& o : m.program.options) options += man_option(o);
  return fmt::format(
      ".\\\" streamlab(1): generated by `streamlab manpage` from its command line.\n"
      ".TH STREAMLAB 1 \"{}\" \"{}\" \"User Commands\"\n"
      ".SH NAME\nstreamlab \\- {}\n"
      ".SH SYNOPSIS\n.B streamlab\n.I command\n.RI [ options ]\n"
      ".br\n.B streamlab\n.RB [ \\-\\-help | \\-\\-version ]\n"
      ".SH DESCRIPTION\n"
      "streamlab checks, runs and validates CUDA stream experiments described in YAML files, and\n"
      "reports what happened: each op's time on the GPU and on the host, the overlap of streams, the\n"
      "checks and expectations. Without a GPU it runs them on its host backend. Experiment files are\n"
      "untrusted input: streamlab never runs code from them on the host.\n"
      ".SH OPTIONS\n{}"
      ".SH COMMANDS\n{}"
      ".SH EXIT STATUS\n"
      ".TP\n.B 0\nevery check and expectation was evaluated and held\n"
      ".TP\n.B 1\na check or an expectation failed\n"
      ".TP\n.B 2\nthe experiment or the command line is invalid\n"
      ".TP\n.B 3\na CUDA or runtime failure, or the time limit\n"
      ".TP\n.B 4\nnothing failed, but something could not be evaluated (GPU times on the host "
      "backend)\n"
      ".SH ENVIRONMENT\n"
      ".TP\n.B NO_COLOR\nany non\\-empty value: no colour, unless \\fB\\-\\-color always\\fR\n"
      ".SH SEE ALSO\n"
      "The README.md and docs/ in share/doc/streamlab under the installation prefix "
      "(\\fI/usr/share/doc/streamlab\\fR from the Debian package).\n",
      roff(date), roff(version), roff(m.program.help), options, commands);
}

int print_generated(CLI::App& app, const std::string& what) {
  ProgramModel model = program_model(app);
  if (what == "bash") std::cout << bash_completion(model);
  else if (what == "zsh") std::cout << zsh_completion(model);
  else std::cout << man_page(model, std::string(commit_date()), version_line());
  return 0;
}

}  // namespace streamlab
