// Fused dense attention over packed variable-length sequences (FlashAttention-2's schedule on a CPU).
//
// Parallel strategy (CPU):
//  - forward: one task per (sequence, query tile of kQueryTile rows, head), OpenMP dynamic schedule. A task
//    holds its [tile, dv] output accumulator and one [tile, kKeyTile] score tile in per-thread scratch; per key
//    tile: S = scale Q K^T (one single-threaded sgemm on the strided head slices), the online softmax per row
//    (flash_attention_math.hpp), O = rescale O + P V (a second sgemm). Nothing of size [L, L] exists; the
//    scratch is kQueryTile x kKeyTile floats (256 KiB) per thread, L2-resident.
//  - backward: one task per (sequence, head): for each key tile, for each query tile, recompute S and
//    P = exp(S - lse), dP = dO V^T, dS = P (dP - delta); dV += P^T dO, dK += scale dS^T Q, dQ += scale dS K.
//    The task owns its head's dq, dk, dv rows of its sequence, so there are no atomics and the result does not
//    depend on the thread count. 5 GEMMs per tile pair (the minimum; the forward's 2 are recomputed as 1).
// Inside the OpenMP region OpenBLAS runs each tile's sgemm single-threaded. On AVX-512 CPUs, full attention
// over sequences of flash_lanes::kMinLength rows or more runs on register-blocked micro-kernels with positions
// in lanes instead (flash_attention_lanes.hpp: same tasks, no sgemm calls), and when the GEMMs run in bf16 on
// the AMX kernel, on AMX tiles (flash_attention_amx.hpp: one forward task per (sequence, head)).
//
// Bands (radius r per (sequence, head)): a query tile [r0, r0 + mq) walks only the keys [r0 - r, r0 + mq + r)
// of its sequence (the backward: a key tile only the queries [j0 - r, j0 + nk + r)), so tiles wholly outside
// the band are never computed; in a tile the band's edge crosses, each row's scores outside its columns
// (flash_band_columns) are p = 0. Tiles shrink with the band (band_tile: about 2r + 1 rows, so at most about
// half of each tile is masked), and bands narrower than kRowBand skip tiles altogether: each row computes its
// few scores by dot products (forward_rows, backward_rows), where sgemms of a mostly masked 16 x 16 tile
// would cost more than the arithmetic. Full attention is r = length: the same tiles and sums as without bands.
// On AVX-512 CPUs every band narrower than its sequence runs on register-blocked micro-kernels instead
// (flash_attention_band.hpp: blocks of 8 queries, no sgemm calls), one task per chunk of kBandChunk queries
// (forward; the backward's chunks, of at least 8 radii, also recompute the queries within the band beyond them)
// for all of its banded heads, so no two threads write the cache lines neighbouring heads' slices of a row
// share; the tiles and rows above are the other CPUs' path.
#include "kernels/dense/flash_attention.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/dense/flash_attention_band.hpp"
#include "kernels/dense/flash_attention_amx.hpp"
#include "kernels/dense/flash_attention_lanes.hpp"
#include "kernels/dense/flash_attention_math.hpp"
#include "kernels/dense/gemm.hpp"
#include "kernels/dense/indexing.hpp"
#include "kernels/sparse/simd_rows.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/profile.hpp"
#include "kernels/threads.hpp"

namespace topo {
namespace {

// Query rows x key columns of one score tile. 128 x 512 keeps a tile in L2 (256 KiB) and a sequence of up to
// 512 keys in one tile (no rescaling); backward tiles are square (two tiles live: P and dS, 2 x 256 KiB).
// Larger tiles amortise each small sgemm's fixed cost (packing an operand with only dh = 50 columns): with
// 64 x 512 / 128 x 128 the fused step lost to the padded GEMMs at n = 1024 (0.87x, docs/performance/models.md).
constexpr std::int64_t kQueryTile = 128, kKeyTile = 512, kBackwardTile = 256;
// Bands: tiles of about 2r + 1 rows (a multiple of 16, at least kMinBandTile); rows, not tiles, below kRowBand.
constexpr std::int64_t kMinBandTile = 32, kRowBand = 16;

// The side of a band's tile: about the band's width, at most `largest` (the full-attention tile).
std::int64_t band_tile(std::int64_t radius, std::int64_t largest) {
  return std::clamp<std::int64_t>((2 * radius + 1 + 15) / 16 * 16, kMinBandTile, largest);
}
// Whether (sequence, head) takes the per-row schedule: a narrow band, not full attention (radius = length),
// which keeps its tiles whatever the length, as before bands existed.
bool row_band(std::int64_t radius, std::int64_t len) { return radius < len && 2 * radius + 1 <= kRowBand; }
// Whether (sequence, head) runs on the banded micro-kernels (flash_attention_band.hpp: AVX-512 CPUs, every band
// narrower than its sequence), whose forward tasks are chunks of kBandChunk queries (each packs the keys its
// chunk sees once: 2r of them beyond the chunk, so chunks much shorter than a band would pack it repeatedly).
bool micro_band(std::int64_t radius, std::int64_t len) { return flash_band::kAvailable && radius < len; }
constexpr std::int64_t kBandChunk = 256;
// Whether (sequence, head) runs on the positions-in-lanes micro-kernels (flash_attention_lanes.hpp: AVX-512
// CPUs, full attention over sequences of at least kMinLength rows).
bool lanes_head(std::int64_t radius, std::int64_t len) {
  return flash_lanes::kAvailable && radius >= len && len >= flash_lanes::kMinLength;
}
// Whether such a head runs in bf16 on AMX tiles instead (flash_attention_amx.hpp: bf16 GEMMs on the AMX kernel,
// at most kMaxLength rows), one task per head: the kernel packs the head's keys and values once.
bool amx_head(std::int64_t radius, std::int64_t len) {
  return flash_amx::kAvailable && lanes_head(radius, len) && flash_amx::usable(len);
}
constexpr std::int64_t kEveryBandedHead = -1;  // a task over all micro-banded heads of its rows

// Heads and head widths, and the row strides (floats) of the operands: q, k, dq, dk rows `ld_qk` apart, v and
// dv rows `ld_v` apart, out and dout rows `ld_out` apart — H dk, H dv, H dv for separate tensors; 3 H dh for q,
// k, v (and their gradients) interleaved in one [rows, 3, H, dh] tensor (flash_attention_packed).
struct FlashDims {
  std::int64_t heads, dk, dv;
  std::int64_t ld_qk, ld_v, ld_out;
};

struct Sequences {
  std::vector<std::int64_t> offsets;  // B + 1
  std::int64_t rows = 0;
  std::vector<std::int64_t> radius;   // [B * heads]: each (sequence, head)'s band, clipped to the length (full)
  std::int64_t length(std::size_t b) const { return offsets[b + 1] - offsets[b]; }
  std::int64_t num() const { return static_cast<std::int64_t>(offsets.size()) - 1; }
};

Sequences sequences_of(const std::vector<std::int64_t>& lengths, const char* op) {
  TOPO_CHECK(!lengths.empty(), "{}: no sequences", op);
  Sequences s;
  s.offsets.push_back(0);
  for (std::size_t b = 0; b < lengths.size(); ++b) {
    TOPO_CHECK(lengths[b] >= 1, "{}: sequence {} has length {} (must be >= 1)", op, b, lengths[b]);
    std::int64_t end = 0;  // checked: lengths of 2^62 could wrap the sum back to q's rows
    TOPO_CHECK(!__builtin_add_overflow(s.offsets.back(), lengths[b], &end), "{}: the lengths overflow int64 at "
               "sequence {} (length {})", op, b, lengths[b]);
    s.offsets.push_back(end);
  }
  s.rows = s.offsets.back();
  return s;
}

FlashDims check_inputs(const Tensor& q, const Tensor& k, const Tensor& v, const Sequences& s, const char* op) {
  for (const Tensor* t : {&q, &k, &v}) check_dtype(*t, DType::F32, op, "q/k/v");
  check_same_device(q, k, op);
  check_same_device(q, v, op);
  TOPO_CHECK(q.ndim() == 3 && k.ndim() == 3 && v.ndim() == 3, "{}: q, k, v must be [rows, heads, dim], got {}, {}, {}",
             op, q.str(), k.str(), v.str());
  TOPO_CHECK(q.shape() == k.shape(), "{}: q {} and k {} differ", op, q.str(), k.str());
  TOPO_CHECK(v.size(0) == q.size(0) && v.size(1) == q.size(1), "{}: v {} does not match q {} in rows and heads", op,
             v.str(), q.str());
  TOPO_CHECK(q.size(0) == s.rows, "{}: q has {} rows but the lengths sum to {}", op, q.size(0), s.rows);
  return FlashDims{
      q.size(1), q.size(2), v.size(2), q.size(1) * q.size(2), v.size(1) * v.size(2), v.size(1) * v.size(2)};
}

// The band of every (sequence, head) from `radii` (empty, [B] or [B * heads]; see the header). Any radius that
// covers the sequence (>= length - 1) becomes its length: full attention has one representation (and the
// full-attention schedule), and no index arithmetic overflows.
void set_radii(Sequences& s, const std::vector<std::int64_t>& radii, std::int64_t heads, const char* op) {
  const std::int64_t B = s.num();
  const auto n = static_cast<std::int64_t>(radii.size());
  TOPO_CHECK(n == 0 || n == B || n == B * heads,
             "{}: {} radii for {} sequences of {} heads (expected none, {} or {})", op, n, B, heads, B, B * heads);
  s.radius.resize(static_cast<std::size_t>(B * heads));
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < heads; ++h) {
      const std::int64_t len = s.length(static_cast<std::size_t>(b));
      std::int64_t r = len;
      if (n > 0) {
        r = radii[static_cast<std::size_t>(n == B ? b : b * heads + h)];
        TOPO_CHECK(r >= 0, "{}: sequence {} head {} has radius {} (must be >= 0)", op, b, h, r);
      }
      s.radius[static_cast<std::size_t>(b * heads + h)] = r >= len - 1 ? len : r;
    }
}

// Runs task(i, scratch) for i in [0, n) over the OpenMP pool (dynamic: sequences and tiles differ in cost),
// with one Scratch per thread; serially when one thread or one task.
template <class Scratch, class F>
void parallel_tasks(std::int64_t n, F&& task) {
  const int threads = num_threads();
  if (threads <= 1 || n <= 1 || omp_in_parallel()) {
    Scratch scratch;
    for (std::int64_t i = 0; i < n; ++i) task(i, scratch);
    return;
  }
  profile::count_parallel_region();
#pragma omp parallel num_threads(threads)
  {
    Scratch scratch;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t i = 0; i < n; ++i) task(i, scratch);
  }
}

struct ForwardScratch {
  std::vector<float> s = std::vector<float>(kQueryTile * kKeyTile), o, m = std::vector<float>(kQueryTile),
                     l = std::vector<float>(kQueryTile);
  flash_band::Scratch band;
  flash_lanes::Scratch lanes;
  flash_amx::Scratch amx;
};

// Pointers to row i of one head in q/k/dq/dk, v/dv and out/dout (FlashDims' strides), rows counted from `off`.
struct HeadRows {
  std::int64_t off, h;
  FlashDims d;
  template <class T>
  T* k_row(T* base, std::int64_t i) const { return base + (off + i) * d.ld_qk + h * d.dk; }
  template <class T>
  T* v_row(T* base, std::int64_t i) const { return base + (off + i) * d.ld_v + h * d.dv; }
  template <class T>
  T* o_row(T* base, std::int64_t i) const { return base + (off + i) * d.ld_out + h * d.dv; }
};

// A narrow band (row_band): rows [r0, r0 + mq) of one head, each from its <= kRowBand scores by dot products.
void forward_rows(HeadRows at, std::int64_t len, std::int64_t r0, std::int64_t mq, std::int64_t radius, float scale,
                  const float* q, const float* k, const float* v, float* out, float* lse) {
  const FlashDims d = at.d;
  float s[kRowBand];
  for (std::int64_t i = r0; i < r0 + mq; ++i) {
    const std::int64_t j0 = std::max<std::int64_t>(0, i - radius), n = std::min(len, i + radius + 1) - j0;
    const float* qi = at.k_row(q, i);
    for (std::int64_t j = 0; j < n; ++j) s[j] = scale * simd::dot(qi, at.k_row(k, j0 + j), d.dk);
    float m = -INFINITY, l = 0.f;
    flash_row_softmax(s, n, m, l);
    const float inv = 1.f / l;
    float* o = at.o_row(out, i);
    std::fill_n(o, d.dv, 0.f);
    for (std::int64_t j = 0; j < n; ++j) {
      const float p = s[j] * inv, *vj = at.v_row(v, j0 + j);
#pragma omp simd
      for (std::int64_t c = 0; c < d.dv; ++c) o[c] += p * vj[c];
    }
    lse[(at.off + i) * d.heads + at.h] = flash_row_lse(m, l);
  }
}

// One (sequence, query tile, head): rows [r0, r0 + mq) of a sequence of `len` rows; with a band, only the keys
// [r0 - radius, r0 + mq + radius) of the sequence, in tiles of up to kKeyTile.
void forward_tile(HeadRows at, std::int64_t len, std::int64_t r0, std::int64_t mq, std::int64_t radius, float scale,
                  const float* q, const float* k, const float* v, float* out, float* lse, ForwardScratch& w) {
  if (row_band(radius, len)) return forward_rows(at, len, r0, mq, radius, scale, q, k, v, out, lse);
  const FlashDims d = at.d;
  if (amx_head(radius, len))
    return flash_amx::forward({len, radius, d.dk, d.dv, d.ld_qk, d.ld_v, d.ld_out, d.heads}, scale, at.k_row(q, 0),
                              at.k_row(k, 0), at.v_row(v, 0), at.o_row(out, 0), lse + at.off * d.heads + at.h, w.amx);
  if (lanes_head(radius, len))
    return flash_lanes::forward({len, radius, d.dk, d.dv, d.ld_qk, d.ld_v, d.ld_out, d.heads}, r0, mq, scale,
                                at.k_row(q, 0), at.k_row(k, 0), at.v_row(v, 0), at.o_row(out, 0),
                                lse + at.off * d.heads + at.h, w.lanes);
  const std::int64_t ldk = d.ld_qk, ldv = d.ld_v;
  const cpu::RepeatedShapes tiles;  // a few tile shapes, thousands of calls: kernels per shape (gemm.hpp)
  w.o.resize(static_cast<std::size_t>(kQueryTile * d.dv));
  float *s = w.s.data(), *o = w.o.data(), *m = w.m.data(), *l = w.l.data();
  std::fill_n(m, mq, -INFINITY);
  std::fill_n(l, mq, 0.f);
  const float* qt = at.k_row(q, r0);
  const std::int64_t k_begin = std::max<std::int64_t>(0, r0 - radius), k_end = std::min(len, r0 + mq + radius);
  for (std::int64_t j0 = k_begin; j0 < k_end; j0 += kKeyTile) {
    const std::int64_t nk = std::min(kKeyTile, k_end - j0);
    const bool first = j0 == k_begin;
    cpu::sgemm(false, true, mq, nk, d.dk, scale, qt, ldk, at.k_row(k, j0), ldk, 0.f, s, nk);
    for (std::int64_t r = 0; r < mq; ++r) {
      const BandColumns band = flash_band_columns(r0 + r, radius, j0, nk);
      const float rescale = flash_band_row_softmax(s + r * nk, nk, band, m[r], l[r]);
      if (!first && rescale != 1.f) {
        float* orow = o + r * d.dv;
#pragma omp simd
        for (std::int64_t c = 0; c < d.dv; ++c) orow[c] *= rescale;
      }
    }
    cpu::sgemm(false, false, mq, d.dv, nk, 1.f, s, nk, at.v_row(v, j0), ldv, first ? 0.f : 1.f, o, d.dv);
  }
  for (std::int64_t r = 0; r < mq; ++r) {
    const float inv = 1.f / l[r];
    float* dst = at.o_row(out, r0 + r);
#pragma omp simd
    for (std::int64_t c = 0; c < d.dv; ++c) dst[c] = o[r * d.dv + c] * inv;
    lse[(at.off + r0 + r) * d.heads + at.h] = flash_row_lse(m[r], l[r]);
  }
}

void forward_cpu(const Sequences& s, FlashDims d, float scale, const float* q, const float* k, const float* v,
                 float* out, float* lse) {
  struct Task {
    std::int64_t b, h, r0, rows;  // h = kEveryBandedHead: the sequence's micro-banded heads, one after another
  };
  // (sequence, head, query tile), the tile's height following the head's band; the micro-banded heads of a
  // sequence go together, per chunk of rows: two threads on neighbouring heads of the same rows would write
  // the cache lines those heads' slices share (a head's 120-200 bytes of a row do not end on a line) from two
  // cores, and one task after another on the same rows keeps their lines in cache.
  std::vector<Task> tasks;
  for (std::int64_t b = 0; b < s.num(); ++b) {
    const std::int64_t len = s.length(static_cast<std::size_t>(b));
    bool banded = false;
    for (std::int64_t h = 0; h < d.heads; ++h) {
      const std::int64_t r = s.radius[static_cast<std::size_t>(b * d.heads + h)];
      if (micro_band(r, len)) {
        banded = true;
        continue;
      }
      const std::int64_t tile = amx_head(r, len) ? len : row_band(r, len) ? kQueryTile : band_tile(r, kQueryTile);
      for (std::int64_t r0 = 0; r0 < len; r0 += tile) tasks.push_back({b, h, r0, std::min(tile, len - r0)});
    }
    if (banded)
      for (std::int64_t r0 = 0; r0 < len; r0 += kBandChunk)
        tasks.push_back({b, kEveryBandedHead, r0, std::min(kBandChunk, len - r0)});
  }
  parallel_tasks<ForwardScratch>(static_cast<std::int64_t>(tasks.size()), [&](std::int64_t i, ForwardScratch& w) {
    const Task& t = tasks[static_cast<std::size_t>(i)];
    const auto b = static_cast<std::size_t>(t.b);
    const std::int64_t len = s.length(b);
    if (t.h != kEveryBandedHead) {
      const std::int64_t radius = s.radius[static_cast<std::size_t>(t.b * d.heads + t.h)];
      return forward_tile({s.offsets[b], t.h, d}, len, t.r0, t.rows, radius, scale, q, k, v, out, lse, w);
    }
    for (std::int64_t h = 0; h < d.heads; ++h) {
      const std::int64_t radius = s.radius[static_cast<std::size_t>(t.b * d.heads + h)];
      if (!micro_band(radius, len)) continue;
      const HeadRows at{s.offsets[b], h, d};
      flash_band::forward({len, radius, d.dk, d.dv, d.ld_qk, d.ld_v, d.ld_out, d.heads}, t.r0, t.rows, scale,
                          at.k_row(q, 0), at.k_row(k, 0), at.v_row(v, 0), at.o_row(out, 0), lse + at.off * d.heads + h,
                          w.band);
    }
  });
}

struct BackwardScratch {
  std::vector<float> s = std::vector<float>(kBackwardTile * kBackwardTile),
                     dp = std::vector<float>(kBackwardTile * kBackwardTile), delta, lse;
  flash_band::Scratch band;
  flash_lanes::Scratch lanes;
  flash_amx::Scratch amx;
};

// A narrow band (row_band): per query row, its scores by dot products; dq_i, and dk_j, dv_j of its keys.
void backward_rows(HeadRows at, std::int64_t len, std::int64_t radius, float scale, const float* q, const float* k,
                   const float* v, const float* dout, float* dq, float* dk, float* dv, const BackwardScratch& w) {
  const FlashDims d = at.d;
  float s[kRowBand], dp[kRowBand];
  for (std::int64_t i = 0; i < len; ++i) {
    const std::int64_t j0 = std::max<std::int64_t>(0, i - radius), n = std::min(len, i + radius + 1) - j0;
    const float *qi = at.k_row(q, i), *gi = at.o_row(dout, i);
    for (std::int64_t j = 0; j < n; ++j) {
      s[j] = scale * simd::dot(qi, at.k_row(k, j0 + j), d.dk);
      dp[j] = simd::dot(gi, at.v_row(v, j0 + j), d.dv);
    }
    flash_row_backward(s, dp, n, w.lse[static_cast<std::size_t>(i)], w.delta[static_cast<std::size_t>(i)]);
    float* dqi = at.k_row(dq, i);
    for (std::int64_t j = 0; j < n; ++j) {
      const float p = s[j], ds = scale * dp[j];
      const float *kj = at.k_row(k, j0 + j);
      float *dkj = at.k_row(dk, j0 + j), *dvj = at.v_row(dv, j0 + j);
#pragma omp simd
      for (std::int64_t c = 0; c < d.dk; ++c) {
        dqi[c] += ds * kj[c];
        dkj[c] += ds * qi[c];
      }
#pragma omp simd
      for (std::int64_t c = 0; c < d.dv; ++c) dvj[c] += p * gi[c];
    }
  }
}

// One (sequence, head): every tile pair of the sequence within the band (for each key tile, the query tiles
// of the rows that see it); dq, dk, dv rows of the sequence are zero on entry.
void backward_head(HeadRows at, std::int64_t len, std::int64_t radius, float scale, const float* q, const float* k,
                   const float* v, const float* out, const float* lse, const float* dout, float* dq, float* dk,
                   float* dv, BackwardScratch& w) {
  const FlashDims d = at.d;
  const std::int64_t ldk = d.ld_qk, ldv = d.ld_v, ldo = d.ld_out;
  w.delta.resize(static_cast<std::size_t>(len));
  w.lse.resize(static_cast<std::size_t>(len));
  for (std::int64_t i = 0; i < len; ++i) {  // delta_i = dout_i . out_i; the row's lse gathered contiguous
    const float *g = at.o_row(dout, i), *o = at.o_row(out, i);
    float acc = 0.f;
#pragma omp simd reduction(+ : acc)
    for (std::int64_t c = 0; c < d.dv; ++c) acc += g[c] * o[c];
    w.delta[static_cast<std::size_t>(i)] = acc;
    w.lse[static_cast<std::size_t>(i)] = lse[(at.off + i) * d.heads + at.h];
  }
  if (row_band(radius, len)) return backward_rows(at, len, radius, scale, q, k, v, dout, dq, dk, dv, w);
  if (amx_head(radius, len))
    return flash_amx::backward({len, radius, d.dk, d.dv, d.ld_qk, d.ld_v, d.ld_out, d.heads}, scale, at.k_row(q, 0),
                               at.k_row(k, 0), at.v_row(v, 0), w.lse.data(), w.delta.data(), at.o_row(dout, 0),
                               at.k_row(dq, 0), at.k_row(dk, 0), at.v_row(dv, 0), w.amx);
  if (lanes_head(radius, len))
    return flash_lanes::backward({len, radius, d.dk, d.dv, d.ld_qk, d.ld_v, d.ld_out, d.heads}, scale,
                                 at.k_row(q, 0), at.k_row(k, 0), at.v_row(v, 0), w.lse.data(), w.delta.data(),
                                 at.o_row(dout, 0), at.k_row(dq, 0), at.k_row(dk, 0), at.v_row(dv, 0), w.lanes);
  const std::int64_t tile = band_tile(radius, kBackwardTile);
  const cpu::RepeatedShapes tiles;  // as the forward's
  float *s = w.s.data(), *dp = w.dp.data();
  for (std::int64_t j0 = 0; j0 < len; j0 += tile) {
    const std::int64_t nk = std::min(tile, len - j0);
    const std::int64_t q_begin = std::max<std::int64_t>(0, j0 - radius), q_end = std::min(len, j0 + nk + radius);
    for (std::int64_t i0 = q_begin; i0 < q_end; i0 += tile) {
      const std::int64_t mq = std::min(tile, q_end - i0);
      cpu::sgemm(false, true, mq, nk, d.dk, scale, at.k_row(q, i0), ldk, at.k_row(k, j0), ldk, 0.f, s, nk);
      cpu::sgemm(false, true, mq, nk, d.dv, 1.f, at.o_row(dout, i0), ldo, at.v_row(v, j0), ldv, 0.f, dp, nk);
      for (std::int64_t r = 0; r < mq; ++r)
        flash_band_row_backward(s + r * nk, dp + r * nk, nk, flash_band_columns(i0 + r, radius, j0, nk),
                                w.lse[static_cast<std::size_t>(i0 + r)], w.delta[static_cast<std::size_t>(i0 + r)]);
      cpu::sgemm(true, false, nk, d.dv, mq, 1.f, s, nk, at.o_row(dout, i0), ldo, 1.f, at.v_row(dv, j0), ldv);
      cpu::sgemm(true, false, nk, d.dk, mq, scale, dp, nk, at.k_row(q, i0), ldk, 1.f, at.k_row(dk, j0), ldk);
      cpu::sgemm(false, false, mq, d.dk, nk, scale, dp, nk, at.k_row(k, j0), ldk, 1.f, at.k_row(dq, i0), ldk);
    }
  }
}

// Tasks as in forward_cpu: one per (sequence, head) on tiles or rows, one per chunk of a sequence (kBandChunk
// rows, or 8 of its widest radius) for all its micro-banded heads (each task owns the dq, dk, dv rows of its
// chunk: no atomics, no shared cache lines; the chunk recomputes the queries within the band beyond it). Chunks,
// not whole sequences, so that one long sequence runs on every thread and a task's rows stay in L2; their bits
// are the whole sequence's.
void backward_cpu(const Sequences& s, FlashDims d, float scale, const float* q, const float* k, const float* v,
                  const float* out, const float* lse, const float* dout, float* dq, float* dk, float* dv) {
  struct Task {
    std::int64_t b, h, r0, rows;
  };
  std::vector<Task> tasks;
  for (std::int64_t b = 0; b < s.num(); ++b) {
    const std::int64_t len = s.length(static_cast<std::size_t>(b));
    std::int64_t widest = -1;  // the widest micro-banded radius of the sequence
    for (std::int64_t h = 0; h < d.heads; ++h) {
      const std::int64_t r = s.radius[static_cast<std::size_t>(b * d.heads + h)];
      if (micro_band(r, len))
        widest = std::max(widest, r);
      else
        tasks.push_back({b, h, 0, len});
    }
    // At least 8 radii a chunk, so the recomputed queries (2r) stay within a quarter of a chunk's work.
    const std::int64_t chunk = std::max(kBandChunk, 8 * widest);
    if (widest >= 0)
      for (std::int64_t r0 = 0; r0 < len; r0 += chunk)
        tasks.push_back({b, kEveryBandedHead, r0, std::min(chunk, len - r0)});
  }
  parallel_tasks<BackwardScratch>(static_cast<std::int64_t>(tasks.size()), [&](std::int64_t i, BackwardScratch& w) {
    const Task& t = tasks[static_cast<std::size_t>(i)];
    const auto b = static_cast<std::size_t>(t.b);
    const std::int64_t len = s.length(b);
    if (t.h != kEveryBandedHead)
      return backward_head({s.offsets[b], t.h, d}, len, s.radius[b * static_cast<std::size_t>(d.heads) + static_cast<std::size_t>(t.h)],
                           scale, q, k, v, out, lse, dout, dq, dk, dv, w);
    for (std::int64_t h = 0; h < d.heads; ++h) {
      const std::int64_t radius = s.radius[static_cast<std::size_t>(t.b * d.heads + h)];
      if (!micro_band(radius, len)) continue;
      const HeadRows at{s.offsets[b], h, d};
      flash_band::backward({len, radius, d.dk, d.dv, d.ld_qk, d.ld_v, d.ld_out, d.heads}, t.r0, t.rows, scale,
                           at.k_row(q, 0), at.k_row(k, 0), at.v_row(v, 0), at.o_row(out, 0), lse + at.off * d.heads + h,
                           at.o_row(dout, 0), at.k_row(dq, 0), at.k_row(dk, 0), at.v_row(dv, 0), w.band);
    }
  });
}

// Whether every (sequence, head) of a call runs on kernels that write every row of their heads' gradients (the
// banded micro-kernels, the lanes and AMX kernels of full attention): then the gradients need no zeroing (the
// tiles accumulate into theirs; three tensors of the inputs' size, 236 MB at 65,536 rows of 6 x 50 x 3).
bool every_head_overwrites(const Sequences& s, FlashDims d) {
  for (std::int64_t b = 0; b < s.num(); ++b)
    for (std::int64_t h = 0; h < d.heads; ++h) {
      const std::int64_t radius = s.radius[static_cast<std::size_t>(b * d.heads + h)];
      const std::int64_t len = s.length(static_cast<std::size_t>(b));
      if (!micro_band(radius, len) && !lanes_head(radius, len)) return false;
    }
  return true;
}

// The backward's grad_out and forward output against the call's dims.
void check_forward(const Sequences& s, FlashDims d, const FlashAttentionOutput& forward, const Tensor& grad_out,
                   const std::string& inputs, const char* op) {
  check_same_shape(grad_out, forward.out, op);
  TOPO_CHECK(forward.out.ndim() == 3 && forward.out.size(0) == s.rows && forward.out.size(1) == d.heads &&
                 forward.out.size(2) == d.dv && forward.lse.numel() == s.rows * d.heads,
             "{}: the forward's out {} / lse {} do not match {}", op, forward.out.str(), forward.lse.str(), inputs);
}

// Device copies of the offsets, of each row's sequence id and of the (sequence, head) radii, for CUDA.
struct DeviceSequences {
  Tensor offsets, seq, radius;
};
[[maybe_unused]] DeviceSequences device_sequences(const Sequences& s, Device device) {
  std::vector<std::int64_t> seq(static_cast<std::size_t>(s.rows));
  for (std::size_t b = 0; b + 1 < s.offsets.size(); ++b)
    std::fill(seq.begin() + s.offsets[b], seq.begin() + s.offsets[b + 1], static_cast<std::int64_t>(b));
  return {Tensor::from_vector(s.offsets, {static_cast<std::int64_t>(s.offsets.size())}, device),
          Tensor::from_vector(seq, {s.rows}, device),
          Tensor::from_vector(s.radius, {static_cast<std::int64_t>(s.radius.size())}, device)};
}

// The checked sequences, dims and bands of one call.
std::pair<Sequences, FlashDims> prepare(const Tensor& q, const Tensor& k, const Tensor& v,
                                        const std::vector<std::int64_t>& lengths,
                                        const std::vector<std::int64_t>& radii, const char* op) {
  Sequences s = sequences_of(lengths, op);
  const FlashDims d = check_inputs(q, k, v, s, op);
  set_radii(s, radii, d.heads, op);
  return {std::move(s), d};
}

}  // namespace

FlashAttentionOutput flash_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                     const std::vector<std::int64_t>& lengths, float scale,
                                     const std::vector<std::int64_t>& radii) {
  TOPO_PROFILE(Attention);
  const auto [s, d] = prepare(q, k, v, lengths, radii, "flash_attention");
  const Device device = q.device();
  FlashAttentionOutput r{Tensor::empty({s.rows, d.heads, d.dv}, DType::F32, device),
                         Tensor::empty({s.rows, d.heads}, DType::F32, device)};
  const float *qp = q.data<float>(), *kp = k.data<float>(), *vp = v.data<float>();
  float *op_ = r.out.data<float>(), *lp = r.lse.data<float>();
  TOPO_ON_DEVICE(
      device,
      forward_cpu(s, d, scale, qp, kp, vp, op_, lp),
      {
        const DeviceSequences ds = device_sequences(s, device);
        cuda::flash_attention(ds.offsets.data<std::int64_t>(), ds.seq.data<std::int64_t>(),
                              ds.radius.data<std::int64_t>(), s.rows, d.heads, d.dk, d.dv, scale, qp, kp, vp, op_, lp);
      });
  return r;
}

FlashAttentionGrads flash_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v,
                                             const std::vector<std::int64_t>& lengths,
                                             const FlashAttentionOutput& forward, const Tensor& grad_out,
                                             float scale, const std::vector<std::int64_t>& radii) {
  TOPO_PROFILE(Attention);
  const char* op = "flash_attention_backward";
  const auto [s, d] = prepare(q, k, v, lengths, radii, op);
  check_forward(s, d, forward, grad_out, fmt::format("q {} and v {}", q.str(), v.str()), op);
  check_same_device(grad_out, q, op);
  const Device device = q.device();
  const Tensor& g = grad_out;
  // Zeroed only where tiles accumulate into them (every_head_overwrites).
  const bool overwritten = device.is_cpu() && every_head_overwrites(s, d);
  const auto grad = [&](const Tensor& like) {
    return overwritten ? Tensor::empty(like.shape(), DType::F32, device) : Tensor::zeros(like.shape(), DType::F32, device);
  };
  FlashAttentionGrads r{grad(q), grad(k), grad(v)};
  const float *qp = q.data<float>(), *kp = k.data<float>(), *vp = v.data<float>();
  const float *outp = forward.out.data<float>(), *lsep = forward.lse.data<float>(), *gp = g.data<float>();
  float *dqp = r.dq.data<float>(), *dkp = r.dk.data<float>(), *dvp = r.dv.data<float>();
  TOPO_ON_DEVICE(
      device,
      backward_cpu(s, d, scale, qp, kp, vp, outp, lsep, gp, dqp, dkp, dvp),
      {
        const DeviceSequences ds = device_sequences(s, device);
        cuda::flash_attention_backward(ds.offsets.data<std::int64_t>(), ds.seq.data<std::int64_t>(),
                                       ds.radius.data<std::int64_t>(), s.rows, d.heads, d.dk, d.dv, scale, qp, kp, vp,
                                       outp, lsep, gp, dqp, dkp, dvp);
      });
  return r;
}

namespace {

// qkv [rows, 3, H, dh]: its dims, with q, k, v (and dq, dk, dv) rows 3 H dh apart and out rows H dh apart.
std::pair<Sequences, FlashDims> prepare_packed(const Tensor& qkv, const std::vector<std::int64_t>& lengths,
                                               const std::vector<std::int64_t>& radii, const char* op) {
  check_dtype(qkv, DType::F32, op, "qkv");
  TOPO_CHECK(qkv.ndim() == 4 && qkv.size(1) == 3, "{}: qkv must be [rows, 3, heads, dim], got {}", op, qkv.str());
  Sequences s = sequences_of(lengths, op);
  TOPO_CHECK(qkv.size(0) == s.rows, "{}: qkv has {} rows but the lengths sum to {}", op, qkv.size(0), s.rows);
  const std::int64_t heads = qkv.size(2), dh = qkv.size(3);
  const FlashDims d{heads, dh, dh, 3 * heads * dh, 3 * heads * dh, heads * dh};
  set_radii(s, radii, heads, op);
  return {std::move(s), d};
}

}  // namespace

FlashAttentionOutput flash_attention_packed(const Tensor& qkv, const std::vector<std::int64_t>& lengths, float scale,
                                            const std::vector<std::int64_t>& radii) {
  if (!qkv.device().is_cpu()) {  // CUDA: q, k, v as copies of their own
    const std::vector<Tensor> t = unpack_parts(qkv);
    return flash_attention(t[0], t[1], t[2], lengths, scale, radii);
  }
  TOPO_PROFILE(Attention);
  const auto [s, d] = prepare_packed(qkv, lengths, radii, "flash_attention_packed");
  FlashAttentionOutput r{Tensor::empty({s.rows, d.heads, d.dv}), Tensor::empty({s.rows, d.heads})};
  const float* base = qkv.data<float>();
  const std::int64_t width = d.heads * d.dk;
  forward_cpu(s, d, scale, base, base + width, base + 2 * width, r.out.data<float>(), r.lse.data<float>());
  return r;
}

Tensor flash_attention_packed_backward(const Tensor& qkv, const std::vector<std::int64_t>& lengths,
                                       const FlashAttentionOutput& forward, const Tensor& grad_out, float scale,
                                       const std::vector<std::int64_t>& radii) {
  if (!qkv.device().is_cpu()) {
    const std::vector<Tensor> t = unpack_parts(qkv);
    const FlashAttentionGrads g = flash_attention_backward(t[0], t[1], t[2], lengths, forward, grad_out, scale, radii);
    return pack_parts({g.dq, g.dk, g.dv});
  }
  TOPO_PROFILE(Attention);
  const char* op = "flash_attention_packed_backward";
  const auto [s, d] = prepare_packed(qkv, lengths, radii, op);
  check_forward(s, d, forward, grad_out, fmt::format("qkv {}", qkv.str()), op);
  check_same_device(grad_out, qkv, op);
  Tensor dqkv = every_head_overwrites(s, d) ? Tensor::empty(qkv.shape()) : Tensor::zeros(qkv.shape());
  const float* base = qkv.data<float>();
  float* dbase = dqkv.data<float>();
  const std::int64_t width = d.heads * d.dk;
  backward_cpu(s, d, scale, base, base + width, base + 2 * width, forward.out.data<float>(), forward.lse.data<float>(),
               grad_out.data<float>(), dbase, dbase + width, dbase + 2 * width);
  return dqkv;
}

FlashAttentionOutput flash_attention_reference(const Tensor& q, const Tensor& k, const Tensor& v,
                                               const std::vector<std::int64_t>& lengths, float scale,
                                               const std::vector<std::int64_t>& radii) {
  const char* op = "flash_attention_reference";
  const auto [s, d] = prepare(q, k, v, lengths, radii, op);
  TOPO_CHECK(q.device().is_cpu(), "{}: CPU only", op);
  const auto qv = q.to_vector<float>(), kv = k.to_vector<float>(), vv = v.to_vector<float>();
  std::vector<float> out(static_cast<std::size_t>(s.rows * d.heads * d.dv), 0.f), lse(static_cast<std::size_t>(s.rows * d.heads));
  for (std::size_t b = 0; b + 1 < s.offsets.size(); ++b) {
    const std::int64_t begin = s.offsets[b], end = s.offsets[b + 1];
    for (std::int64_t i = begin; i < end; ++i)
      for (std::int64_t h = 0; h < d.heads; ++h) {
        // The keys row i sees in this head: |i - j| <= radius within the sequence.
        const std::int64_t radius = s.radius[b * static_cast<std::size_t>(d.heads) + static_cast<std::size_t>(h)];
        const std::int64_t first = std::max(begin, i - radius), last = std::min(end, i + radius + 1);
        std::vector<float> score(static_cast<std::size_t>(last - first));
        float top = -INFINITY;
        for (std::int64_t j = first; j < last; ++j) {
          float dot = 0.f;
          for (std::int64_t c = 0; c < d.dk; ++c)
            dot += qv[static_cast<std::size_t>((i * d.heads + h) * d.dk + c)] *
                   kv[static_cast<std::size_t>((j * d.heads + h) * d.dk + c)];
          score[static_cast<std::size_t>(j - first)] = scale * dot;
          top = std::max(top, scale * dot);
        }
        float z = 0.f;
        for (float& x : score) z += (x = std::exp(x - top));
        for (std::int64_t j = first; j < last; ++j)
          for (std::int64_t c = 0; c < d.dv; ++c)
            out[static_cast<std::size_t>((i * d.heads + h) * d.dv + c)] += score[static_cast<std::size_t>(j - first)] / z *
                                                                           vv[static_cast<std::size_t>((j * d.heads + h) * d.dv + c)];
        lse[static_cast<std::size_t>(i * d.heads + h)] = top + std::log(z);
      }
  }
  return {Tensor::from_vector(out, {s.rows, d.heads, d.dv}), Tensor::from_vector(lse, {s.rows, d.heads})};
}

}  // namespace topo
