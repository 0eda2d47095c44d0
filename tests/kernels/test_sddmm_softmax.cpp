#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "kernels/sparse/edge_softmax.hpp"
#include "kernels/sparse/edge_softmax_math.hpp"
#include "kernels/sparse/sddmm.hpp"
#include "kernels/threads.hpp"
#include "tests/kernels/sparse_test_graphs.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::testing;

namespace {

// Destinations of every degree class the CPU backend handles differently: empty rows, runs of equal degree
// longer than one tile (4096 floats: 136 rows of 5 x 6), degrees around the heavy-row threshold (32), rows
// too long for any tile (700 x 6 and 4097 x 1 floats). Edges in destination order give consecutive edge
// ids per row; `shuffled` lists the same edges in a random order (permuted ids), `half_shuffled` only the
// second half of them, so that a thread's range of rows may be all consecutive ids (swept in place) or not
// (tiles) depending on the partition. Returns the graph and, for each of its edges, the index of that edge
// in destination order.
enum class EdgeOrder { Destination, Shuffled, HalfShuffled };
std::pair<CooGraph, std::vector<std::int64_t>> softmax_tiling_graph(EdgeOrder edge_order) {
  std::vector<std::int64_t> degrees = {0, 1, 1, 2, 0, 3};
  for (int i = 0; i < 300; ++i) degrees.push_back(5);
  for (std::int64_t d : {9, 9, 8, 31, 32, 33, 129, 0, 700, 1, 4097, 5, 5}) degrees.push_back(d);
  std::mt19937_64 rng(17);
  const auto [src, dst] = edges_with_degrees(degrees, 50, rng);
  std::vector<std::int64_t> order(src.size());
  std::iota(order.begin(), order.end(), 0);
  if (edge_order != EdgeOrder::Destination)
    std::shuffle(order.begin() + (edge_order == EdgeOrder::HalfShuffled ? order.size() / 2 : 0), order.end(), rng);
  std::vector<std::int64_t> s(src.size()), d(src.size());
  for (std::size_t e = 0; e < order.size(); ++e) s[e] = src[order[e]], d[e] = dst[order[e]];
  const auto nd = static_cast<std::int64_t>(degrees.size());
  const char* name = edge_order == EdgeOrder::Destination ? "destination order"
                     : edge_order == EdgeOrder::Shuffled  ? "shuffled"
                                                          : "half shuffled";
  return {make_coo_graph(name, 50, nd, s, d, DType::I32), order};
}

}  // namespace

TEST_CASE("edge_softmax: every tiling path matches the reference, for consecutive and permuted edge ids") {
  const auto [plain, identity] = softmax_tiling_graph(EdgeOrder::Destination);
  const auto [shuffled, order] = softmax_tiling_graph(EdgeOrder::Shuffled);
  // 16 and 17: the widest row one masked vector holds in the backward's row sweep, and one past it.
  for (std::int64_t cols : {1, 6, 7, 16, 17}) {
    CAPTURE(cols);
    // Wide logits (|x| <= 40) so that skipping the max subtraction would overflow exp.
    const Tensor x = random_uniform({plain.num_edges(), cols}, 31, -40.f, 40.f);
    const Tensor dy = random_uniform(x.shape(), 32);
    const auto xv = x.to_vector<float>(), dyv = dy.to_vector<float>();
    const Tensor y = edge_softmax(plain.in, x);
    const auto yv = y.to_vector<float>();
    TOPO_CHECK_CLOSE(yv, reference::edge_softmax(plain, xv, cols), 1e-6, 1e-5);
    const auto dx = edge_softmax_backward(plain.in, y, dy).to_vector<float>();
    TOPO_CHECK_CLOSE(dx, reference::edge_softmax_backward(plain, yv, dyv, cols), 1e-6, 1e-4);

    // The same edges under permuted ids: edge e of `shuffled` is edge order[e] of `plain`.
    std::vector<float> xs(xv.size()), dys(xv.size());
    for (std::int64_t e = 0; e < shuffled.num_edges(); ++e)
      for (std::int64_t c = 0; c < cols; ++c) {
        xs[e * cols + c] = xv[order[e] * cols + c];
        dys[e * cols + c] = dyv[order[e] * cols + c];
      }
    const Tensor ys = edge_softmax(shuffled.in, Tensor::from_vector(xs, x.shape()));
    const auto dxs = edge_softmax_backward(shuffled.in, ys, Tensor::from_vector(dys, x.shape())).to_vector<float>();
    const auto ysv = ys.to_vector<float>();
    std::vector<float> y_back(yv.size()), dx_back(yv.size());
    for (std::int64_t e = 0; e < shuffled.num_edges(); ++e)
      for (std::int64_t c = 0; c < cols; ++c) {
        y_back[order[e] * cols + c] = ysv[e * cols + c];
        dx_back[order[e] * cols + c] = dxs[e * cols + c];
      }
    TOPO_CHECK_CLOSE(y_back, yv, 1e-6, 1e-5);
    TOPO_CHECK_CLOSE(dx_back, dx, 1e-6, 1e-4);
  }
}

TEST_CASE("edge_softmax: forward and backward are bitwise identical for 1, 2 and 3 threads") {
  // HalfShuffled: with one thread a short row goes through a tile, with more it may be swept in place.
  for (EdgeOrder edge_order : {EdgeOrder::Destination, EdgeOrder::Shuffled, EdgeOrder::HalfShuffled})
    for (std::int64_t cols : {6, 10}) {
      const CooGraph g = softmax_tiling_graph(edge_order).first;
      CAPTURE(g.name);
      CAPTURE(cols);
      const Tensor x = random_uniform({g.num_edges(), cols}, 33, -4.f, 4.f), dy = random_uniform(x.shape(), 34);
      const int saved = num_threads();
      std::vector<std::vector<float>> ys, dxs;
      for (int threads : {1, 2, 3}) {
        set_num_threads(threads);
        const Tensor y = edge_softmax(g.in, x);
        ys.push_back(y.to_vector<float>());
        dxs.push_back(edge_softmax_backward(g.in, y, dy).to_vector<float>());
      }
      set_num_threads(saved);
      CHECK(ys[0] == ys[1]);
      CHECK(ys[0] == ys[2]);
      CHECK(dxs[0] == dxs[1]);
      CHECK(dxs[0] == dxs[2]);
    }
}

TEST_CASE("edge_softmax: logits of zero columns ([E, 0], [E, 2, 0]) give empty outputs, forward and backward") {
  // The tiles size themselves by the row width: zero columns divided by zero (found by fuzz_graph_api).
  const CooGraph g = softmax_tiling_graph(EdgeOrder::Shuffled).first;
  for (const Shape& shape : {Shape{g.num_edges(), 0}, Shape{g.num_edges(), 2, 0}}) {
    const Tensor x = Tensor::empty(shape);
    const Tensor y = edge_softmax(g.in, x);
    CHECK(y.shape() == shape);
    CHECK(edge_softmax_backward(g.in, y, x).shape() == shape);
  }
}

TEST_CASE("gsddmm: every op and target pair matches the per-edge reference") {
  const SddmmOp ops[] = {SddmmOp::Add, SddmmOp::Sub, SddmmOp::Mul, SddmmOp::Div,
                         SddmmOp::Dot, SddmmOp::CopyLhs, SddmmOp::CopyRhs};
  const Target targets[] = {Target::U, Target::V, Target::E};
  for (const CooGraph& g : test_graphs())
    for (SddmmOp op : ops)
      for (Target lt : targets)
        for (Target rt : targets)
          for (auto [H, D] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {6, 7}, {6, 50}}) {
            CAPTURE(g.name);
            CAPTURE(static_cast<int>(op));
            CAPTURE(static_cast<int>(lt));
            CAPTURE(static_cast<int>(rt));
            TOPO_CAPTURE(H);
            TOPO_CAPTURE(D);
            Tensor lhs = random_uniform({reference::target_rows(lt, g), H, D}, 3, 0.5f, 2.f);
            Tensor rhs = random_uniform({reference::target_rows(rt, g), H, D}, 4, 0.5f, 2.f);
            Tensor out = gsddmm(op, g.in, lhs, rhs, lt, rt);
            const std::int64_t od = op == SddmmOp::Dot ? 1 : D;
            CHECK(out.shape() == Shape{g.num_edges(), H, od});
            const auto expected = reference::gsddmm(op, g, lhs.to_vector<float>(), lt, rhs.to_vector<float>(), rt, H, D);
            TOPO_CHECK_CLOSE(out.to_vector<float>(), expected, 1e-5, 1e-5);
          }
}

TEST_CASE("gsddmm: the fast path equals the readable reference at awkward sizes, every op and target pair") {
  // Degrees 0 ... 40 (rows whose edge x head pairs are not a multiple of 4, heavy rows), head dims around
  // the vector width (1, 15, 16, 17, 33, 50, 64, 65) and 1, 3 or 6 heads; edge ids permuted.
  std::vector<std::int64_t> degrees = {0, 1, 2, 3, 0, 5, 9, 40, 7, 1};
  std::mt19937_64 rng(5);
  auto [src, dst] = edges_with_degrees(degrees, 23, rng);
  std::vector<std::size_t> order(src.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<std::int64_t> s(src.size()), d(src.size());
  for (std::size_t e = 0; e < order.size(); ++e) s[e] = src[order[e]], d[e] = dst[order[e]];
  const std::int64_t nd = static_cast<std::int64_t>(degrees.size());
  for (DType index : {DType::I32, DType::I64}) {
    const CooGraph g = make_coo_graph("awkward", 23, nd, s, d, index);
    const SddmmOp ops[] = {SddmmOp::Add, SddmmOp::Sub, SddmmOp::Mul, SddmmOp::Div,
                           SddmmOp::Dot, SddmmOp::CopyLhs, SddmmOp::CopyRhs};
    const Target targets[] = {Target::U, Target::V, Target::E};
    for (SddmmOp op : ops)
      for (Target lt : targets)
        for (Target rt : targets)
          for (std::int64_t H : {1, 3, 6})
            for (std::int64_t D : {1, 15, 16, 17, 33, 50, 64, 65}) {
              CAPTURE(static_cast<int>(op));
              CAPTURE(static_cast<int>(lt));
              CAPTURE(static_cast<int>(rt));
              CAPTURE(H);
              CAPTURE(D);
              const Tensor lhs = random_uniform({reference::target_rows(lt, g), H, D}, 11, 0.5f, 2.f);
              const Tensor rhs = random_uniform({reference::target_rows(rt, g), H, D}, 12, 0.5f, 2.f);
              const Tensor fast = gsddmm(op, g.in, lhs, rhs, lt, rt);
              const Tensor ref = gsddmm_reference(op, g.in, lhs, rhs, lt, rt);
              REQUIRE(fast.shape() == ref.shape());
              // Dot sums in another order (vector lanes, then a tree): float rounding only.
              TOPO_CHECK_CLOSE(fast.to_vector<float>(), ref.to_vector<float>(), 1e-5, 1e-5);
            }
  }
}

TEST_CASE("gsddmm: Dot is bitwise identical for 1, 2 and 3 threads") {
  const CooGraph g = softmax_tiling_graph(EdgeOrder::Shuffled).first;
  const Tensor q = random_uniform({g.num_dst, 6, 50}, 13), k = random_uniform({g.num_src, 6, 50}, 14);
  const int saved = num_threads();
  std::vector<std::vector<float>> outs;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    outs.push_back(gsddmm(SddmmOp::Dot, g.in, q, k, Target::V, Target::U).to_vector<float>());
  }
  set_num_threads(saved);
  CHECK(outs[0] == outs[1]);
  CHECK(outs[0] == outs[2]);
}

TEST_CASE("gsddmm: per-head broadcasting of an [E, H, 1] operand") {
  CooGraph g = ring_relay_graph(7);
  Tensor lhs = random_uniform({g.num_src, 6, 50}, 1);
  Tensor w = random_uniform({g.num_edges(), 6, 1}, 2);
  Tensor out = gsddmm(SddmmOp::Mul, g.in, lhs, w, Target::U, Target::E);
  CHECK(out.shape() == Shape{g.num_edges(), 6, 50});
  const auto l = lhs.to_vector<float>(), wv = w.to_vector<float>(), o = out.to_vector<float>();
  std::vector<float> expected(o.size());
  for (std::int64_t e = 0; e < g.num_edges(); ++e)
    for (std::int64_t h = 0; h < 6; ++h)
      for (std::int64_t d = 0; d < 50; ++d) expected[(e * 6 + h) * 50 + d] = l[(g.src[e] * 6 + h) * 50 + d] * wv[e * 6 + h];
  TOPO_CHECK_CLOSE(o, expected, 1e-6, 1e-6);
}

TEST_CASE("edge_softmax: normalises over in-edges; backward matches finite differences") {
  for (const CooGraph& g : test_graphs())
    for (std::int64_t cols : {1, 6}) {
      CAPTURE(g.name);
      CAPTURE(cols);
      Tensor x = random_uniform({g.num_edges(), cols}, 5, -4.f, 4.f);
      Tensor y = edge_softmax(g.in, x);
      const auto xv = x.to_vector<float>();
      TOPO_CHECK_CLOSE(y.to_vector<float>(), reference::edge_softmax(g, xv, cols), 1e-6, 1e-5);

      // d/dx of L = sum(y * R) by central differences of the reference.
      Tensor R = random_uniform(x.shape(), 6);
      const auto rv = R.to_vector<float>();
      const auto dx = edge_softmax_backward(g.in, y, R).to_vector<float>();
      std::vector<float> numeric(xv.size());
      const float h = 1e-2f;
      for (std::size_t i = 0; i < xv.size(); ++i) {
        auto xp = xv, xm = xv;
        xp[i] += h;
        xm[i] -= h;
        const auto yp = reference::edge_softmax(g, xp, cols), ym = reference::edge_softmax(g, xm, cols);
        double lp = 0, lm = 0;
        for (std::size_t j = 0; j < xv.size(); ++j) {
          lp += double(yp[j]) * rv[j];
          lm += double(ym[j]) * rv[j];
        }
        numeric[i] = static_cast<float>((lp - lm) / (2 * h));
      }
      TOPO_CHECK_CLOSE(dx, numeric, 2e-3, 2e-2);
    }
}

TEST_CASE("edge_softmax: norm_by src uses the CSR by source") {
  CooGraph g = random_graph(9, 9, 50, 21);
  Tensor x = random_uniform({g.num_edges(), 3}, 1);
  // Softmax over out-edges equals softmax over in-edges of the reversed graph.
  CooGraph rev = make_coo_graph("reverse", g.num_dst, g.num_src, g.dst, g.src);
  CHECK(edge_softmax(g.out, x).to_vector<float>() == edge_softmax(rev.in, x).to_vector<float>());
}

TEST_CASE("edge_softmax_group (the per-row math the CUDA kernel runs) matches the reference on the host") {
  for (const CooGraph& g : test_graphs()) {
    CAPTURE(g.name);
    const std::int64_t cols = 3;
    Tensor x = random_uniform({g.num_edges(), cols}, 8, -4.f, 4.f);
    const auto xv = x.to_vector<float>();
    std::vector<float> y(xv.size(), 0.f), dx(xv.size(), 0.f);
    const Tensor in_ptr = g.in.indptr, in_eid = g.in.eids;
    const auto indptr = in_ptr.dtype() == DType::I64 ? in_ptr.to_vector<std::int64_t>()
                                                     : std::vector<std::int64_t>();
    if (indptr.empty()) continue;  // the int32 graph is covered through the public op
    const auto eids = in_eid.to_vector<std::int64_t>();
    for (std::int64_t r = 0; r < g.num_dst; ++r)
      for (std::int64_t c = 0; c < cols; ++c) edge_softmax_group(eids.data(), indptr[r], indptr[r + 1], xv.data(), y.data(), cols, c);
    TOPO_CHECK_CLOSE(y, reference::edge_softmax(g, xv, cols), 1e-6, 1e-5);
    // Backward against the public op (itself checked against finite differences above).
    const Tensor dy = random_uniform(x.shape(), 9);
    const auto dyv = dy.to_vector<float>();
    for (std::int64_t r = 0; r < g.num_dst; ++r)
      for (std::int64_t c = 0; c < cols; ++c)
        edge_softmax_group_backward(eids.data(), indptr[r], indptr[r + 1], y.data(), dyv.data(), dx.data(), cols, c);
    TOPO_CHECK_CLOSE(dx, edge_softmax_backward(g.in, Tensor::from_vector(y, x.shape()), dy).to_vector<float>(), 1e-6, 1e-5);
  }
}
