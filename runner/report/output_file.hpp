#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace streamlab {

// A report the command line asks for: {"--json", "r.json"}; the path "-" is stdout.
struct OutputRequest {
  std::string option;
  std::string path;
};

// A file the run reads: no report may replace it. {"the experiment file", "exp.yaml"}
struct InputFile {
  std::string what;
  std::string path;
};

// The report files of a run, checked before the run so that a path that cannot be written costs
// no GPU time, and written after it all or none. Graders run experiments that students wrote, in
// shared folders: a report never follows a symlink, never replaces a device, FIFO, directory,
// read-only file or input of the run, and a killed run leaves no temporary file behind.
class OutputPlan {
 public:
  // Throws CommandLineError with one line per problem ("--json r.json: ..."), all of them.
  OutputPlan(std::vector<OutputRequest> requests, const std::vector<InputFile>& inputs);

  // Refuses, as the constructor would, a report that would replace one of `inputs`: for the files
  // an experiment names, known only once it is loaded.
  void refuse_inputs(const std::vector<InputFile>& inputs) const;

  const std::vector<OutputRequest>& requests() const { return requests_; }
  bool writes_stdout() const;

  // `texts`: one per request, in the same order. Writes every file's text to a new temporary
  // beside it, and only when all are written renames them over their targets; then prints the
  // stdout text. On a failure removes every temporary, replaces nothing and throws RunError.
  void commit(const std::vector<std::string>& texts) const;

 private:
  struct Target {
    std::string folder;  // resolved by realpath; "" for stdout
    std::string name;
  };
  void commit_files(const std::vector<std::string>& texts) const;
  std::string target_path(size_t i) const;

  std::vector<OutputRequest> requests_;
  std::vector<Target> targets_;  // one per request
};

}  // namespace streamlab
