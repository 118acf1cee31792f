// The peaks a time is held against: a copy, a kernel or a whole repetition that moved B bytes in
// less than B over the peak did not happen as timed (a timer fault, or tampering with timing).
// Peaks from the datasheet formulas are upper bounds of what the hardware moves: an H200's device
// memory reads 4.92 TB/s this way, where a device-to-device copy reaches about 4.2 (reads and
// writes), and its PCIe 5.0 x16 link 63.0 GB/s, where a pinned copy reaches about 55.
#include <cuda_runtime_api.h>

#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "runner/execute/backend.hpp"

namespace streamlab {
namespace {

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// GB/s per direction of a PCIe link: GT/s per lane x lanes x the line code's efficiency / 8.
double pcie_gbps(double gts, int lanes) {
  double code = gts < 8 ? 8.0 / 10 : 128.0 / 130;  // 8b/10b up to PCIe 2.0, 128b/130b after
  return gts * lanes * code / 8;
}

void link_peak(int device, DevicePeaks& p) {
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess) return;
  std::string id(bus);
  for (char& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (id.size() > 12) id = id.substr(id.size() - 12);  // the domain as Linux writes it: 4 digits
  std::string dir = "/sys/bus/pci/devices/" + id + "/";
  std::string speed = read_line(dir + "current_link_speed"),
              width = read_line(dir + "current_link_width");
  double gts = std::atof(speed.c_str());
  int lanes = std::atoi(width.c_str());
  if (gts <= 0 || lanes <= 0) return;
  p.link_gbps = pcie_gbps(gts, lanes);
  // sysfs writes the speed as "32.0 GT/s PCIe"
  p.link_source = fmt::format("PCIe {:g} GT/s x{} (from {}current_link_speed and _width)", gts,
                              lanes, dir);
}

std::string uuid_text(const cudaUUID_t& u) {
  std::string hex;
  for (char c : u.bytes) hex += fmt::format("{:02x}", static_cast<unsigned char>(c));
  // nvidia-smi's form: GPU-8-4-4-4-12 hex digits
  return fmt::format("GPU-{}-{}-{}-{}-{}", hex.substr(0, 8), hex.substr(8, 4), hex.substr(12, 4),
                     hex.substr(16, 4), hex.substr(20));
}

// 13000 -> "13.0"
std::string cuda_version(int v) { return fmt::format("{}.{}", v / 1000, v % 1000 / 10); }

int attribute(cudaDeviceAttr a, int device) {
  int v = 0;
  return cudaDeviceGetAttribute(&v, a, device) == cudaSuccess ? v : 0;
}

}  // namespace

Facts cuda_device_facts(int device, const DevicePeaks& peaks) {
  Facts f;
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, device) != cudaSuccess) return f;
  f.emplace_back("name", p.name);
  f.emplace_back("uuid", uuid_text(p.uuid));
  f.emplace_back("index", std::to_string(device));
  f.emplace_back("compute_capability", fmt::format("{}.{}", p.major, p.minor));
  f.emplace_back("sms", std::to_string(p.multiProcessorCount));
  f.emplace_back("copy_engines", std::to_string(p.asyncEngineCount));
  f.emplace_back("sm_clock_max_mhz", std::to_string(attribute(cudaDevAttrClockRate, device) / 1000));
  f.emplace_back("memory_clock_max_mhz", std::to_string(attribute(cudaDevAttrMemoryClockRate, device) / 1000));
  f.emplace_back("memory_bus_bits", std::to_string(p.memoryBusWidth));
  f.emplace_back("memory_bytes", std::to_string(p.totalGlobalMem));
  f.emplace_back("l2_bytes", std::to_string(p.l2CacheSize));
  f.emplace_back("ecc", p.ECCEnabled ? "on" : "off");
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) == cudaSuccess) f.emplace_back("pci_bus_id", bus);
  if (!peaks.link_source.empty()) f.emplace_back("host_link", peaks.link_source);
  int devices = 0, peers = 0;
  cudaGetDeviceCount(&devices);
  for (int other = 0; other < devices; ++other) {
    int can = 0;
    if (other != device && cudaDeviceCanAccessPeer(&can, device, other) == cudaSuccess && can) ++peers;
  }
  f.emplace_back("devices", std::to_string(devices));
  f.emplace_back("peer_access_to", std::to_string(peers));
  int driver = 0, runtime = 0;
  if (cudaDriverGetVersion(&driver) == cudaSuccess) f.emplace_back("cuda_driver", cuda_version(driver));
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) f.emplace_back("cuda_runtime", cuda_version(runtime));
  if (auto v = nvidia_driver_version(read_line("/proc/driver/nvidia/version")); !v.empty())
    f.emplace_back("driver", v);
  return f;
}

std::string nvidia_driver_version(const std::string& nvrm_line) {
  // Words, not a fixed position: the proprietary and the open modules word the line differently.
  std::istringstream words(nvrm_line);
  for (std::string w; words >> w;)
    if (std::isdigit(static_cast<unsigned char>(w[0])) && w.find('.') != std::string::npos &&
        w.find_first_not_of("0123456789.") == std::string::npos)
      return w;
  return "";
}

DevicePeaks cuda_device_peaks(int device) {
  DevicePeaks p;
  int clock_khz = 0, bus_bits = 0;
  if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device) == cudaSuccess &&
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) == cudaSuccess &&
      clock_khz > 0 && bus_bits > 0) {
    p.memory_gbps = 2.0 * clock_khz * 1e3 * bus_bits / 8 / 1e9;  // double data rate
    p.memory_source =
        fmt::format("{} MHz x {}-bit bus x 2 (double data rate)", clock_khz / 1000, bus_bits);
  }
  int l2 = 0;
  if (cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device) == cudaSuccess) p.l2_bytes = l2;
  link_peak(device, p);
  return p;
}

}  // namespace streamlab
