#pragma once
// The subcommands, as the command line hands them over: cli.cpp parses the arguments into
// RunArgs, these do the work and return the exit code (cli.hpp).
#include <cstdint>
#include <string>
#include <vector>

namespace streamlab {

struct RunArgs {
  std::string file;
  std::vector<std::string> sets;
  int64_t repeat = -1, warmup = -1;  // -1: the experiment's own
  std::string backend = "auto";
  std::string timer = "auto";
  bool no_gate = false;
  int device = 0;
  std::string json, csv, trace, html;  // report files; "-" is stdout
  std::string gradescope, junit, tap;  // autograder files; "-" is stdout
  bool no_stderr = false;              // --no-stderr: what would go to stderr goes to stdout
  bool print = false;                  // check --print: the expanded op list
  std::string format = "text";         // check --format
  bool allow_races = false;            // run --allow-races: run despite analysis errors
  int64_t timeout = -1;                // --timeout seconds; -1: the experiment's, else the default
  bool locate_fault = false;  // hidden: a child run that finds the op behind a device fault
  std::string rubric;         // grade --rubric
  std::string reference;      // grade --reference: the peer `reference`, in place of the rubric's
  std::string profile;        // --profile: the device profile the timeline model uses
  bool predict = false;       // run --predict: the model's prediction beside the measurement
  std::string output;         // calibrate --output
  std::vector<std::string> sweeps;  // run --sweep NAME=V1,V2,...
  std::vector<std::string> plots;   // run --plot MEASURE
  std::vector<std::string> command_line;  // argv, for the results' provenance
};

// run: load, analyze, run, check, report (run_command.cpp).
int cmd_run(const RunArgs& args);
// check: load, compile user kernels, analyze; no GPU (run_command.cpp).
int cmd_check(const RunArgs& args);
// grade: a submission scored by a rubric, beside the rubric's peers (grade_command.cpp).
int cmd_grade(const RunArgs& args);
// calibrate: measure the device profile of the GPU in use (calibrate_command.cpp).
int cmd_calibrate(const RunArgs& args);
// list: every op, kernel, check, expectation function, env variable and diagnostic (list.cpp).
int cmd_list();

struct CompareArgs {
  std::string a, b;         // results files, or folders of them
  double threshold = 5;     // percent: a smaller change of the medians is no change
  double alpha = 0.01;      // the test's significance level
  std::string json, markdown;  // report files; "-" is stdout
};
// compare: B against A, measure by measure; exit 1 when something is slower (compare_command.cpp).
int cmd_compare(const CompareArgs& args);

}  // namespace streamlab
