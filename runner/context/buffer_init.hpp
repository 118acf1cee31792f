#pragma once
#include <cstddef>

#include "runner/core/experiment.hpp"

namespace streamlab {

// Buffers without `init` are filled with this byte before the first repetition, so elements no
// op wrote fail the checks (0xCDCDCDCD as int32 is -842150451, far outside any random init).
inline constexpr unsigned char kPoisonByte = 0xCD;

bool is_poisoned(const Buffer& b);  // true when the buffer has no init

// Writes the buffer's initial contents (its init, or the poison) into `data` (b.bytes bytes).
// Deterministic: random init depends only on the seed and the element index.
void fill_initial(const Buffer& b, std::byte* data);

}  // namespace streamlab
