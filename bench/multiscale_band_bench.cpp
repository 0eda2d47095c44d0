// Suite `multiscale_band`: the Multi-Scale Transformer's training step (and inference) on its two attention
// paths, measured interleaved in one run so that the ratio holds under a shared machine's load — the window
// graphs with the per-edge sparse kernels (attention: graph, the former path) against each head's window as a
// band of the fused dense attention kernel (attention: band, the default). The model is `topo-bench models`'
// Multi-Scale (d = 300, 10 heads x 30, scales 1, 3, N/16, N/8, N/4, alpha 0.5, 2 layers), on the same
// sub-batches of at most 16384 tokens; FLOPs from models/flop_count.hpp (window edges only, so the band's
// masked tile work counts as overhead), `mfu` against the sgemm peak of the run.
#include "bench/harness.hpp"
#include "bench/token_batch.hpp"
#include "kernels/dense/random.hpp"
#include "models/flop_count.hpp"
#include "models/multiscale_transformer/multiscale_transformer.hpp"
#include "nn/autograd.hpp"
#include "nn/ops.hpp"

TOPO_BENCH_SUITE(multiscale_band, "Multi-Scale Transformer: window graph vs banded fused attention, n = 128..4096") {
  using namespace topo;
  models::MultiScaleConfig mc;
  mc.vocab_size = 10000, mc.heads = 10, mc.hidden = 300, mc.layers = 2, mc.max_length = 4096;
  models::MultiScaleTransformer model(mc);
  model.reset_parameters(4);
  const std::vector<std::int64_t> sizes = !bench.sizes().empty() ? bench.sizes()
                                          : bench.quick() ? std::vector<std::int64_t>{128, 512}
                                                          : std::vector<std::int64_t>{128, 512, 2048, 4096};
  for (std::int64_t n : sizes) {
    const std::int64_t b = std::clamp<std::int64_t>(16384 / n, 1, 128);
    const models::SequenceBatch batch = bench::random_token_batch(b, n, 10000, static_cast<std::uint32_t>(n));
    const Tensor r = random_uniform({b, mc.hidden}, -1, 1, 3);
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
