// Suite `multiscale_band`: the Multi-Scale Transformer's training step (and inference) on its two attention
// paths, measured interleaved in one run so that the ratio holds under a shared machine's load — the window
// graphs with the per-edge sparse kernels (attention: graph, the former path) against each head's window as a
// band of the fused dense attention kernel (attention: band, the default). The model is `topo-bench models`'
// Multi-Scale (d = 300, 10 heads x 30, scales 1, 3, N/16, N/8, N/4, alpha 0.5, 2 layers), on the same
// sub-batches of at most 16384 tokens; FLOPs from models/multiscale_transformer/flop_count.hpp (window edges
// only, so the band's masked tile work counts as overhead), `mfu` against the sgemm peak of the run.
#include "bench/harness.hpp"
#include "bench/token_batch.hpp"
#include "kernels/dense/flash_attention.hpp"
#include "kernels/dense/random.hpp"
#include "models/multiscale_transformer/flop_count.hpp"
#include "nn/autograd.hpp"
#include "nn/ops.hpp"

TOPO_BENCH_SUITE(multiscale_band, "Multi-Scale Transformer: window graph vs banded fused attention, n = 128..4096") {
  using namespace topo;
  models::MultiScaleConfig mc;
  mc.encoder = {.vocab_size = 10000, .hidden = 300, .heads = 10, .layers = 2, .max_length = 4096};
  models::MultiScaleTransformer model(mc);
  model.reset_parameters(4);
  const std::vector<std::int64_t> sizes = !bench.sizes().empty() ? bench.sizes()
                                          : bench.quick() ? std::vector<std::int64_t>{128, 512}
                                                          : std::vector<std::int64_t>{128, 512, 2048, 4096};
  for (std::int64_t n : sizes) {
    const std::int64_t b = std::clamp<std::int64_t>(16384 / n, 1, 128);
    const models::SequenceBatch batch = bench::random_token_batch(b, n, 10000, static_cast<std::uint32_t>(n));
    const Tensor r = random_uniform({b, mc.encoder.hidden}, -1, 1, 3);
    const models::FlopCount f = models::multiscale_flops(mc, batch.lengths);
    auto encode = [&](bool band) {
      return band ? model.encode_band(batch)
                  : model.encode(batch, models::multiscale_topology(batch.lengths, mc.scales));  // topology included
    };
    double step_ms[2] = {0, 0};
    for (bool band : {false, true}) {
      const char* path = band ? "band" : "graph";
      bench.run(fmt::format("multiscale inference {} n={}", path, n), {.flops = f.forward},
                [&] { nn::NoGradGuard g; (void)encode(band); }, {{"n", n}, {"measured_sentences", b}});
      const bench::Result res = bench.run(
          fmt::format("multiscale train step {} n={}", path, n), {.flops = f.train_step()},
          [&] {
            model.zero_grad();
            nn::sum_all(encode(band).sentences * nn::Var(r)).backward();
          },
          {{"n", n}, {"measured_sentences", b}});
      bench.annotate("mfu", res.fraction_of_peak);
      step_ms[band ? 1 : 0] = res.stats.median_ms;
    }
    bench.annotate("graph_over_band_train", step_ms[0] / step_ms[1]);
  }
}

// Suite `band_attention`: the banded fused attention kernel alone on Multi-Scale's shapes — 10 heads x 30, the
// first layer's radii of the model above (scales 1, 3, N/16, N/8, N/4, alpha 0.5: radii 0, 1 and ~n/32, n/16,
// n/8), [CLS] + n positions per sentence, sub-batches of at most 16384 tokens. FLOPs count only the scores
// inside the bands (each (row, head) sees min(len, i + r + 1) - max(0, i - r) keys): 4 dh per score forward
// (q . k, p v), 14 dh forward + backward (the backward recomputes the scores: q . k, dout . v, ds k, ds q, p dout);
// the masked work of the kernel's blocks is overhead, so fraction_of_peak is the kernel's efficiency at its
// useful work against the sgemm peak; bytes count each tensor read or written once, so the bound names the
// slower of memory and sgemm at those counts.
TOPO_BENCH_SUITE(band_attention, "Multi-Scale's banded fused attention kernel alone, n = 128..4096") {
  using namespace topo;
  models::MultiScaleConfig mc;
  mc.encoder = {.vocab_size = 10000, .hidden = 300, .heads = 10, .layers = 2, .max_length = 4096};
  const models::MultiScaleTransformer model(mc);
  const std::int64_t heads = mc.encoder.heads, dh = mc.encoder.hidden / mc.encoder.heads;
  const std::vector<std::int64_t> sizes = !bench.sizes().empty() ? bench.sizes()
                                          : bench.quick() ? std::vector<std::int64_t>{128, 512}
                                                          : std::vector<std::int64_t>{128, 512, 2048, 4096};
  for (std::int64_t n : sizes) {
    const std::int64_t b = std::clamp<std::int64_t>(16384 / n, 1, 128);
    const std::vector<std::int64_t> tokens(static_cast<std::size_t>(b), n), positions(static_cast<std::size_t>(b), n + 1);
    const std::vector<std::int64_t> radii = model.band_radii(0, tokens);
    double scores = 0;
    for (std::size_t s = 0; s < positions.size(); ++s)
      for (std::int64_t h = 0; h < heads; ++h) {
        const std::int64_t len = positions[s], r = radii[s * static_cast<std::size_t>(heads) + static_cast<std::size_t>(h)];
        for (std::int64_t i = 0; i < len; ++i)
          scores += static_cast<double>(std::min(len, i + r + 1) - std::max<std::int64_t>(0, i - r));
      }
    const std::int64_t rows = b * (n + 1);
    const Tensor q = random_uniform({rows, heads, dh}, -1, 1, 4), k = random_uniform({rows, heads, dh}, -1, 1, 5),
                 v = random_uniform({rows, heads, dh}, -1, 1, 6);
    const float s = 1.f / std::sqrt(static_cast<float>(dh));
    const nlohmann::json extra = {{"n", n}, {"measured_sentences", b}, {"radii_first_sentence", std::vector<std::int64_t>(radii.begin(), radii.begin() + heads)}};
    // Bytes: q, k, v read and out written ([rows, heads, dh] each) plus lse; forward + backward adds q, k, v,
    // dout and out read, dq, dk, dv written and lse read.
    const double tensor = static_cast<double>(rows * heads * dh) * sizeof(float), lse = static_cast<double>(rows * heads) * sizeof(float);
    const double ws = 4 * tensor + lse;
    bench.run(fmt::format("band kernel forward n={}", n),
              {.bytes_moved = 4 * tensor + lse, .flops = 4.0 * static_cast<double>(dh) * scores, .working_set_bytes = ws},
              [&] { (void)flash_attention(q, k, v, positions, s, radii); }, extra);
    bench.run(fmt::format("band kernel forward+backward n={}", n),
              {.bytes_moved = 12 * tensor + 2 * lse, .flops = 14.0 * static_cast<double>(dh) * scores,
               .working_set_bytes = 8 * tensor + lse},
              [&] {
                const FlashAttentionOutput f = flash_attention(q, k, v, positions, s, radii);
                (void)flash_attention_backward(q, k, v, positions, f, v, s, radii);
              },
              extra);
  }
}
