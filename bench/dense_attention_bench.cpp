// Suite `dense_attention`: the dense Transformer baseline (d = 300, 6 heads, 2 layers, FFN 4d: the `models`
// suite's shapes) with the fused dense attention kernel (`encode_dense`) against the former padded batched
// GEMMs (`encode_padded`), inference and training step, n = 128 ... 4096, per batch of 128 sentences. A
// sub-batch of at most kTokens tokens is measured and scaled (every cost here is per sentence; `models`
// measures 16384, a quarter of that keeps this suite near 15 minutes on 2 loaded cores). FLOPs are counted
// from the shapes: forward per layer and sentence 24 n d^2 (q, k, v, o: 8nd^2; feed-forward 16nd^2) +
// 4 n^2 d (scores and weighted values), a training step 3x the forward; fraction_of_peak is then the step's
// MFU against the measured sgemm peak. The padded path's per-head [B, L, L] scores and their saved copies
// take ~3 GB at n = 4096 (a sub-batch of one sentence). Also the attention kernel alone (forward: 4 n^2 d;
// forward + backward with the recomputation: 14 n^2 d per layer's shapes).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>

#include "bench/harness.hpp"
#include "bench/token_batch.hpp"
#include "kernels/dense/flash_attention.hpp"
#include "kernels/dense/random.hpp"
#include "models/transformer/transformer.hpp"
#include "nn/autograd.hpp"
#include "nn/ops.hpp"

namespace {

using namespace topo;
constexpr std::int64_t kBatch = 128, kVocab = 10000, kHidden = 300, kHeads = 6, kLayers = 2, kTokens = 4096;

models::TransformerConfig transformer_config() {
  models::TransformerConfig tc;
  tc.encoder = {.vocab_size = kVocab, .hidden = kHidden, .heads = kHeads, .layers = kLayers, .max_length = 4096};
  return tc;
}

}  // namespace

TOPO_BENCH_SUITE(dense_attention, "dense Transformer: fused dense attention vs padded GEMMs, n = 128..4096") {
  models::Transformer model(transformer_config());
  model.reset_parameters(2);
  const std::vector<std::int64_t> sizes =
      bench.quick() ? std::vector<std::int64_t>{128, 512} : std::vector<std::int64_t>{128, 512, 1024, 4096};
  for (std::int64_t n : sizes) {
    const std::int64_t b = std::clamp<std::int64_t>(kTokens / n, 1, kBatch);
    const double scale = static_cast<double>(kBatch) / static_cast<double>(b);
    const models::SequenceBatch batch = bench::random_token_batch(b, n, kVocab, static_cast<std::uint32_t>(n));
    const Tensor r = random_uniform({b, kHidden}, -1, 1, 3);
    const double d = kHidden, len = static_cast<double>(n), sentences = static_cast<double>(b);
    const double attention_flops = kLayers * sentences * 4 * len * len * d;
    const double forward_flops = kLayers * sentences * 24 * len * d * d + attention_flops;
    const nlohmann::json extra = {{"n", n}, {"measured_sentences", b}};
    auto record = [&](const std::string& what, double flops, const std::function<void()>& fn) {
      const bench::Result res = bench.run(fmt::format("{} n={}", what, n), {.flops = flops}, fn, extra);
      bench.annotate("ms_per_batch_of_128", res.stats.median_ms * scale);
      return res.stats.median_ms;
    };
    auto step = [&](auto&& encode) {
      model.zero_grad();
      const models::Encoding e = encode();
      nn::sum_all(e.sentences * nn::Var(r)).backward();
    };
    // The kernel alone on this batch's q, k, v (forward, then forward + backward).
    const std::int64_t rows = b * n, dh = kHidden / kHeads;
    const Tensor q = random_uniform({rows, kHeads, dh}, -1, 1, 4), k = random_uniform({rows, kHeads, dh}, -1, 1, 5),
                 v = random_uniform({rows, kHeads, dh}, -1, 1, 6);
    const float s = 1.f / std::sqrt(static_cast<float>(dh));
    record("kernel forward", attention_flops / kLayers, [&] { (void)flash_attention(q, k, v, batch.lengths, s); });
    record("kernel forward+backward", attention_flops / kLayers * 3.5, [&] {
      const FlashAttentionOutput f = flash_attention(q, k, v, batch.lengths, s);
      (void)flash_attention_backward(q, k, v, batch.lengths, f, v, s);
    });
    const double fused_inf = record("fused inference", forward_flops, [&] {
      nn::NoGradGuard g;
      (void)model.encode_dense(batch);
    });
    const double fused_step = record("fused train step", 3 * forward_flops, [&] { step([&] { return model.encode_dense(batch); }); });
    const double padded_inf = record("padded inference", forward_flops, [&] {
      nn::NoGradGuard g;
      (void)model.encode_padded(batch);
    });
    bench.annotate("padded_over_fused", padded_inf / fused_inf);
    const double padded_step =
        record("padded train step", 3 * forward_flops, [&] { step([&] { return model.encode_padded(batch); }); });
    bench.annotate("padded_over_fused", padded_step / fused_step);
  }
}

// Suite `dense_attention_ab`: the training steps of the two paths alternated call by call (fused, padded,
// fused, ...) at n = 512, 1024, 4096 with the sub-batches above, so that a machine whose load drifts over
// minutes (other processes on shared cores) slows both alike; reports each pair's padded / fused ratio and
// their median. One untimed pair first.
TOPO_BENCH_SUITE(dense_attention_ab, "dense Transformer train step: fused vs padded attention, interleaved") {
  models::Transformer model(transformer_config());
  model.reset_parameters(2);
  const int pairs = bench.quick() ? 1 : 3;
  for (std::int64_t n : bench.quick() ? std::vector<std::int64_t>{128} : std::vector<std::int64_t>{512, 1024, 4096}) {
    const std::int64_t b = std::clamp<std::int64_t>(kTokens / n, 1, kBatch);
    const models::SequenceBatch batch = bench::random_token_batch(b, n, kVocab, static_cast<std::uint32_t>(n));
    const Tensor r = random_uniform({b, kHidden}, -1, 1, 3);
    auto step = [&](bool padded) {
      const auto t0 = std::chrono::steady_clock::now();
      model.zero_grad();
      const models::Encoding e = padded ? model.encode_padded(batch) : model.encode_dense(batch);
      nn::sum_all(e.sentences * nn::Var(r)).backward();
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    };
    step(false), step(true);
    std::vector<double> fused, padded, ratio;
    for (int i = 0; i < pairs; ++i) {
      fused.push_back(step(false));
      padded.push_back(step(true));
      ratio.push_back(padded.back() / fused.back());
    }
    std::vector<double> sorted = ratio;
    std::sort(sorted.begin(), sorted.end());
    fmt::print("dense_attention_ab n={} ({} sentences): fused ms {}, padded ms {}, padded/fused {} (median {:.2f})\n",
               n, b, fmt::join(fused, " "), fmt::join(padded, " "), fmt::join(ratio, " "), sorted[sorted.size() / 2]);
  }
}
