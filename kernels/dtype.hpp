#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace topo {

// float32 for features and parameters; int32/int64 for indices (ids, labels, graph arrays).
enum class DType : std::uint8_t { F32, I32, I64 };

constexpr std::size_t dtype_size(DType t) { return t == DType::I64 ? 8 : 4; }
constexpr std::string_view dtype_name(DType t) {
  return t == DType::F32 ? "float32" : t == DType::I32 ? "int32" : "int64";
}

template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::F32; };
template <> struct dtype_of<std::int32_t> { static constexpr DType value = DType::I32; };
template <> struct dtype_of<std::int64_t> { static constexpr DType value = DType::I64; };
template <class T> inline constexpr DType dtype_v = dtype_of<T>::value;

}  // namespace topo
