#pragma once
// The sparse ops' enums from integer codes, as callers outside C++ name them (the Python binding passes the
// codes topograph/ops.py looks up by name). A cast of an out-of-range int is an enum value no switch handles:
// gspmm computed some reducer and gsddmm read a target that is none of u, v, e. Each conversion is a
// topo::Error naming the code and the valid range instead.
#include "kernels/error.hpp"
#include "kernels/sparse/sddmm_math.hpp"
#include "kernels/sparse/spmm_math.hpp"

namespace topo {

namespace detail {
template <typename Enum>
Enum enum_from_code(int code, int count, const char* what) {
  TOPO_CHECK(code >= 0 && code < count, "{} code {} is outside [0, {})", what, code, count);
  return static_cast<Enum>(code);
}
}  // namespace detail

inline MessageOp message_op_from_code(int code) {
  return detail::enum_from_code<MessageOp>(code, static_cast<int>(MessageOp::UDivE) + 1, "gspmm: message op");
}
inline SpmmReduce spmm_reduce_from_code(int code) {
  return detail::enum_from_code<SpmmReduce>(code, static_cast<int>(SpmmReduce::Mean) + 1, "gspmm: reducer");
}
inline SddmmOp sddmm_op_from_code(int code) {
  return detail::enum_from_code<SddmmOp>(code, static_cast<int>(SddmmOp::CopyRhs) + 1, "gsddmm: op");
}
inline Target target_from_code(int code) {
  return detail::enum_from_code<Target>(code, static_cast<int>(Target::E) + 1, "gsddmm: target");
}

}  // namespace topo
