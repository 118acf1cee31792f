#pragma once
// SHA-256 (FIPS 180-4), for the experiment file's identity in a run's provenance: the same digest
// `sha256sum` prints, so a result can be matched with the file that produced it.
#include <string>
#include <string_view>

namespace streamlab {

std::string sha256_hex(std::string_view data);  // 64 lowercase hex digits

}  // namespace streamlab
