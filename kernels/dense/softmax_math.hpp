#pragma once
// Softmax math shared by the CPU and CUDA backends. A row is the last dim; callers compute the row's max and
// sum (or log-sum) and apply these per element.
#include <cstdint>
#include <cmath>

#include "kernels/dense/fast_exp.hpp"
#include "kernels/hd.hpp"

namespace topo {

// softmax: y = exp(x - max) / sum, with inv_sum = 1 / sum over the row of exp(x - max).
TOPO_HD float softmax_numerator(float x, float row_max) { return exp_approx(x - row_max); }
// log_softmax: y = x - max - log(sum).
TOPO_HD float log_softmax_value(float x, float row_max, float log_sum) { return x - row_max - log_sum; }
// softmax backward: dx = y * (g - dot), dot = sum over the row of g * y.
TOPO_HD float softmax_grad(float g, float y, float dot) { return y * (g - dot); }
// log_softmax backward: dx = g - exp(y) * sum_g, sum_g = sum over the row of g.
TOPO_HD float log_softmax_grad(float g, float y, float sum_g) { return g - exp_approx(y) * sum_g; }

namespace cuda {
// Device launchers (softmax_cuda.cu); rows of d contiguous floats. log = log_softmax.
void softmax_forward(bool log, const float* x, float* y, std::int64_t rows, std::int64_t d);
void softmax_backward(bool log, const float* grad, const float* y, float* dx, std::int64_t rows, std::int64_t d);
}  // namespace cuda

}  // namespace topo
