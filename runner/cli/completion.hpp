#pragma once
// Shell completion and the man page, generated from the command line's own CLI11 model (its
// subcommands, options, choices and help texts), so they cannot fall out of date with it. The
// build runs `streamlab completion bash|zsh` and `streamlab manpage` to make the installed files.
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace streamlab {

// What the completions and the man page need of one option or positional argument.
struct OptionModel {
  std::vector<std::string> names;  // "--output", "-o"; empty for a positional
  std::string value;               // what it takes: "" (a flag), "FILE", "INT", "NAME=EXPR", ...
  std::vector<std::string> choices;  // an IsMember's words (--backend: auto, cuda, host)
  bool file = false;                 // its value, or the positional, names a file
  std::string help;
};

struct CommandModel {
  std::string name, help;
  std::vector<OptionModel> options;
  std::vector<OptionModel> positionals;  // the experiment, the submission: *.yaml files
};

// The program: its own options (--help, --version) and its visible subcommands (a hidden one,
// group "", is left out, as are hidden options).
struct ProgramModel {
  CommandModel program;
  std::vector<CommandModel> commands;
};
ProgramModel program_model(CLI::App& app);

// A bash script completing subcommands, options, their choices and files (*.yaml for an
// experiment argument); `complete -F _streamlab streamlab` at its end.
std::string bash_completion(const ProgramModel& model);
// A zsh script for fpath (#compdef streamlab), on zsh's _arguments.
std::string zsh_completion(const ProgramModel& model);
// streamlab(1) in man(7) roff: every subcommand with its arguments and options, the exit codes.
// `date` and `version` go into its title line.
std::string man_page(const ProgramModel& model, const std::string& date, const std::string& version);

// `streamlab completion bash|zsh` and `streamlab manpage` (what: "bash", "zsh", "man"): prints it
// to stdout, returns the exit code.
int print_generated(CLI::App& app, const std::string& what);

}  // namespace streamlab
