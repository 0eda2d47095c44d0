#pragma once
// The banded attention of flash_attention.cpp on AVX-512 CPUs: register-blocked micro-kernels for bands
// narrower than a sequence (Multi-Scale's windows: radii 0 ... n/8 over 30-float heads), where one sgemm
// call per masked tile cost as much as its 10^4-10^5 FLOPs. Internal to kernels/dense: flash_attention.cpp
// calls these for every (sequence, head) whose radius is below its length when kAvailable; full attention
// keeps its tiles.
//
// One head of one sequence is addressed by pointers to its row 0 and row strides: q, k (and dq, dk) rows of
// dk floats `ldk` apart, v (and dv) rows of dv floats `ldv` apart, out (and dout) rows of dv floats `ld_out`
// apart, lse entries `ld_lse` apart.
#include <cstdint>
#include <vector>

namespace topo::flash_band {

#if defined(__AVX512F__)
inline constexpr bool kAvailable = true;
#else
inline constexpr bool kAvailable = false;
#endif

struct HeadView {
  std::int64_t len, radius, dk, dv, ldk, ldv, ld_out, ld_lse;
};

// Per-thread scratch: a task's rows packed (q, k, v, dout; the backward's dq, dk, dv accumulators, lse and
// delta), k and v transposed, a block's score rows and outputs. The narrow kernels keep their feature-major
// rows in the same buffers (q in qp, dout in gp, o in ob, P and dS per offset in s and dp).
struct Scratch {
  std::vector<float> qp, kp, vp, gp, kt, vt, dqp, dkp, dvp, s, dp, ob, lse, delta;
};

// Rows [r0, r0 + rows) of the head: out (normalised) and lse (log-sum-exp of the scaled scores).
void forward(const HeadView& h, std::int64_t r0, std::int64_t rows, float scale, const float* q, const float* k,
             const float* v, float* out, float* lse, Scratch& w);

// Rows [r0, r0 + rows) of the head: dq of those queries, dk and dv of those keys (overwritten), from dout, the
// forward's out and lse; the queries within the radius beyond the chunk are recomputed for their keys' terms.
// Any cut of a head into chunks gives the bits of the whole head in one call.
void backward(const HeadView& h, std::int64_t r0, std::int64_t rows, float scale, const float* q, const float* k,
              const float* v, const float* out, const float* lse, const float* dout, float* dq, float* dk, float* dv,
              Scratch& w);

// Radii 1 ... kNarrowRadius (bands of 3 to 9 keys), which forward and backward hand on to: the same results
// with positions in lanes (flash_attention_narrow.cpp).
inline constexpr std::int64_t kNarrowRadius = 4;
void forward_narrow(const HeadView& h, std::int64_t r0, std::int64_t rows, float scale, const float* q,
                    const float* k, const float* v, float* out, float* lse, Scratch& w);
void backward_narrow(const HeadView& h, std::int64_t r0, std::int64_t rows, float scale, const float* q,
                     const float* k, const float* v, const float* out, const float* lse, const float* dout, float* dq,
                     float* dk, float* dv, Scratch& w);

}  // namespace topo::flash_band
