// CUDA vs CPU for what the op table (tests/gpu/test_op_table_gpu.cpp) does not cover: counter-based random draws
// (bitwise), an int64 gather, the in-place and accumulating forms (axpy_, fill_, gemm with beta,
// add_scalar, sum_to_shape on its own), and the errors that name a bad id. Runs only where a device exists.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/dense/binary.hpp"
#include "kernels/dense/gemm.hpp"
#include "kernels/dense/indexing.hpp"
#include "kernels/dense/loss.hpp"
#include "kernels/dense/random.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using topo::testing::kAwkwardSizes;

using topo::testing::error_of;
using topo::testing::kGpu;

TEST_CASE("gpu random: dropout masks and uniform draws are bit-identical to the CPU, normals agree") {
  for (std::int64_t n : kAwkwardSizes) {
    for (std::uint64_t offset : {0ull, 1ull, 3ull, 5ull, (1ull << 33) + 2}) {
      CAPTURE(n);
      CAPTURE(offset);
      Tensor x = topo::testing::random_uniform({n, 9}, n, 0.5f, 1.5f);
      Tensor xg = x.to(kGpu);
      CHECK(dropout(xg, 0.35f, 99, offset).to_vector<float>() == dropout(x, 0.35f, 99, offset).to_vector<float>());
      const Tensor mask = dropout_mask(x.numel(), 0.35f, 99, offset), mask_g = dropout_mask(x.numel(), 0.35f, 99, offset, kGpu);
      CHECK(mask_g.to_vector<std::int32_t>() == mask.to_vector<std::int32_t>());
      const MaskedDropout both = dropout_with_mask(xg, 0.35f, 99, offset);
      CHECK(both.mask.to_vector<std::int32_t>() == mask.to_vector<std::int32_t>());
      CHECK(both.y.to_vector<float>() == dropout(x, 0.35f, 99, offset).to_vector<float>());
      CHECK(dropout_apply_mask(xg, mask_g, 0.35f).to_vector<float>() == dropout(x, 0.35f, 99, offset).to_vector<float>());
      if (n > 1)  // a run of rows starting inside a word
        CHECK(dropout_apply_mask(xg.slice_rows(1, n), mask_g, 0.35f, 9).to_vector<float>() ==
              dropout_apply_mask(x.slice_rows(1, n), mask, 0.35f, 9).to_vector<float>());
    }
    CHECK(random_uniform({n, 9}, -2.f, 3.f, 5, kGpu).to_vector<float>() ==
          random_uniform({n, 9}, -2.f, 3.f, 5).to_vector<float>());
    TOPO_CHECK_CLOSE(random_normal({n, 9}, 1.f, 2.f, 5, kGpu).to_vector<float>(),
                     random_normal({n, 9}, 1.f, 2.f, 5).to_vector<float>(), 1e-5, 1e-5);
  }
  const std::int64_t big = (1 << 22) + 7;
  Tensor ones = Tensor::full({big}, 1.f);
  CHECK(dropout(ones.to(kGpu), 0.5f, 3, 17).to_vector<float>() == dropout(ones, 0.5f, 3, 17).to_vector<float>());
  CHECK(dropout(ones.to(kGpu), 0.f, 3).to_vector<float>() == std::vector<float>(big, 1.f));
  CHECK_THROWS_AS(dropout(ones.to(kGpu), 1.f, 3), Error);
}

TEST_CASE("gpu indexing: an int64 table gathers as on the CPU; bad ids are named") {
  for (std::int64_t n : kAwkwardSizes) {
    CAPTURE(n);
    // Gathers of float rows (int32 and int64 ids) are in the op table; an int64 table is not (not differentiable).
    const Tensor idx = topo::testing::random_ids({2 * n + 3}, n, n), xl = topo::testing::random_ids({n, 5}, 1 << 30, n);
    CHECK(index_select(xl.to(kGpu), idx.to(kGpu)).to_vector<std::int64_t>() == index_select(xl, idx).to_vector<std::int64_t>());
  }
  Tensor x = topo::testing::random_uniform({5, 3}, 1, -1.f, 1.f, kGpu);
  std::string e = error_of([&] {
    (void)index_select(x, Tensor::from_vector(std::vector<std::int64_t>{0, 4, 9, 5}, {4}, kGpu));
  });
  CHECK(e.find("position 2") != std::string::npos);
  CHECK(e.find("is 9") != std::string::npos);
  e = error_of([&] { (void)index_add(5, Tensor::from_vector(std::vector<std::int32_t>{-3}, {1}, kGpu), x.slice_rows(0, 1)); });
  CHECK(e.find("-3") != std::string::npos);
  const IndexScan scan = scan_indices(Tensor::from_vector(std::vector<std::int64_t>{1, -100, 2, 0}, {4}, kGpu), 3, -100);
  CHECK(scan.first_bad == -1);
  CHECK(scan.valid == 3);
}

// Cross entropy and mse at awkward sizes (33 and 5000 classes), forward and backward: the op table.
TEST_CASE("gpu losses: every target ignored gives 0; a target out of range is named") {
  Tensor logits = topo::testing::random_uniform({3, 4}, 1, -1.f, 1.f, kGpu);
  CHECK(cross_entropy(logits, Tensor::from_vector(std::vector<std::int64_t>{-100, -100, -100}, {3}, kGpu)).item() == 0.f);
  std::string e = error_of([&] {
    (void)cross_entropy(logits, Tensor::from_vector(std::vector<std::int64_t>{0, 1, 11}, {3}, kGpu));
  });
  CHECK(e.find("row 2") != std::string::npos);
  CHECK(e.find("is 11") != std::string::npos);
}

TEST_CASE("gpu: add_scalar, sum_to_shape, axpy_, fill_ and gemm onto c (alpha, beta) match the CPU") {
  const auto host = [](const Tensor& t) { return t.to_vector<float>(); };
  Tensor x = topo::testing::random_uniform({257, 33}, 5), s = topo::testing::random_uniform({257, 33}, 6);
  TOPO_CHECK_CLOSE(host(add_scalar(x.to(kGpu), 0.5f)), host(add_scalar(x, 0.5f)), 1e-6, 1e-6);
  for (const Shape& t : {Shape{33}, Shape{257, 1}, Shape{}, Shape{257, 33}})
    TOPO_CHECK_CLOSE(host(sum_to_shape(x.to(kGpu), t)), host(sum_to_shape(x, t)), 1e-4, 1e-5);
  Tensor yg = x.to(kGpu), yc = x.clone();
  axpy_(yg, 0.25f, s.to(kGpu));
  axpy_(yc, 0.25f, s);
  TOPO_CHECK_CLOSE(host(yg), host(yc), 1e-6, 1e-6);
  fill_(yg, 1.5f);
  CHECK(host(yg) == std::vector<float>(yg.numel(), 1.5f));
  // c = 0.5 op(a) op(b) + 2 c (the table's matmul and linear run beta = 0 and 1), batched with a shared b.
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      CAPTURE(ta);
      CAPTURE(tb);
      const Tensor a = topo::testing::random_uniform(ta ? Shape{7, 31, 33} : Shape{7, 33, 31}, 1),
                   b = topo::testing::random_uniform(tb ? Shape{257, 31} : Shape{31, 257}, 2),
                   c = topo::testing::random_uniform({7, 33, 257}, 3);
      Tensor cg = c.to(kGpu), cc = c.clone();
      gemm(ta, tb, 0.5f, a.to(kGpu), b.to(kGpu), 2.f, cg);
      gemm(ta, tb, 0.5f, a, b, 2.f, cc);
      TOPO_CHECK_CLOSE(host(cg), host(cc), 1e-4, 1e-4);
    }
}
