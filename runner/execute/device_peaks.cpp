// The peaks a time is held against: a copy, a kernel or a whole repetition that moved B bytes in
// less than B over the peak did not happen as timed (a timer fault, or tampering with timing).
// Peaks from the datasheet formulas are upper bounds of what the hardware moves: an H200's device
// memory reads 4.92 TB/s this way, where a device-to-device copy reaches about 4.2 (reads and
// writes), and its PCIe 5.0 x16 link 63.0 GB/s, where a pinned copy reaches about 55.
#include <cuda_runtime_api.h>

#include <cctype>
#include <cmath>
#include <fstream>
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
  p.link_source =
      fmt::format("PCIe {} x{} ({} of {})", speed, lanes, dir + "current_link_speed", id);
}

}  // namespace

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
