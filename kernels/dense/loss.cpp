// Losses. CPU strategies:
// - cross entropy: parallel_for over rows; each row is two contiguous passes (max, sum of exp) from
//   loss_math.hpp. Per-row losses land in a buffer allocated before the loop and are summed serially in
//   double in row order, so the result does not depend on the thread count.
// - mse: parallel_for over fixed chunks of kMseChunk elements, one double partial per chunk, summed
//   serially: again independent of the thread count.
// Targets are validated first (scan_indices), so a bad target is a topo::Error naming the row and value.
#include "kernels/profile.hpp"
#include "kernels/dense/loss.hpp"

#include <algorithm>
#include <vector>

#include "kernels/dense/indexing.hpp"
#include "kernels/dense/loss_math.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/parallel.hpp"

namespace topo {
namespace {

// Checks shapes/dtypes/devices and targets; returns the number of rows that are not ignored.
std::int64_t check_cross_entropy(const Tensor& logits, const Tensor& targets, std::int64_t ignore_index,
                                 const char* op) {
  check_dtype(logits, DType::F32, op, "logits");
  check_dtype(targets, DType::I64, op, "targets");
  TOPO_CHECK(logits.ndim() == 2, "{}: logits must be [N, C], got {}", op, logits.str());
  TOPO_CHECK(targets.ndim() == 1 && targets.size(0) == logits.size(0), "{}: targets must be [{}] for logits {}, got {}",
             op, logits.size(0), logits.str(), targets.str());
  check_same_device(logits, targets, op);
  const IndexScan scan = scan_indices(targets, logits.size(1), ignore_index);
  TOPO_CHECK(scan.first_bad < 0, "{}: target at row {} is {}, outside [0, {}) and not ignore_index {}", op,
             scan.first_bad, scan.bad_value, logits.size(1), ignore_index);
  return scan.valid;
}

void check_scalar_grad(const Tensor& grad, const Tensor& like, const char* op) {
  check_dtype(grad, DType::F32, op, "grad");
  TOPO_CHECK(grad.numel() == 1, "{}: grad must be a 0-d (one element) tensor, got {}", op, grad.str());
  check_same_device(grad, like, op);
}

Tensor scalar_on(float value, Device device) { return Tensor::from_vector(std::vector<float>{value}, {}, device); }

}  // namespace

Tensor cross_entropy(const Tensor& logits, const Tensor& targets, std::int64_t ignore_index) {
  TOPO_PROFILE(Loss);
  const std::int64_t count = check_cross_entropy(logits, targets, ignore_index, "cross_entropy");
  const std::int64_t n = logits.size(0), c = logits.size(1);
  const float* xp = logits.data<float>();
  const std::int64_t* tp = targets.data<std::int64_t>();
  Tensor out;
  TOPO_ON_DEVICE(
      logits.device(),
      {
        std::vector<float> row_loss(static_cast<std::size_t>(n), 0.f);
        parallel_for(n, 2 * c + 1, [&](std::int64_t b, std::int64_t e) {
          for (std::int64_t r = b; r < e; ++r) {
            const std::int64_t t = tp[r];
            if (t == ignore_index) continue;
            const float* row = xp + r * c;
            const float m = row_max(row, c);
            row_loss[r] = ce_row_loss(m, row_sum_exp(row, c, m), row[t]);
          }
        });
        double sum = 0;
        for (float v : row_loss) sum += v;
        out = scalar_on(count > 0 ? static_cast<float>(sum / static_cast<double>(count)) : 0.f, Device::cpu());
      },
      {
        out = Tensor::empty({}, DType::F32, logits.device());
        cuda::cross_entropy(xp, tp, n, c, ignore_index, count, out.data<float>());
      });
  return out;
}

Tensor cross_entropy_backward(const Tensor& grad, const Tensor& logits, const Tensor& targets,
                              std::int64_t ignore_index) {
  TOPO_PROFILE(Loss);
  const std::int64_t count = check_cross_entropy(logits, targets, ignore_index, "cross_entropy_backward");
  check_scalar_grad(grad, logits, "cross_entropy_backward");
  const std::int64_t n = logits.size(0), c = logits.size(1);
  Tensor dx = Tensor::empty(logits.shape(), DType::F32, logits.device());
  const float* xp = logits.data<float>();
  const std::int64_t* tp = targets.data<std::int64_t>();
  float* dp = dx.data<float>();
  TOPO_ON_DEVICE(
      logits.device(),
      {
        const float scale = count > 0 ? ce_grad_scale(grad.item(), count) : 0.f;
        parallel_for(n, 3 * c + 1, [&](std::int64_t b, std::int64_t e) {
          for (std::int64_t r = b; r < e; ++r) {
            const std::int64_t t = tp[r];
            float* drow = dp + r * c;
            if (t == ignore_index) {
              for (std::int64_t j = 0; j < c; ++j) drow[j] = 0.f;
              continue;
            }
            const float* row = xp + r * c;
            const float m = row_max(row, c);
            const float inv = 1.f / row_sum_exp(row, c, m);
            // Target column separately so the main loop has no per-element compare (it vectorizes).
            for (std::int64_t j = 0; j < c; ++j) drow[j] = ce_grad(row[j], m, inv, false, scale);
            drow[t] = ce_grad(row[t], m, inv, true, scale);
          }
        });
      },
      cuda::cross_entropy_backward(grad.data<float>(), xp, tp, dp, n, c, ignore_index, count));
  return dx;
}

Tensor mse(const Tensor& pred, const Tensor& target) {
  TOPO_PROFILE(Loss);
  check_dtype(pred, DType::F32, "mse", "pred");
  check_dtype(target, DType::F32, "mse", "target");
  check_same_shape(pred, target, "mse");
  check_same_device(pred, target, "mse");
  const std::int64_t n = pred.numel();
  const float *pp = pred.data<float>(), *tp = target.data<float>();
  Tensor out;
  TOPO_ON_DEVICE(
      pred.device(),
      {
        const std::int64_t chunks = (n + kMseChunk - 1) / kMseChunk;
        std::vector<double> partial(static_cast<std::size_t>(chunks), 0.0);
        parallel_for(chunks, kMseChunk, [&](std::int64_t b, std::int64_t e) {
          for (std::int64_t k = b; k < e; ++k) {
            const std::int64_t begin = k * kMseChunk, end = std::min(n, begin + kMseChunk);
            float s = 0.f;
            TOPO_LOSS_SIMD_REDUCE(+ : s)
            for (std::int64_t i = begin; i < end; ++i) s += mse_term(pp[i], tp[i]);
            partial[k] = s;
          }
        });
        double sum = 0;
        for (double v : partial) sum += v;
        out = scalar_on(n > 0 ? static_cast<float>(sum / static_cast<double>(n)) : 0.f, Device::cpu());
      },
      {
        out = Tensor::empty({}, DType::F32, pred.device());
        cuda::mse(pp, tp, n, out.data<float>());
      });
  return out;
}

Tensor mse_backward(const Tensor& grad, const Tensor& pred, const Tensor& target) {
  TOPO_PROFILE(Loss);
  check_dtype(pred, DType::F32, "mse_backward", "pred");
  check_dtype(target, DType::F32, "mse_backward", "target");
  check_same_shape(pred, target, "mse_backward");
  check_same_device(pred, target, "mse_backward");
  check_scalar_grad(grad, pred, "mse_backward");
  const std::int64_t n = pred.numel();
  Tensor dx = Tensor::empty(pred.shape(), DType::F32, pred.device());
  const float *pp = pred.data<float>(), *tp = target.data<float>();
  float* dp = dx.data<float>();
  TOPO_ON_DEVICE(
      pred.device(),
      {
        const float scale = n > 0 ? mse_grad_scale(grad.item(), n) : 0.f;
        parallel_for(n, 2, [&](std::int64_t b, std::int64_t e) {
          for (std::int64_t i = b; i < e; ++i) dp[i] = mse_grad(pp[i], tp[i], scale);
        });
      },
      cuda::mse_backward(grad.data<float>(), pp, tp, dp, n));
  return dx;
}

}  // namespace topo
