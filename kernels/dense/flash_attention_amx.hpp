#pragma once
// Full attention in bf16 on AMX tiles (issue #41: the dense Transformer's bf16 step spent half its time in the
// fp32 lanes kernels, flash_attention_lanes.hpp). Internal to kernels/dense: flash_attention.cpp calls these for
// the heads the lanes kernels would take (full attention over at least flash_lanes::kMinLength rows) when
// usable(): the GEMMs run in bf16 on the own AMX kernel, and the sequence has at most kMaxLength rows.
//
// Precision: as every bf16 product (gemm.hpp), the products' inputs are rounded to bf16 and summed in fp32:
// q, k, v and dout, and the probabilities P and their gradient dS between the products. The softmax, lse,
// delta and every output stay fp32.
#include <cstdint>
#include <vector>

#include "kernels/dense/flash_attention_band.hpp"

namespace topo::flash_amx {

#if defined(__x86_64__) && defined(__AVX512F__)
inline constexpr bool kAvailable = true;
#else
inline constexpr bool kAvailable = false;
#endif
// The backward keeps dS for the whole head ([len, len] floats per thread: 16 MiB at 2048).
inline constexpr std::int64_t kMaxLength = 2048;

// kAvailable, len <= kMaxLength, and this process's GEMMs at bf16 precision on the AMX kernel (gemm_backend.hpp).
bool usable(std::int64_t len);

// Per-thread scratch: the packed operands (bf16 tiles) and the fp32 score blocks.
struct Scratch {
  std::vector<std::uint16_t> b0, b1, b2, b3, a0, a1;
  std::vector<float> s, ds, o;
};

// Every row of one head (h.radius ignored: full attention): out (normalised) and lse (log-sum-exp of the scaled
// scores, h.ld_lse apart).
void forward(const flash_band::HeadView& h, float scale, const float* q, const float* k, const float* v, float* out,
             float* lse, Scratch& w);

// The whole head: dq, dk, dv (every row overwritten) from dout, the rows' lse and delta = dout . out (both
// contiguous, h.len each).
void backward(const flash_band::HeadView& h, float scale, const float* q, const float* k, const float* v,
              const float* lse, const float* delta, const float* dout, float* dq, float* dk, float* dv, Scratch& w);

}  // namespace topo::flash_amx
