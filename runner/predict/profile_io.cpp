#include "runner/predict/profile_io.hpp"

#include <cerrno>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runner/core/diagnostics.hpp"
#include "runner/core/safe_file.hpp"

namespace streamlab {

const std::vector<std::pair<std::string_view, std::string_view>>& builtin_profile_texts();

namespace {

using json = nlohmann::json;

// Reads the profile's keys one by one, so that a wrong one is named: a profile may come from a
// user, and a NaN bandwidth would make every prediction silently wrong.
class ProfileReader {
 public:
  ProfileReader(const json& j, std::string file) : j_(j), file_(std::move(file)) {}

  double positive(const json& at, const std::string& key, const std::string& path) const {
    if (!at.contains(key)) fail(path + key, "is missing");
    const json& v = at[key];
    if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>()))
      fail(path + key, "must be a positive number");
    return v.get<double>();
  }
  double non_negative(const json& at, const std::string& key, const std::string& path) const {
    if (!at.contains(key)) fail(path + key, "is missing");
    const json& v = at[key];
    if (!v.is_number() || !(v.get<double>() >= 0) || !std::isfinite(v.get<double>()))
      fail(path + key, "must be a number of at least 0");
    return v.get<double>();
  }
  const json& object(const json& at, const std::string& key, const std::string& path) const {
    if (!at.contains(key) || !at[key].is_object()) fail(path + key, "must be an object");
    return at[key];
  }
  std::string text(const json& at, const std::string& key) const {
    return at.contains(key) && at[key].is_string() ? at[key].get<std::string>() : "";
  }
  CopyPath copy(const json& copies, const std::string& key) const {
    const json& c = object(copies, key, "copies.");
    return {non_negative(c, "latency_us", "copies." + key + "."),
            positive(c, "gbps", "copies." + key + ".")};
  }
  std::map<std::string, double> rates(const std::string& key) const {
    std::map<std::string, double> out;
    if (!j_.contains(key)) return out;
    for (const auto& [name, v] : object(j_, key, "").items()) out[name] = positive(object(j_, key, ""), name, key + ".");
    return out;
  }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw CommandLineError(fmt::format("device profile {}: '{}' {}", file_, key, what));
  }

 private:
  const json& j_;
  std::string file_;
};

DeviceProfile from_json(const json& j, const std::string& file) {
  ProfileReader r(j, file);
  DeviceProfile p;
  p.file = file;
  if (!j.is_object()) r.fail("(top level)", "must be an object");
  if (!j.contains("version") || !j["version"].is_number_integer() ||
      j["version"].get<int>() != kProfileVersion)
    r.fail("version", fmt::format("must be {} (profiles of another version of streamlab are not "
                                  "read: run `streamlab calibrate` again)",
                                  kProfileVersion));
  p.device = r.text(j, "device");
  p.made_by = r.text(j, "made_by");
  auto count = [&](const char* key) { return static_cast<int>(r.positive(j, key, "")); };
  p.sms = count("sms");
  p.max_threads_per_sm = count("max_threads_per_sm");
  p.max_blocks_per_sm = count("max_blocks_per_sm");
  p.regs_per_sm = static_cast<int64_t>(r.positive(j, "regs_per_sm", ""));
  p.shared_per_sm = static_cast<int64_t>(r.positive(j, "shared_per_sm", ""));
  p.connections = count("connections");
  p.memory_gbps = r.positive(j, "memory_gbps", "");
  const json& copies = r.object(j, "copies", "");
  p.h2d_pinned = r.copy(copies, "h2d_pinned");
  p.d2h_pinned = r.copy(copies, "d2h_pinned");
  p.h2d_pageable = r.copy(copies, "h2d_pageable");
  p.d2h_pageable = r.copy(copies, "d2h_pageable");
  p.d2d = r.copy(copies, "d2d");
  p.memset = r.copy(copies, "memset");
  p.duplex_factor = r.positive(j, "duplex_factor", "");
  if (p.duplex_factor > 1) r.fail("duplex_factor", "must be at most 1");
  p.launch_latency_us = r.non_negative(j, "launch_latency_us", "");
  p.kernel_min_us = r.non_negative(j, "kernel_min_us", "");
  p.graph_launch_us = r.non_negative(j, "graph_launch_us", "");
  p.graph_node_us = r.non_negative(j, "graph_node_us", "");
  p.wake_us = r.non_negative(j, "wake_us", "");
  for (const auto& [kind, v] : r.object(j, "host_us", "").items())
    p.host_us[kind] = r.non_negative(j["host_us"], kind, "host_us.");
  for (const auto& [name, v] : r.object(j, "kernels", "").items()) {
    const std::string at = "kernels." + name + ".";
    KernelRate k;
    k.gbps = r.positive(v, "gbps", at);
    if (v.contains("work_per_ns")) k.work_per_ns = r.positive(v, "work_per_ns", at);
    p.kernels[name] = k;
  }
  p.gemm_tflops = r.rates("gemm_tflops");
  p.conv_tflops = r.rates("conv_tflops");
  p.nccl_gbps = r.positive(j, "nccl_gbps", "");
  return p;
}

json copy_json(const CopyPath& c) { return {{"latency_us", c.latency_us}, {"gbps", c.gbps}}; }

}  // namespace

DeviceProfile parse_profile(std::string_view text, const std::string& file) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded())
    throw CommandLineError(fmt::format("device profile {}: not valid JSON", file));
  return from_json(j, file);
}

// Read as any file the user names: a FIFO or a device given by mistake must neither block the run
// nor fill its memory.
DeviceProfile read_profile(const std::string& path) {
  FileRead read = read_user_file(path, limits::kProfileFileBytes);
  if (!read.ok())
    throw CommandLineError(
        fmt::format("device profile {}: {}", path,
                    read.error == ENOENT ? "cannot be read (does it exist?)" : "the file " + read.refusal));
  return parse_profile(read.text, path);
}

std::string profile_json(const DeviceProfile& p) {
  json kernels = json::object();
  for (const auto& [name, k] : p.kernels) {
    json e = {{"gbps", k.gbps}};
    if (std::isfinite(k.work_per_ns)) e["work_per_ns"] = k.work_per_ns;
    kernels[name] = e;
  }
  json j = {
      {"version", p.version},
      {"device", p.device},
      {"made_by", p.made_by},
      {"sms", p.sms},
      {"max_threads_per_sm", p.max_threads_per_sm},
      {"max_blocks_per_sm", p.max_blocks_per_sm},
      {"regs_per_sm", p.regs_per_sm},
      {"shared_per_sm", p.shared_per_sm},
      {"connections", p.connections},
      {"memory_gbps", p.memory_gbps},
      {"copies",
       {{"h2d_pinned", copy_json(p.h2d_pinned)},
        {"d2h_pinned", copy_json(p.d2h_pinned)},
        {"h2d_pageable", copy_json(p.h2d_pageable)},
        {"d2h_pageable", copy_json(p.d2h_pageable)},
        {"d2d", copy_json(p.d2d)},
        {"memset", copy_json(p.memset)}}},
      {"duplex_factor", p.duplex_factor},
      {"launch_latency_us", p.launch_latency_us},
      {"kernel_min_us", p.kernel_min_us},
      {"graph_launch_us", p.graph_launch_us},
      {"graph_node_us", p.graph_node_us},
      {"wake_us", p.wake_us},
      {"host_us", p.host_us},
      {"kernels", kernels},
      {"gemm_tflops", p.gemm_tflops},
      {"conv_tflops", p.conv_tflops},
      {"nccl_gbps", p.nccl_gbps},
  };
  return j.dump(2) + "\n";
}

DeviceProfile builtin_profile(const std::string& device, std::string* note) {
  const auto& texts = builtin_profile_texts();
  for (const auto& [name, text] : texts) {
    DeviceProfile p = parse_profile(text, "built-in " + std::string(name));
    if (!device.empty() && p.device == device) return p;
  }
  DeviceProfile p = parse_profile(texts.front().second, "built-in " + std::string(texts.front().first));
  if (note)
    *note = device.empty()
                ? fmt::format("predicted with the built-in profile of the {} (no device to match)",
                              p.device)
                : fmt::format("no built-in profile for the {}: predicted with the {}'s (run "
                              "`streamlab calibrate` on it for its own)",
                              device, p.device);
  return p;
}

}  // namespace streamlab
