// The bf16 attention on AMX tiles (kernels/dense/flash_attention_amx.hpp), through flash_attention at
// Precision::bf16 on the AMX kernel, against a double-precision reference that rounds to bf16 where the kernel
// does (q, k, v and dout; P before P V; in the backward P before P^T dout and dS before dS^T Q and dS K), so
// the tolerance is fp32 summation's, not bf16's: the fp32 kernels (2^-8 away) fail it. Awkward sizes: lengths
// 1 and 31 past a 32-row block, head widths of 50 (two k tiles, 14 columns of padding) and 20 with dv != dk, a
// short sequence beside (the other schedule), and thread-count invariance. Skipped, said, where the CPU has
// no AMX tiles.
#include <cmath>

#include "kernels/dense/flash_attention.hpp"
#include "kernels/dense/flash_attention_amx.hpp"
#include "kernels/dense/flash_attention_lanes.hpp"
#include "kernels/dense/gemm_amx.hpp"
#include "kernels/dense/gemm_backend.hpp"
#include "kernels/dense/gemm_bf16.hpp"
#include "kernels/threads.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::testing;

namespace {

double r16(float x) { return cpu::round_to_bf16(x); }  // x rounded to bf16 (nearest even), exactly

struct Problem {
  std::vector<std::int64_t> lengths;
  std::int64_t heads, dk, dv;
  float scale;
  std::int64_t rows() const {
    std::int64_t n = 0;
    for (std::int64_t l : lengths) n += l;
    return n;
  }
};

struct Expected {
  std::vector<float> out, lse, dq, dk, dv;
};

std::vector<float> floats(const std::vector<double>& x) { return {x.begin(), x.end()}; }

// Full attention per (sequence, head) in double, rounding as the kernel does. The forward rounds the
// unnormalised exp (its max is 1) before P V and divides after; the backward's P is normalised (from lse).
Expected model(const Problem& p, const std::vector<float>& q, const std::vector<float>& k,
               const std::vector<float>& v, const std::vector<float>& g) {
  const std::int64_t H = p.heads, dk = p.dk, dv = p.dv;
  const auto at = [&](std::int64_t row, std::int64_t h, std::int64_t c, std::int64_t width) {
    return static_cast<std::size_t>((row * H + h) * width + c);
  };
  const auto N = static_cast<std::size_t>(p.rows() * H);
  std::vector<double> out(N * dv), lse(N), dq(N * dk), dkk(N * dk), dvv(N * dv);
  std::int64_t off = 0;
  for (std::int64_t n : p.lengths) {
    for (std::int64_t h = 0; h < H; ++h) {
      std::vector<double> s(static_cast<std::size_t>(n * n));  // scale q . k, the bf16 inputs' exact sums
      for (std::int64_t i = 0; i < n; ++i) {
        double top = -INFINITY;
        for (std::int64_t j = 0; j < n; ++j) {
          double acc = 0;
          for (std::int64_t c = 0; c < dk; ++c) acc += r16(q[at(off + i, h, c, dk)]) * r16(k[at(off + j, h, c, dk)]);
          s[static_cast<std::size_t>(i * n + j)] = p.scale * acc;
          top = std::max(top, p.scale * acc);
        }
        double l = 0;
        for (std::int64_t j = 0; j < n; ++j) {
          const double x = std::exp(s[static_cast<std::size_t>(i * n + j)] - top);
          l += x;
          for (std::int64_t c = 0; c < dv; ++c)
            out[at(off + i, h, c, dv)] += r16(static_cast<float>(x)) * r16(v[at(off + j, h, c, dv)]);
        }
        for (std::int64_t c = 0; c < dv; ++c) out[at(off + i, h, c, dv)] /= l;
        lse[at(off + i, h, 0, 1)] = top + std::log(l);
      }
      for (std::int64_t i = 0; i < n; ++i) {
        double delta = 0;  // dout . out, as the caller computes it from the forward's fp32 out
        for (std::int64_t c = 0; c < dv; ++c)
          delta += static_cast<double>(g[at(off + i, h, c, dv)]) * static_cast<float>(out[at(off + i, h, c, dv)]);
        for (std::int64_t j = 0; j < n; ++j) {
          const double pr = std::exp(s[static_cast<std::size_t>(i * n + j)] - lse[at(off + i, h, 0, 1)]);
          double dp = 0;
          for (std::int64_t c = 0; c < dv; ++c) dp += r16(g[at(off + i, h, c, dv)]) * r16(v[at(off + j, h, c, dv)]);
          const double ds = r16(static_cast<float>(p.scale * pr * (dp - delta))), p16 = r16(static_cast<float>(pr));
          for (std::int64_t c = 0; c < dv; ++c) dvv[at(off + j, h, c, dv)] += p16 * r16(g[at(off + i, h, c, dv)]);
          for (std::int64_t c = 0; c < dk; ++c) {
            dkk[at(off + j, h, c, dk)] += ds * r16(q[at(off + i, h, c, dk)]);
            dq[at(off + i, h, c, dk)] += ds * r16(k[at(off + j, h, c, dk)]);
          }
        }
      }
    }
    off += n;
  }
  return {floats(out), floats(lse), floats(dq), floats(dkk), floats(dvv)};
}

bool amx_here() {
  if (flash_amx::kAvailable && cpu::amx_gemm_supported()) return true;
  MESSAGE("this CPU (or its kernel, or this build) offers no AMX tiles with bf16: the bf16 attention on AMX is not "
          "checked here");
  return false;
}

}  // namespace

TEST_CASE("flash_attention at bf16 on AMX tiles: against the bf16-rounding double reference at awkward sizes") {
  if (!amx_here()) return;
  const GemmPrecisionGuard bf16(Precision::bf16);
  const GemmBackendGuard amx(Precision::bf16, GemmBackend::amx);
  for (const Problem& p : {Problem{{flash_lanes::kMinLength + 1, 40}, 2, 50, 50, 0.14f},
                           Problem{{flash_lanes::kMinLength + 31}, 3, 20, 36, 0.2f}}) {
    CAPTURE(p.lengths[0]);
    CAPTURE(p.dk);
    REQUIRE(flash_amx::usable(p.lengths[0]));
    const std::int64_t N = p.rows();
    const Tensor q = random_uniform({N, p.heads, p.dk}, 1, -1.f, 1.f);
    const Tensor k = random_uniform({N, p.heads, p.dk}, 2, -1.f, 1.f), v = random_uniform({N, p.heads, p.dv}, 3);
    const Tensor g = random_uniform({N, p.heads, p.dv}, 4, -1.f, 1.f);
    const Expected e =
        model(p, q.to_vector<float>(), k.to_vector<float>(), v.to_vector<float>(), g.to_vector<float>());
    const FlashAttentionOutput fwd = flash_attention(q, k, v, p.lengths, p.scale);
    const FlashAttentionGrads grads = flash_attention_backward(q, k, v, p.lengths, fwd, g, p.scale);
    // Only the long sequence runs on the tiles; the short one keeps its schedule (its products in bf16 too, but
    // not with the rounding of P modelled here), so compare the long sequence's rows.
    const auto head = [&](const std::vector<float>& x, std::int64_t width) {
      return std::vector<float>(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(p.lengths[0] * p.heads * width));
    };
    // Tolerances: the dv products sum bf16 P, whose rounding the reference's double exp can flip (an element off
    // by 2^-8 of its p); each is about a tenth of what the fp32 kernels' results miss by.
    TOPO_CHECK_CLOSE(head(fwd.out.to_vector<float>(), p.dv), head(e.out, p.dv), 2e-5, 2e-4);
    TOPO_CHECK_CLOSE(head(fwd.lse.to_vector<float>(), 1), head(e.lse, 1), 1e-4, 1e-5);
    TOPO_CHECK_CLOSE(head(grads.dv.to_vector<float>(), p.dv), head(e.dv, p.dv), 2e-4, 2e-3);
    TOPO_CHECK_CLOSE(head(grads.dk.to_vector<float>(), p.dk), head(e.dk, p.dk), 2e-5, 2e-4);
    TOPO_CHECK_CLOSE(head(grads.dq.to_vector<float>(), p.dk), head(e.dq, p.dk), 2e-5, 2e-4);
  }
}

TEST_CASE("flash_attention at bf16 on AMX tiles: results do not depend on the thread count") {
  if (!amx_here()) return;
  const GemmPrecisionGuard bf16(Precision::bf16);
  const GemmBackendGuard amx(Precision::bf16, GemmBackend::amx);
  const std::vector<std::int64_t> lengths{300, 260, 301};
  const std::int64_t N = 861;
  const Tensor q = random_uniform({N, 3, 50}, 5), k = random_uniform({N, 3, 50}, 6), v = random_uniform({N, 3, 50}, 7),
               g = random_uniform({N, 3, 50}, 8);
  const int threads = num_threads();
  set_num_threads(1);
  const FlashAttentionOutput one = flash_attention(q, k, v, lengths, 0.14f);
  const FlashAttentionGrads g1 = flash_attention_backward(q, k, v, lengths, one, g, 0.14f);
  set_num_threads(std::max(2, threads));
  const FlashAttentionOutput many = flash_attention(q, k, v, lengths, 0.14f);
  const FlashAttentionGrads g2 = flash_attention_backward(q, k, v, lengths, many, g, 0.14f);
  set_num_threads(threads);
  CHECK(one.out.to_vector<float>() == many.out.to_vector<float>());
  CHECK(one.lse.to_vector<float>() == many.lse.to_vector<float>());
  CHECK(g1.dq.to_vector<float>() == g2.dq.to_vector<float>());
  CHECK(g1.dk.to_vector<float>() == g2.dk.to_vector<float>());
  CHECK(g1.dv.to_vector<float>() == g2.dv.to_vector<float>());
}
