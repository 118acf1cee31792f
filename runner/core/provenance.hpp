#pragma once
// Where a result came from, recorded with every run: when, by which command and build, on which
// host and device, with which timer, from which file (its SHA-256) and params. A figure compared
// months later, or beside someone else's, means nothing without them.
#include <string>
#include <utility>
#include <vector>

namespace streamlab {

using Facts = std::vector<std::pair<std::string, std::string>>;  // name -> value, in order

struct Provenance {
  std::string date;                       // UTC, ISO 8601, when the run ended
  std::vector<std::string> command_line;  // argv
  std::string version, commit;            // streamlab's
  Facts host;                             // host name, CPU, cores, memory, kernel, OS
  Facts device;                           // the backend's: name, UUID, clocks, memory, link, driver
  std::string experiment_sha256;          // of the experiment file's bytes
};

// The host's facts: `uname`, /proc/cpuinfo's model name, /proc/meminfo, /etc/os-release.
Facts host_facts();
// Now, as 2026-12-03T01:19:50Z.
std::string utc_now();

}  // namespace streamlab
