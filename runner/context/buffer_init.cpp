#include "runner/context/buffer_init.hpp"

#include <cstdint>
#include <cstring>

#include "runner/core/half.hpp"

namespace streamlab {
namespace {

// splitmix64: a counter-based generator, so element i's value needs no state and is the same
// on every machine.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

template <class T>
void store(std::byte* data, int64_t i, T v) {
  std::memcpy(data + i * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
}

// Random values: non-negative integers over the type's positive range, floats in [0, 1).
void store_random(ElemType t, std::byte* data, int64_t i, uint64_t r) {
  switch (t) {
    case ElemType::int32:
      store(data, i, static_cast<int32_t>(r >> 33));
      break;
    case ElemType::uint32:
      store(data, i, static_cast<uint32_t>(r >> 32));
      break;
    case ElemType::int64:
      store(data, i, static_cast<int64_t>(r >> 1));
      break;
    case ElemType::float32:
      store(data, i, static_cast<float>(r >> 40) * 0x1.0p-24f);
      break;
    case ElemType::float64:
      store(data, i, static_cast<double>(r >> 11) * 0x1.0p-53);
      break;
    case ElemType::uint8:
      store(data, i, static_cast<uint8_t>(r >> 56));
      break;
    // 16-bit floats: multiples of 2^-11 in [0, 1); exact in float16, rounded to 8 significant bits
    // in bfloat16.
    case ElemType::float16:
      store(data, i, float_to_half(static_cast<float>(r >> 53) * 0x1.0p-11f));
      break;
    case ElemType::bfloat16:
      store(data, i, float_to_bfloat16(static_cast<float>(r >> 53) * 0x1.0p-11f));
      break;
  }
}

// A double as int64, saturating: converting a value outside int64's range is undefined in C++
// (and 2^63 - 1 as a double is 2^63, just outside).
int64_t saturate_int64(double v) {
  if (!(v > -9223372036854775808.0)) return INT64_MIN;  // NaN too
  if (v >= 9223372036854775808.0) return INT64_MAX;
  return static_cast<int64_t>(v);
}

// Integer sequences wrap around in the element type, as C's conversions do.
void store_value(ElemType t, std::byte* data, int64_t i, double v, int64_t wrapped) {
  switch (t) {
    case ElemType::int32:
      store(data, i, static_cast<int32_t>(static_cast<uint32_t>(wrapped)));
      break;
    case ElemType::uint32:
      store(data, i, static_cast<uint32_t>(wrapped));
      break;
    case ElemType::int64:
      store(data, i, wrapped);
      break;
    case ElemType::float32:
      store(data, i, static_cast<float>(v));
      break;
    case ElemType::float64:
      store(data, i, v);
      break;
    case ElemType::uint8:
      store(data, i, static_cast<uint8_t>(wrapped));
      break;
    case ElemType::float16:
      store(data, i, float_to_half(static_cast<float>(v)));
      break;
    case ElemType::bfloat16:
      store(data, i, float_to_bfloat16(static_cast<float>(v)));
      break;
  }
}

void fill_sequence(const Buffer& b, std::byte* data) {
  const auto start = static_cast<uint64_t>(saturate_int64(b.init.value));
  const auto step = static_cast<uint64_t>(saturate_int64(b.init.step));
  for (int64_t i = 0; i < b.count; ++i) {
    auto wrapped = static_cast<int64_t>(start + step * static_cast<uint64_t>(i));  // modulo 2^64
    store_value(b.type, data, i, b.init.value + b.init.step * static_cast<double>(i), wrapped);
  }
}

}  // namespace

bool is_poisoned(const Buffer& b) { return b.init.kind == InitSpec::Kind::none; }

void fill_initial(const Buffer& b, std::byte* data) {
  switch (b.init.kind) {
    case InitSpec::Kind::none:
      std::memset(data, kPoisonByte, static_cast<size_t>(b.bytes));
      break;
    case InitSpec::Kind::zeros:
      std::memset(data, 0, static_cast<size_t>(b.bytes));
      break;
    case InitSpec::Kind::value:
      for (int64_t i = 0; i < b.count; ++i)
        store_value(b.type, data, i, b.init.value, saturate_int64(b.init.value));
      break;
    case InitSpec::Kind::sequence:
      fill_sequence(b, data);
      break;
    case InitSpec::Kind::random:
      for (int64_t i = 0; i < b.count; ++i)
        store_random(b.type, data, i,
                     mix(b.init.seed * 0x100000001B3ull + static_cast<uint64_t>(i)));
      break;
  }
}

}  // namespace streamlab
