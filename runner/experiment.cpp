#include "runner/experiment.hpp"

namespace streamlab {

std::string_view elem_type_name(ElemType t) {
  switch (t) {
    case ElemType::int32: return "int32";
    case ElemType::uint32: return "uint32";
    case ElemType::int64: return "int64";
    case ElemType::float32: return "float32";
    case ElemType::float64: return "float64";
    case ElemType::uint8: return "uint8";
  }
  return "?";
}

size_t elem_size(ElemType t) {
  switch (t) {
    case ElemType::int32: case ElemType::uint32: case ElemType::float32: return 4;
    case ElemType::int64: case ElemType::float64: return 8;
    case ElemType::uint8: return 1;
  }
  return 1;
}

bool is_float(ElemType t) { return t == ElemType::float32 || t == ElemType::float64; }

std::string_view memory_kind_name(MemoryKind m) {
  switch (m) {
    case MemoryKind::device: return "device";
    case MemoryKind::pinned: return "pinned";
    case MemoryKind::pageable: return "pageable";
  }
  return "?";
}

bool is_host_memory(MemoryKind m) { return m != MemoryKind::device; }

}  // namespace streamlab
