#pragma once
// Device profiles as files: read (a user's, checked key by key), written (`streamlab calibrate`),
// and the ones built into the program (runner/predict/profiles/, one per calibrated device).
#include <string>
#include <string_view>
#include <vector>

#include "runner/core/profile.hpp"

namespace streamlab {

// Throws CommandLineError naming the file and the key that is wrong.
DeviceProfile read_profile(const std::string& path);
DeviceProfile parse_profile(std::string_view text, const std::string& file);
std::string profile_json(const DeviceProfile& p);

// The built-in profile for `device` (a CUDA device name); with no match (or no device: empty),
// the first built-in one, and `note` says so.
DeviceProfile builtin_profile(const std::string& device, std::string* note);

}  // namespace streamlab
