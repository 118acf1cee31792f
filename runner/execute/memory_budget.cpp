#include "runner/execute/memory_budget.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "ops/op_kind.hpp"
#include "runner/execute/backend.hpp"

namespace streamlab {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

void add(int64_t& total, int64_t bytes) {
  if (__builtin_add_overflow(total, bytes, &total)) total = kMax;
}

// A field of /proc/meminfo or /proc/self/status, in bytes; -1 when absent.
int64_t proc_kib(const char* file, std::string_view field) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(field, 0) == 0 && line.size() > field.size() && line[field.size()] == ':') {
      std::istringstream value(line.substr(field.size() + 1));
      int64_t kib = -1;
      value >> kib;
      return kib < 0 ? -1 : kib * 1024;
    }
  return -1;
}

// What a resource limit leaves, given what the process uses of it now.
int64_t headroom(int resource, int64_t used) {
  rlimit r{};
  if (getrlimit(resource, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return kMax;
  int64_t limit = static_cast<int64_t>(std::min<rlim_t>(r.rlim_cur, static_cast<rlim_t>(kMax)));
  return used < 0 ? limit : std::max<int64_t>(0, limit - used);
}

}  // namespace

MemoryNeed memory_need(const Experiment& exp, bool cuda) {
  MemoryNeed need;
  std::set<int> checked;
  for (const CheckSpec& c : exp.checks)
    for (const BufferRange& r : check_ranges(c))
      if (r.valid()) checked.insert(r.buffer);
  for (size_t b = 0; b < exp.buffers.size(); ++b) {
    const Buffer& buf = exp.buffers[b];
    bool on_device = buf.memory == MemoryKind::device || buf.memory == MemoryKind::managed;
    if (!cuda) {
      add(need.host, buf.bytes);
      continue;
    }
    add(on_device ? need.device : need.host, buf.bytes);
    if (buf.memory == MemoryKind::device && checked.contains(static_cast<int>(b)))
      add(need.host, buf.bytes);
  }
  if (cuda)
    for (int b : buffers_to_restore(exp)) add(need.host, exp.buffers[b].bytes);
  return need;
}

int64_t host_memory_available() {
  int64_t available = proc_kib("/proc/meminfo", "MemAvailable");
  if (available < 0) available = kMax;
  available = std::min(available, headroom(RLIMIT_AS, proc_kib("/proc/self/status", "VmSize")));
  available = std::min(available, headroom(RLIMIT_DATA, proc_kib("/proc/self/status", "VmData")));
  return available;
}

void check_host_memory(const Experiment& exp, bool cuda) {
  int64_t need = memory_need(exp, cuda).host, available = host_memory_available();
  if (need <= available) return;
  throw RunError(
      fmt::format("the experiment's buffers need {} of host memory{}; this process may allocate {} "
                  "(available memory, or ulimit -v / -d): nothing was allocated",
                  format_size(need),
                  cuda ? " (host buffers, and host copies of restored and checked ones)"
                       : " (the host backend keeps every buffer in host memory)",
                  format_size(available)));
}

std::string format_size(int64_t bytes) {
  if (bytes == kMax) return "more than 8 EiB";
  return format_bytes(bytes);
}

}  // namespace streamlab
