#include <cmath>
#include "kernels/sparse/op_codes.hpp"
#include "kernels/sparse/simd_rows.hpp"
#include "kernels/sparse/spmm.hpp"
#include "kernels/threads.hpp"
#include "tests/kernels/sparse_test_graphs.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::testing;

TEST_CASE("gspmm: every message op x reducer matches the COO reference, with and without head broadcasting") {
  const MessageOp ops[] = {MessageOp::CopyU, MessageOp::CopyE, MessageOp::UAddE,
                           MessageOp::USubE, MessageOp::UMulE, MessageOp::UDivE};
  const SpmmReduce reds[] = {SpmmReduce::Sum, SpmmReduce::Max, SpmmReduce::Min, SpmmReduce::Mean};
  struct Dims { std::int64_t H, D, De; };
  // {8, 8, 1}, {3, 4, 1}, {4, 16, 1}: narrow heads summed together (simd::accumulate_heads).
  const Dims dims[] = {{1, 1, 1}, {1, 7, 7}, {6, 50, 1}, {6, 7, 7}, {2, 64, 1}, {8, 8, 1}, {3, 4, 1}, {4, 16, 1}};
  for (const CooGraph& g : test_graphs())
    for (Dims dm : dims)
      for (MessageOp op : ops)
        for (SpmmReduce red : reds) {
          CAPTURE(g.name);
          CAPTURE(dm.H);
          CAPTURE(dm.D);
          CAPTURE(dm.De);
          CAPTURE(static_cast<int>(op));
          CAPTURE(static_cast<int>(red));
          Tensor uf = random_uniform({g.num_src, dm.H, dm.D}, 7, 0.5f, 2.f);
          Tensor ef = random_uniform({g.num_edges(), dm.H, dm.De}, 8, 0.5f, 2.f);  // away from 0: UDivE
          const bool use_u = message_uses_u(op), use_e = message_uses_e(op);
          if (!use_u && dm.De != dm.D) continue;  // CopyE output is the edge shape itself
          SpmmOutput r = gspmm(op, red, g.in, use_u ? uf : Tensor(), use_e ? ef : Tensor());
          CHECK(r.out.shape() == Shape{g.num_dst, dm.H, dm.D});
          TOPO_CHECK_CLOSE(r.out.to_vector<float>(),
                           reference::gspmm(op, red, g, use_u ? uf.to_vector<float>() : std::vector<float>{},
                                    use_e ? ef.to_vector<float>() : std::vector<float>{}, dm.H, dm.D, dm.De),
                           1e-5, 1e-5);
          if (red == SpmmReduce::Max || red == SpmmReduce::Min) {
            // The arg indices name an edge into v whose message is the reported value; -1 where v has no in-edges.
            const auto au = r.arg_u.to_vector<std::int64_t>(), ae = r.arg_e.to_vector<std::int64_t>();
            const auto out = r.out.to_vector<float>();
            const auto ufv = uf.to_vector<float>(), efv = ef.to_vector<float>();
            for (std::int64_t v = 0; v < g.num_dst; ++v)
              for (std::int64_t f = 0; f < dm.H * dm.D; ++f) {
                const std::int64_t i = v * dm.H * dm.D + f, e = ae[i];
                if (e < 0) {
                  CHECK(au[i] == -1);
                  CHECK(out[i] == 0.f);
                  continue;
                }
                REQUIRE(g.dst[e] == v);
                CHECK(g.src[e] == au[i]);
                const std::int64_t h = f / dm.D, d = f % dm.D;
                const float m = reference::spmm_message(op, ufv[(g.src[e] * dm.H + h) * dm.D + d],
                                            efv[(e * dm.H + h) * dm.De + (dm.De == 1 ? 0 : d)]);
                CHECK(m == out[i]);
              }
          }
        }
}

TEST_CASE("gspmm: large degree, wide features, and identical results for 1 and 2 threads") {
  CooGraph g = random_graph(257, 64, 5000, 11);
  Tensor uf = random_uniform({257, 300}, 1);
  const int saved = num_threads();
  set_num_threads(1);
  const auto one = gspmm(MessageOp::CopyU, SpmmReduce::Sum, g.in, uf, Tensor()).out.to_vector<float>();
  set_num_threads(2);
  const auto two = gspmm(MessageOp::CopyU, SpmmReduce::Sum, g.in, uf, Tensor()).out.to_vector<float>();
  set_num_threads(saved);
  CHECK(one == two);  // bitwise: no atomics, fixed per-row order
  TOPO_CHECK_CLOSE(one, reference::gspmm(MessageOp::CopyU, SpmmReduce::Sum, g, uf.to_vector<float>(), {}, 1, 300, 1), 1e-4,
                   1e-5);
}

TEST_CASE("gspmm: sums at every width around the vector and register-block sizes, short and long rows") {
  // copy_u and per-head u_mul_e sums keep short rows' outputs in registers in blocks of 4 x 16 floats, with a
  // masked last vector, and stream long rows (here the relay's 40 in-edges and random destination 0);
  // widths on either side of 16 and 64 reach every branch of that.
  const std::int64_t widths[] = {1, 15, 16, 17, 63, 64, 65, 100, 300};
  const CooGraph graphs[] = {ring_relay_graph(40), random_graph(50, 20, 300, 5, DType::I32), window_graph(31, 9)};
  for (const CooGraph& g : graphs)
    for (std::int64_t heads : {1, 3})
      for (std::int64_t width : widths) {
        CAPTURE(g.name);
        CAPTURE(heads);
        CAPTURE(width);
        Tensor uf = random_uniform({g.num_src, heads, width}, 21, -1.f, 1.f);
        Tensor ef = random_uniform({g.num_edges(), heads, 1}, 22, 0.f, 1.f);
        for (SpmmReduce red : {SpmmReduce::Sum, SpmmReduce::Mean}) {
          TOPO_CHECK_CLOSE(gspmm(MessageOp::CopyU, red, g.in, uf, Tensor()).out.to_vector<float>(),
                           reference::gspmm(MessageOp::CopyU, red, g, uf.to_vector<float>(), {}, heads, width, 1), 1e-5, 1e-5);
          TOPO_CHECK_CLOSE(gspmm(MessageOp::UMulE, red, g.in, uf, ef).out.to_vector<float>(),
                           reference::gspmm(MessageOp::UMulE, red, g, uf.to_vector<float>(), ef.to_vector<float>(), heads,
                                    width, 1),
                           1e-5, 1e-5);
        }
      }
}

TEST_CASE("gspmm: bad inputs are errors naming what is wrong") {
  CooGraph g = ring_relay_graph(4);
  CHECK_THROWS_WITH_AS(gspmm(MessageOp::CopyU, SpmmReduce::Sum, g.in, Tensor::zeros({3, 2}), Tensor()),
                       doctest::Contains("must have 5 rows"), Error);
  CHECK_THROWS_WITH_AS(gspmm(MessageOp::UMulE, SpmmReduce::Sum, g.in, Tensor::zeros({5, 2, 3}),
                             Tensor::zeros({g.num_edges(), 3, 1})),
                       doctest::Contains("do not broadcast"), Error);
  CHECK_THROWS_AS(gspmm(MessageOp::UMulE, SpmmReduce::Sum, g.in, Tensor::zeros({5, 2}), Tensor()), Error);
}

TEST_CASE("simd::accumulate_rows gives sum_j w_j x_j, j ascending from 0, bit for bit, at every head width") {
  // Narrow heads (4, 8, 16 floats; heads x width <= 64) are summed together, the others head by head, a row
  // longer than 32 with the plain loop: all must give the fused multiply-adds in j order, as written here.
  // Not structured bindings: clang 14 (the sanitizer build) cannot capture them in the lambdas below.
  for (const auto& shape : {std::pair<std::int64_t, std::int64_t>{8, 8}, {3, 8}, {5, 4}, {16, 4}, {4, 16}, {3, 16},
                            {5, 16}, {2, 24}, {1, 8}, {7, 1}})
    for (std::int64_t nj : {0, 1, 7, 20, 32}) {
      const std::int64_t heads = shape.first, n = shape.second;
      CAPTURE(heads);
      CAPTURE(n);
      CAPTURE(nj);
      const std::int64_t rows = std::max<std::int64_t>(nj, 1);
      const std::vector<float> x = random_uniform({rows, heads * n}, 3, -2.f, 2.f).to_vector<float>();
      const std::vector<float> w = random_uniform({rows, heads}, 4, -1.f, 1.f).to_vector<float>();
      std::vector<float> out(static_cast<std::size_t>(heads * n), NAN), expected(out.size(), 0.f);
      simd::accumulate_rows(
          nj, [&](std::int64_t j) { return x.data() + j * heads * n; },
          [&](std::int64_t j, std::int64_t h) { return w[static_cast<std::size_t>(j * heads + h)]; }, heads, n,
          out.data());
      for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t i = 0; i < n; ++i) {
          float acc = 0.f;
          for (std::int64_t j = 0; j < nj; ++j) {
            const auto at = static_cast<std::size_t>(j * heads * n + h * n + i);
            acc = std::fma(w[static_cast<std::size_t>(j * heads + h)], x[at], acc);
          }
          expected[static_cast<std::size_t>(h * n + i)] = acc;
        }
      CHECK(out == expected);
    }
}

TEST_CASE("op codes from outside C++ convert to the sparse ops' enums, or fail naming the code") {
  CHECK(message_op_from_code(0) == MessageOp::CopyU);
  CHECK(message_op_from_code(5) == MessageOp::UDivE);
  CHECK(spmm_reduce_from_code(3) == SpmmReduce::Mean);
  CHECK(sddmm_op_from_code(6) == SddmmOp::CopyRhs);
  CHECK(target_from_code(2) == Target::E);
  CHECK_THROWS_WITH_AS(message_op_from_code(6), "gspmm: message op code 6 is outside [0, 6)", Error);
  CHECK_THROWS_WITH_AS(spmm_reduce_from_code(99), "gspmm: reducer code 99 is outside [0, 4)", Error);
  CHECK_THROWS_WITH_AS(sddmm_op_from_code(-1), "gsddmm: op code -1 is outside [0, 7)", Error);
  CHECK_THROWS_WITH_AS(target_from_code(3), "gsddmm: target code 3 is outside [0, 3)", Error);
}
