// CUDA vs CPU for random, indexing and loss ops on identical inputs. Runs only where a device exists.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/dense/indexing.hpp"
#include "kernels/dense/loss.hpp"
#include "kernels/dense/random.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using topo::testing::kAwkwardSizes;

using topo::testing::error_of;

namespace {

const Device kGpu = Device::cuda();

Tensor scalar(float v, Device d) { return Tensor::from_vector(std::vector<float>{v}, {}, d); }

}  // namespace

TEST_CASE("gpu random: dropout masks and uniform draws are bit-identical to the CPU, normals agree") {
  for (std::int64_t n : kAwkwardSizes) {
    for (std::uint64_t offset : {0ull, 1ull, 3ull, 5ull, (1ull << 33) + 2}) {
      CAPTURE(n);
      CAPTURE(offset);
      Tensor x = topo::testing::random_uniform({n, 9}, n, 0.5f, 1.5f);
      Tensor xg = x.to(kGpu);
      CHECK(dropout(xg, 0.35f, 99, offset).to_vector<float>() == dropout(x, 0.35f, 99, offset).to_vector<float>());
      CHECK(dropout_backward(xg, 0.35f, 99, offset).to_vector<float>() ==
            dropout_backward(x, 0.35f, 99, offset).to_vector<float>());
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

TEST_CASE("gpu indexing: gathers, scatters, embedding, concat and split match the CPU") {
  for (std::int64_t n : kAwkwardSizes) {
    for (DType idt : {DType::I32, DType::I64}) {
      CAPTURE(n);
      const std::int64_t m = 2 * n + 3, d = 33;
      Tensor x = topo::testing::random_uniform({n, d}, n);
      std::vector<std::int64_t> iv = topo::testing::random_ids({m}, n, m).to_vector<std::int64_t>();
      Tensor idx;
      if (idt == DType::I64) {
        idx = Tensor::from_vector(iv, {m});
      } else {
        idx = Tensor::from_vector(std::vector<std::int32_t>(iv.begin(), iv.end()), {m});
      }
      CHECK(index_select(x.to(kGpu), idx.to(kGpu)).to_vector<float>() == index_select(x, idx).to_vector<float>());
      Tensor xl = topo::testing::random_ids({n, 5}, 1 << 30, n);
      CHECK(index_select(xl.to(kGpu), idx.to(kGpu)).to_vector<std::int64_t>() ==
            index_select(xl, idx).to_vector<std::int64_t>());
      Tensor src = topo::testing::random_uniform({m, d}, m);
      TOPO_CHECK_CLOSE(index_add(n, idx.to(kGpu), src.to(kGpu)).to_vector<float>(),
                       index_add(n, idx, src).to_vector<float>(), 1e-5, 1e-5);
      Tensor ids = idx.reshape({m, 1});
      CHECK(embedding(x.to(kGpu), ids.to(kGpu)).to_vector<float>() == embedding(x, ids).to_vector<float>());
      Tensor grad = topo::testing::random_uniform({m, 1, d}, m + 1);
      TOPO_CHECK_CLOSE(embedding_backward(grad.to(kGpu), ids.to(kGpu), n).to_vector<float>(),
                       embedding_backward(grad, ids, n).to_vector<float>(), 1e-5, 1e-5);
      // embedding_sum: x by idx and a second table by idx with every third row left out.
      std::vector<std::int64_t> skip(iv);
      for (std::size_t i = 0; i < skip.size(); i += 3) skip[i] = kNoRow;
      const Tensor sk = Tensor::from_vector(skip, {m}), x2 = topo::testing::random_uniform({n, d}, n + 7);
      TOPO_CHECK_CLOSE(embedding_sum({x.to(kGpu), x2.to(kGpu)}, {idx.to(kGpu), sk.to(kGpu)}).to_vector<float>(),
                       embedding_sum({x, x2}, {idx, sk}).to_vector<float>(), 1e-6, 1e-6);
      TOPO_CHECK_CLOSE(embedding_sum_backward(src.to(kGpu), sk.to(kGpu), n).to_vector<float>(),
                       embedding_sum_backward(src, sk, n).to_vector<float>(), 1e-5, 1e-5);
    }
    for (int dim : {0, 1, 2}) {
      CAPTURE(dim);
      std::vector<Tensor> xs, xgs;
      std::vector<std::int64_t> sizes;
      for (std::int64_t k : {n, std::int64_t{0}, std::int64_t{3}}) {
        Shape shape = {3, 5, 2};
        shape[dim] = k;
        xs.push_back(topo::testing::random_uniform(shape, n + k));
        xgs.push_back(xs.back().to(kGpu));
        sizes.push_back(k);
      }
      Tensor y = concat(xs, dim), yg = concat(xgs, dim);
      CHECK(yg.shape() == y.shape());
      CHECK(yg.to_vector<float>() == y.to_vector<float>());
      const std::vector<Tensor> parts = split(yg, sizes, dim);
      for (std::size_t k = 0; k < xs.size(); ++k) CHECK(parts[k].to_vector<float>() == xs[k].to_vector<float>());
    }
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

TEST_CASE("gpu losses: cross entropy and mse (forward, backward) match the CPU") {
  for (std::int64_t n : kAwkwardSizes) {
    for (std::int64_t c : {std::int64_t{1}, std::int64_t{7}, std::int64_t{33}, std::int64_t{257}, std::int64_t{5000}}) {
      CAPTURE(n);
      CAPTURE(c);
      Tensor logits = topo::testing::random_uniform({n, c}, n + c, -6.f, 6.f);
      std::vector<std::int64_t> t = topo::testing::random_ids({n}, c, n * c).to_vector<std::int64_t>();
      for (std::int64_t r = 0; r < n; r += 4) t[r] = -100;
      Tensor targets = Tensor::from_vector(t, {n});
      Tensor lg = logits.to(kGpu), tg = targets.to(kGpu);
      Tensor loss = cross_entropy(lg, tg);
      CHECK(loss.device() == kGpu);
      CHECK(loss.shape().empty());
      CHECK(loss.item() == doctest::Approx(cross_entropy(logits, targets).item()).epsilon(1e-5));
      TOPO_CHECK_CLOSE(cross_entropy_backward(scalar(0.3f, kGpu), lg, tg).to_vector<float>(),
                       cross_entropy_backward(scalar(0.3f, Device::cpu()), logits, targets).to_vector<float>(), 1e-6,
                       1e-4);
    }
    Tensor p = topo::testing::random_uniform({n, 4099}, n), q = topo::testing::random_uniform({n, 4099}, n + 1);
    CHECK(mse(p.to(kGpu), q.to(kGpu)).item() == doctest::Approx(mse(p, q).item()).epsilon(1e-5));
    TOPO_CHECK_CLOSE(mse_backward(scalar(2.f, kGpu), p.to(kGpu), q.to(kGpu)).to_vector<float>(),
                     mse_backward(scalar(2.f, Device::cpu()), p, q).to_vector<float>(), 1e-7, 1e-5);
  }
  Tensor logits = topo::testing::random_uniform({3, 4}, 1, -1.f, 1.f, kGpu);
  CHECK(cross_entropy(logits, Tensor::from_vector(std::vector<std::int64_t>{-100, -100, -100}, {3}, kGpu)).item() == 0.f);
  std::string e = error_of([&] {
    (void)cross_entropy(logits, Tensor::from_vector(std::vector<std::int64_t>{0, 1, 11}, {3}, kGpu));
  });
  CHECK(e.find("row 2") != std::string::npos);
  CHECK(e.find("is 11") != std::string::npos);
}
