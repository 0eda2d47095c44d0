// The fused epilogue y = act(s_r * x + b) past the op table's sizes: several of the backward's row blocks (the
// bias gradient's partial sums), against the unfused ops in double, and the same bits at any thread count.
#include <cmath>
#include <string>

#include "kernels/dense/scale_bias_act.hpp"
#include "kernels/threads.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using topo::testing::random_uniform;

TEST_CASE("scale_bias_act over thousands of rows equals the unfused ops, and its bias gradient is thread-count free") {
  const std::int64_t rows = 3001, cols = 16;  // three full blocks of 1,024 rows and a partial one
  const Tensor x = random_uniform({rows, cols}, 11, -2.f, 2.f), s = random_uniform({rows}, 12, 0.5f, 1.5f),
               b = random_uniform({cols}, 13), g = random_uniform({rows, cols}, 14);
  const Tensor y = scale_bias_act(x, s, b, EpilogueAct::Relu);
  const ScaleBiasActGrads grads = scale_bias_act_backward(g, y, s, true, Shape{cols}, EpilogueAct::Relu);
  const auto xv = x.to_vector<float>(), sv = s.to_vector<float>(), bv = b.to_vector<float>(),
             gv = g.to_vector<float>(), yv = y.to_vector<float>(), dxv = grads.dx.to_vector<float>(),
             dbv = grads.dbias.to_vector<float>();
  std::vector<double> db(cols, 0.0);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) {
      const std::size_t i = static_cast<std::size_t>(r * cols + c);
      const double z = static_cast<double>(sv[r]) * xv[i] + bv[c];
      CHECK(yv[i] == doctest::Approx(z > 0 ? z : 0.0).epsilon(1e-6));
      const double dz = z > 0 ? gv[i] : 0.0;
      CHECK(dxv[i] == doctest::Approx(dz * sv[r]).epsilon(1e-6));
      db[c] += dz;
    }
  for (std::int64_t c = 0; c < cols; ++c) CHECK(dbv[c] == doctest::Approx(db[c]).epsilon(1e-4));

  const int threads = num_threads();
  set_num_threads(1);
  const ScaleBiasActGrads serial = scale_bias_act_backward(g, y, s, true, Shape{cols}, EpilogueAct::Relu);
  set_num_threads(threads);
  CHECK(serial.dbias.to_vector<float>() == dbv);
  CHECK(serial.dx.to_vector<float>() == dxv);
  // Only the bias gradient asked for: no dx, the same sums.
  const ScaleBiasActGrads bias_only = scale_bias_act_backward(g, y, s, false, Shape{1, cols}, EpilogueAct::Relu);
  CHECK_FALSE(bias_only.dx.defined());
  CHECK(bias_only.dbias.shape() == Shape{1, cols});
  CHECK(bias_only.dbias.to_vector<float>() == dbv);
}

TEST_CASE("scale_bias_act names what does not fit") {
  const Tensor x = Tensor::zeros({4, 5});
  CHECK_THROWS_WITH_AS(scale_bias_act(x, Tensor::zeros({3}), Tensor(), EpilogueAct::Relu),
                       doctest::Contains("row_scale has 3 elements for 4 rows of [4, 5]"), topo::Error);
  CHECK_THROWS_WITH_AS(scale_bias_act(x, Tensor(), Tensor::zeros({4}), EpilogueAct::Relu),
                       doctest::Contains("bias has 4 elements for rows of 5"), topo::Error);
  CHECK_THROWS_WITH_AS(scale_bias_act(x, Tensor(), Tensor(), EpilogueAct::LeakyRelu, 0.f),
                       doctest::Contains("slope must be positive"), topo::Error);
}
