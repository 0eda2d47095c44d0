#pragma once
// Fused sparse attention: out_v = sum_{u -> v} softmax_u(scale * q_v . k_u) v_u per head, in one pass per
// destination with an online (running max) softmax, FlashAttention-style. The per-step math is shared by
// the CPU and CUDA backends.
#include <cmath>
#include <cstdint>

#include "kernels/dense/fast_exp.hpp"
#include "kernels/hd.hpp"

namespace topo {

// Folds score s into the running max m and running sum l of exp(score - m). Returns the new term's weight
// p = exp(s - m_new); `rescale` = exp(m_old - m_new) is what earlier accumulations must be multiplied by.
TOPO_HD float online_softmax_push(float& m, float& l, float s, float& rescale) {
  const float m_new = fmaxf(m, s);
  // exp_approx: vectorizable and exactly 0 below -87, so m = -inf on the first step gives a rescale of 0.
  rescale = exp_approx(m - m_new);
  const float p = exp_approx(s - m_new);
  l = l * rescale + p;
  m = m_new;
  return p;
}

// log-sum-exp of a finished row, kept for the backward pass; -inf for a destination without in-edges.
TOPO_HD float online_softmax_lse(float m, float l) { return l > 0.f ? m + logf(l) : -INFINITY; }

namespace cuda {
// in_csr rows = destinations (indices: sources). q [rows, H, dk], k [num_src, H, dk], v [num_src, H, dv];
// out [rows, H, dv], lse [rows, H].
void sparse_attention(const std::int32_t* indptr, const std::int32_t* indices, std::int64_t rows, std::int64_t heads,
                      std::int64_t dk, std::int64_t dv, float scale, const float* q, const float* k, const float* v,
                      float* out, float* lse);
void sparse_attention(const std::int64_t* indptr, const std::int64_t* indices, std::int64_t rows, std::int64_t heads,
                      std::int64_t dk, std::int64_t dv, float scale, const float* q, const float* k, const float* v,
                      float* out, float* lse);
// Backward pass over destinations: dq, and per edge the softmax weight p and score gradient ds ([nnz, H] by eid).
void sparse_attention_backward_dst(const std::int32_t* indptr, const std::int32_t* indices, const std::int32_t* eids,
                                   std::int64_t rows, std::int64_t heads, std::int64_t dk, std::int64_t dv, float scale,
                                   const float* q, const float* k, const float* v, const float* out, const float* lse,
                                   const float* dout, float* dq, float* p, float* ds);
void sparse_attention_backward_dst(const std::int64_t* indptr, const std::int64_t* indices, const std::int64_t* eids,
                                   std::int64_t rows, std::int64_t heads, std::int64_t dk, std::int64_t dv, float scale,
                                   const float* q, const float* k, const float* v, const float* out, const float* lse,
                                   const float* dout, float* dq, float* p, float* ds);
// Backward pass over sources (out_csr: rows = sources, indices = destinations): dk, dv.
void sparse_attention_backward_src(const std::int32_t* indptr, const std::int32_t* indices, const std::int32_t* eids,
                                   std::int64_t rows, std::int64_t heads, std::int64_t dk, std::int64_t dv, float scale,
                                   const float* q, const float* dout, const float* p, const float* ds, float* dkey,
                                   float* dval);
void sparse_attention_backward_src(const std::int64_t* indptr, const std::int64_t* indices, const std::int64_t* eids,
                                   std::int64_t rows, std::int64_t heads, std::int64_t dk, std::int64_t dv, float scale,
                                   const float* q, const float* dout, const float* p, const float* ds, float* dkey,
                                   float* dval);
}  // namespace cuda

}  // namespace topo
