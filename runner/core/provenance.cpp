#include "runner/core/provenance.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <thread>

#include <fmt/format.h>

namespace streamlab {
namespace {

// The value of the first line of `path` that starts with `key`, after its separator; "" if none.
std::string field(const std::string& path, const std::string& key, char separator) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) != 0) continue;
    auto at = line.find(separator);
    if (at == std::string::npos) continue;
    std::string v = line.substr(at + 1);
    v.erase(0, v.find_first_not_of(" \t\""));
    while (!v.empty() && (v.back() == '"' || v.back() == ' ')) v.pop_back();
    return v;
  }
  return "";
}

}  // namespace

Facts host_facts() {
  Facts f;
  utsname u{};
  if (uname(&u) == 0) {
    f.emplace_back("hostname", u.nodename);
    f.emplace_back("kernel", fmt::format("{} {} {}", u.sysname, u.release, u.machine));
  }
  if (auto os = field("/etc/os-release", "PRETTY_NAME=", '='); !os.empty()) f.emplace_back("os", os);
  if (auto cpu = field("/proc/cpuinfo", "model name", ':'); !cpu.empty()) f.emplace_back("cpu", cpu);
  f.emplace_back("cpus", std::to_string(std::thread::hardware_concurrency()));
  if (auto mem = field("/proc/meminfo", "MemTotal:", ':'); !mem.empty()) f.emplace_back("memory", mem);
  return f;
}

std::string utc_now() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace streamlab
