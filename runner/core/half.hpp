#pragma once
// IEEE binary16 (float16) and bfloat16 on the host, for buffers that cuBLAS and cuDNN read and
// write in 16-bit floats: conversions with round-to-nearest-even, as the GPU's own __float2half_rn
// and __float2bfloat16_rn round, so host references and initial contents agree with the device's.
#include <bit>
#include <cstdint>

namespace streamlab {

inline float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu;
  if (exp == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (mant << 13));  // inf, nan
  if (exp == 0) {  // zero, subnormal
    float v = static_cast<float>(mant) * 0x1.0p-24f;
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

inline uint16_t float_to_half(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t abs = x & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u)
    return static_cast<uint16_t>(sign | 0x7C00u | (abs > 0x7F800000u ? 0x200u : 0u));
  if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds past 65504: inf
  if (abs < 0x38800000u) {  // below 2^-14: a subnormal half (or zero), in units of 2^-24
    float scaled = std::bit_cast<float>(abs) * 0x1.0p24f;
    auto units = static_cast<uint32_t>(scaled);
    float rest = scaled - static_cast<float>(units);
    if (rest > 0.5f || (rest == 0.5f && (units & 1u))) ++units;
    return static_cast<uint16_t>(sign | units);
  }
  uint32_t rounded = abs + 0xFFFu + ((abs >> 13) & 1u);  // round to nearest even at bit 13
  return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

inline float bfloat16_to_float(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

inline uint16_t float_to_bfloat16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet nan
  return static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace streamlab
