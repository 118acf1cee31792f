#pragma once

namespace streamlab {

// Exit codes of the streamlab command.
enum ExitCode : int {
  kExitOk = 0,
  kExitCheckFailed = 1,  // a check (or expectation) failed
  kExitInvalid = 2,      // the experiment or the command line is invalid
  kExitRuntime = 3,      // a CUDA or runtime failure
  // Nothing failed, but some checks or expectations could not be evaluated (the host backend
  // measures no GPU time): not a pass.
  kExitIncomplete = 4,
};

// The whole command line: parses it, runs the subcommand, maps errors to exit codes.
int run_cli(int argc, char** argv);

}  // namespace streamlab
