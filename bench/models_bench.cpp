// Suite `models`: the paper's Fig. 3b experiment — inference and training-step time of the Star-Transformer
// against the dense Transformer of equal width (d = 300, 6 heads, 2 layers; FFN 4d, standard) per batch of
// 128 sentences of length n = 32 ... 4096 — and the Multi-Scale Transformer of its paper (10 heads x 30).
// A full batch of 128 at large n does not fit the machine's time (and, dense, its memory: at n = 4096 the
// attention scores of one head alone are 128 x 4096^2 floats = 8.6 GB), so each point runs a sub-batch of
// at most 16384 tokens and scales to 128 sentences linearly (every cost here is per sentence; the JSON
// records `measured_sentences`). Star's time includes building its topology; a step is forward + backward
// of a linear loss on the sentence features (no optimizer update, identical for both models).
// FLOPs are counted from the shapes (models/*/flop_count.hpp: forward for inference, forward + backward for a
// step) for the measured sentences; `mfu` = those FLOPs per second over the peak measured in the same run at
// the row's precision (sgemm's, or bf16's); `flop_bound_dense_over_*` is the dense step's counted FLOPs over
// the model's (the speedup both would have at equal MFU), next to the measured `dense_over_*_train`.
// Multi-Scale runs twice: the paper's scales (1, 3, N/16, N/8, N/4; `fraction_scale_flops_share` = the forward
// FLOPs of its N/k windows, quadratic in n) and constant scales 1, 3, 5, 7, 9 (time per token flat in n).
// With --profile, one more training step per n of Star, dense and Multi-Scale (paper scales) runs with the
// op-category profiler on: each table goes to stderr and its seconds per category to that step's `profile`
// field. With --precision bf16 every GEMM runs in bf16 and Star's two rows also run at fp32 in the same run
// (`bf16_speedup`); the bf16 rows' MFU is counted against the bf16 peak (bench/machine.hpp; the fp32 rows
// against the sgemm peak).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>

#include "bench/harness.hpp"
#include "bench/svg_plot.hpp"
#include "bench/token_batch.hpp"
#include "kernels/dense/gemm.hpp"
#include "kernels/dense/gemm_backend.hpp"
#include "kernels/dense/random.hpp"
#include "kernels/profile.hpp"
#include "models/multiscale_transformer/flop_count.hpp"
#include "models/star_transformer/flop_count.hpp"
#include "models/transformer/flop_count.hpp"
#include "nn/autograd.hpp"
#include "nn/ops.hpp"

namespace {

using namespace topo;
constexpr std::int64_t kBatch = 128, kVocab = 10000, kHidden = 300, kHeads = 6, kLayers = 2;

// The three models' shapes (d = 300, 2 layers; Star and dense 6 heads, Multi-Scale 10 heads x 30 with the
// paper's scales 1, 3, N/16, N/8, N/4 and alpha 0.5, no feed-forward). `hidden` other than 300 (suite
// models_backends: 100) keeps the layers, with 4 heads for Star and dense (100 / 6 is not whole).
models::StarConfig star_config(std::int64_t hidden = kHidden) {
  models::StarConfig sc;
  sc.encoder = {.vocab_size = kVocab, .hidden = hidden, .heads = hidden % kHeads == 0 ? kHeads : 4, .layers = kLayers,
                .max_length = 4096};
  return sc;
}
models::TransformerConfig transformer_config(std::int64_t hidden = kHidden) {
  models::TransformerConfig tc;
  tc.encoder = {.vocab_size = kVocab, .hidden = hidden, .heads = hidden % kHeads == 0 ? kHeads : 4, .layers = kLayers,
                .max_length = 4096};
  return tc;
}
models::MultiScaleConfig multiscale_config(std::int64_t hidden = kHidden) {
  models::MultiScaleConfig mc;
  mc.encoder = {.vocab_size = kVocab, .hidden = hidden, .heads = 10, .layers = kLayers, .max_length = 4096};
  return mc;
}
// Sentences measured at length n: at most 16384 tokens, at most a batch.
std::int64_t sub_batch(std::int64_t n) { return std::clamp<std::int64_t>(16384 / n, 1, kBatch); }

}  // namespace

TOPO_BENCH_SUITE(models, "Star-Transformer vs dense Transformer per batch of 128, n = 32..4096 (Fig. 3b)") {
  const models::StarConfig sc = star_config();
  models::StarTransformer star(sc);
  star.reset_parameters(1);
  const models::TransformerConfig tc = transformer_config();
  models::Transformer dense(tc);
  dense.reset_parameters(2);

  // The Multi-Scale Transformer of the paper's classification setting.
  const models::MultiScaleConfig mc = multiscale_config();
  models::MultiScaleTransformer multiscale(mc);
  multiscale.reset_parameters(4);
  // The same with constant scales only (1, 3, 5, 7, 9: the paper's tagging scales): no head's window grows with
  // n, so its time per token should stay flat where the paper config's N/16, N/8, N/4 heads grow linearly.
  models::MultiScaleConfig mcc = mc;
  mcc.scales = models::parse_scales("1,3,5,7,9");
  models::MultiScaleTransformer multiscale_const(mcc);
  multiscale_const.reset_parameters(5);

  std::vector<bench::Series> series = {{"Star inference", {}},       {"Star train step", {}},
                                       {"dense inference", {}},      {"dense train step", {}},
                                       {"Multi-Scale inference", {}}, {"Multi-Scale train step", {}},
                                       {"Multi-Scale 1-9 inference", {}}, {"Multi-Scale 1-9 train step", {}}};
  const std::vector<std::int64_t> sizes = !bench.sizes().empty() ? bench.sizes()
                                          : bench.quick() ? std::vector<std::int64_t>{32, 128, 512}
                                                          : std::vector<std::int64_t>{32, 64, 128, 256, 512, 1024, 2048, 4096};
  for (std::int64_t n : sizes) {
    const std::int64_t b = sub_batch(n);
    const double scale = static_cast<double>(kBatch) / static_cast<double>(b);
    const models::SequenceBatch batch = bench::random_token_batch(b, n, kVocab, static_cast<std::uint32_t>(n));
    const Tensor r = random_uniform({b, kHidden}, -1, 1, 3);
    double per_batch[8];
    int k = 0;
    const std::vector<std::int64_t>& lengths = batch.lengths;
    const models::FlopCount star_f = models::star_flops(sc, lengths), dense_f = models::transformer_flops(tc, lengths),
                            multiscale_f = models::multiscale_flops(mc, lengths),
                            multiscale_const_f = models::multiscale_flops(mcc, lengths);
    auto record = [&](const std::string& what, double flops, const std::function<void()>& fn) {
      const bench::Result res = bench.run(fmt::format("{} n={}", what, n), {.flops = flops}, fn,
                                          {{"n", n}, {"measured_sentences", b}});
      bench.annotate("mfu", res.fraction_of_peak);
      per_batch[k] = res.stats.median_ms * scale;
      bench.annotate("ms_per_batch_of_128", per_batch[k]);
      bench.annotate("us_per_token", res.stats.median_ms * 1000.0 / static_cast<double>(b * n));
      series[k].points.push_back({static_cast<double>(n), res.stats.median_ms * 1000.0 / static_cast<double>(b * n)});
      ++k;
    };
    auto step = [&](auto&& encode) {
      const models::Encoding e = encode();
      nn::sum_all(e.sentences * nn::Var(r)).backward();
    };
    const auto star_inference = [&] { nn::NoGradGuard g; (void)star.encode(batch); };
    const auto star_step = [&] { star.zero_grad(); step([&] { return star.encode(batch); }); };
    // --precision bf16: Star's two rows run at fp32 first (their own rows, "... fp32"), then at bf16 as the
    // suite's rows, which carry `bf16_speedup` = the fp32 time over the bf16 time of the same run.
    const bool bf16 = gemm_precision() == Precision::bf16;
    double fp32_ms[2] = {0, 0};
    if (bf16) {
      const GemmPrecisionGuard g(Precision::fp32);
      const nlohmann::json extra = {{"n", n}, {"measured_sentences", b}, {"precision", "fp32"}};
      const bench::Result inf = bench.run(fmt::format("star inference fp32 n={}", n), {.flops = star_f.forward},
                                          star_inference, extra);
      bench.annotate("mfu", inf.fraction_of_peak);
      const bench::Result st = bench.run(fmt::format("star train step fp32 n={}", n), {.flops = star_f.train_step()},
                                         star_step, extra);
      bench.annotate("mfu", st.fraction_of_peak);
      fp32_ms[0] = inf.stats.median_ms, fp32_ms[1] = st.stats.median_ms;
    }
    record("star inference", star_f.forward, star_inference);
    if (bf16) bench.annotate("bf16_speedup", fp32_ms[0] * scale / per_batch[0]);
    record("star train step", star_f.train_step(), star_step);
    if (bf16) bench.annotate("bf16_speedup", fp32_ms[1] * scale / per_batch[1]);
    // --profile: one more step of the model just measured with the op-category profiler on, annotated there.
    const auto profiled = [&](const char* model, const std::function<void()>& fn) {
      if (!bench.profile()) return;
      profile::reset();
      profile::enable(true);
      fn();
      profile::enable(false);
      std::fprintf(stderr, "%s train step, n = %lld, %lld sentences, by op category:\n%s", model,
                   static_cast<long long>(n), static_cast<long long>(b), profile::report().c_str());
      bench.annotate("profile", bench::profile_json());
    };
    profiled("Star", star_step);
    record("dense inference", dense_f.forward, [&] { nn::NoGradGuard g; (void)dense.encode_dense(batch); });
    const auto dense_step = [&] { dense.zero_grad(); step([&] { return dense.encode_dense(batch); }); };
    record("dense train step", dense_f.train_step(), dense_step);
    profiled("dense", dense_step);
    bench.annotate("dense_over_star_inference", per_batch[2] / per_batch[0]);
    bench.annotate("dense_over_star_train", per_batch[3] / per_batch[1]);
    // The FLOP-count bound on the speedup (the two at equal MFU), next to the measured ratio.
    bench.annotate("flop_bound_dense_over_star", dense_f.train_step() / star_f.train_step());
    record("multiscale inference", multiscale_f.forward, [&] { nn::NoGradGuard g; (void)multiscale.encode(batch); });
    const auto multiscale_step = [&] { multiscale.zero_grad(); step([&] { return multiscale.encode(batch); }); };
    record("multiscale train step", multiscale_f.train_step(), multiscale_step);
    profiled("Multi-Scale", multiscale_step);
    bench.annotate("dense_over_multiscale_inference", per_batch[2] / per_batch[4]);
    bench.annotate("dense_over_multiscale_train", per_batch[3] / per_batch[5]);
    bench.annotate("flop_bound_dense_over_multiscale", dense_f.train_step() / multiscale_f.train_step());
    {  // forward FLOPs of the scales that are fractions of n (quadratic in n), as a share of the model's
      const std::vector<double> window = models::multiscale_window_flops(mc, lengths);
      double fractional = 0;
      for (std::size_t s = 0; s < mc.scales.size(); ++s)
        if (mc.scales[s].fractional()) fractional += window[s];
      bench.annotate("fraction_scale_flops_share", fractional / multiscale_f.forward);
    }
    record("multiscale 1-9 inference", multiscale_const_f.forward,
           [&] { nn::NoGradGuard g; (void)multiscale_const.encode(batch); });
    record("multiscale 1-9 train step", multiscale_const_f.train_step(),
           [&] { multiscale_const.zero_grad(); step([&] { return multiscale_const.encode(batch); }); });
    bench.annotate("dense_over_multiscale_1_9_train", per_batch[3] / per_batch[7]);
    bench.annotate("flop_bound_dense_over_multiscale_1_9", dense_f.train_step() / multiscale_const_f.train_step());
  }
  if (const std::string path = bench.artifact_path("plot.svg"); !path.empty())
    bench::write_log_log_svg(path, "Star, Multi-Scale and dense Transformer (d=300, 2 layers)",
                             "sentence length n", "time per token (us)", series);
}

// Suite `models_ab`: the `models` suite's speedups over the dense Transformer per training step, measured with
// the three steps alternated call by call — rounds of dense, Star, Multi-Scale, then the reverse order (so a
// load that drifts during a round slows both sides of a ratio alike) — after one untimed round. Each round
// gives a ratio dense / model; the reported `dense_over_*_train` is their median and `of_bound` that median
// over the FLOP-count bound (`flop_bound_dense_over_*`: the speedup at equal MFU). Per model, the rounds'
// times are its result (median, spread, `mfu`). n = 32 ... 4096 (or --sizes), the sub-batches of `models`.
TOPO_BENCH_SUITE(models_ab, "Star and Multi-Scale over the dense Transformer per train step, interleaved, against FLOP bounds") {
  const models::StarConfig sc = star_config();
  const models::TransformerConfig tc = transformer_config();
  const models::MultiScaleConfig mc = multiscale_config();
  models::StarTransformer star(sc);
  models::Transformer dense(tc);
  models::MultiScaleTransformer multiscale(mc);
  star.reset_parameters(1), dense.reset_parameters(2), multiscale.reset_parameters(4);
  const int rounds = bench.quick() ? 2 : 8;
  const std::vector<std::int64_t> sizes = !bench.sizes().empty() ? bench.sizes()
                                          : bench.quick() ? std::vector<std::int64_t>{128}
                                                          : std::vector<std::int64_t>{32, 128, 512, 1024, 2048, 4096};
  for (std::int64_t n : sizes) {
    const std::int64_t b = sub_batch(n);
    const models::SequenceBatch batch = bench::random_token_batch(b, n, kVocab, static_cast<std::uint32_t>(n));
    const Tensor r = random_uniform({b, kHidden}, -1, 1, 3);
    const std::vector<std::int64_t>& lengths = batch.lengths;
    const double flops[3] = {models::transformer_flops(tc, lengths).train_step(),
                             models::star_flops(sc, lengths).train_step(),
                             models::multiscale_flops(mc, lengths).train_step()};
    const auto encode = [&](int model) {  // 0 dense, 1 Star, 2 Multi-Scale
      if (model == 0) return dense.zero_grad(), dense.encode_dense(batch);
      if (model == 1) return star.zero_grad(), star.encode(batch);
      return multiscale.zero_grad(), multiscale.encode(batch);
    };
    const auto step = [&](int model) {  // milliseconds
      const auto t0 = std::chrono::steady_clock::now();
      nn::sum_all(encode(model).sentences * nn::Var(r)).backward();
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    };
    std::fprintf(stderr, "  running models_ab n=%lld (%d rounds)\n", static_cast<long long>(n), rounds);
    for (int model = 0; model < 3; ++model) (void)step(model);
    std::vector<double> times[3], ratios[3];
    for (int i = 0; i < rounds; ++i) {
      double t[3];
      for (int k = 0; k < 3; ++k) {
        const int model = i % 2 == 0 ? k : 2 - k;
        t[model] = step(model);
      }
      for (int model = 0; model < 3; ++model) {
        times[model].push_back(t[model]);
        ratios[model].push_back(t[0] / t[model]);
      }
    }
    const char* names[3] = {"dense", "star", "multiscale"};
    for (int model = 0; model < 3; ++model) {
      const bench::Result res = bench.record(fmt::format("{} train step n={}", names[model], n),
                                             bench::summarize(times[model]), {.flops = flops[model]},
                                             {{"n", n}, {"measured_sentences", b}, {"rounds", rounds}});
      bench.annotate("mfu", res.fraction_of_peak);
      if (model == 0) continue;
      // The rounds' median ratio (summarize's median: its _ms name aside, any positive samples).
      const double measured = bench::summarize(ratios[model]).median_ms, bound = flops[0] / flops[model];
      bench.annotate(fmt::format("dense_over_{}_train", names[model]), measured);
      bench.annotate(fmt::format("flop_bound_dense_over_{}", names[model]), bound);
      bench.annotate("of_bound", measured / bound);
      bench.annotate("round_ratios", ratios[model]);
    }
  }
}

// Suite `models_backends`: the three models' training steps (as in `models_ab`: forward + backward of a linear
// loss, sub-batches of at most 16,384 tokens) at d = 100 and 300, n = 128 and 512 (or --sizes), with every CPU
// GEMM backend this process can run (kernels/dense/gemm_backend.hpp: fp32 OpenBLAS / oneDNN, bf16 own / AMX /
// oneDNN), alternated call by call: rounds of the backends in order, then reversed, after one untimed round
// (which also compiles oneDNN's primitives), so a drifting load slows all alike. Per (model, backend) the
// rounds' times are its result (`mfu` against the peak of its precision); `over_rule` is the median per round
// of the time of the precision's rule backend (default_gemm_backend) over this one's (> 1: faster), and
// `fp32_over_this` the median of the fp32 rule backend's time over this one's.
TOPO_BENCH_SUITE(models_backends, "the models' train steps with each CPU GEMM backend (fp32/bf16), interleaved") {
  struct Config {
    Precision precision;
    GemmBackend backend;
  };
  std::vector<Config> configs;
  for (Precision p : {Precision::fp32, Precision::bf16})
    for (GemmBackend b : {GemmBackend::openblas, GemmBackend::own, GemmBackend::amx, GemmBackend::onednn})
      if (gemm_backend_available(p, b)) configs.push_back({p, b});
  const auto rule = [&](Precision p) {
    for (std::size_t i = 0; i < configs.size(); ++i)
      if (configs[i].precision == p && configs[i].backend == default_gemm_backend(p, gemm_cpu())) return i;
    return std::size_t{0};
  };
  const int rounds = bench.quick() ? 3 : 6;
  const std::vector<std::int64_t> sizes = !bench.sizes().empty() ? bench.sizes() : std::vector<std::int64_t>{128, 512};
  for (std::int64_t hidden : {std::int64_t{100}, kHidden}) {
    models::StarTransformer star(star_config(hidden));
    models::Transformer dense(transformer_config(hidden));
    models::MultiScaleTransformer multiscale(multiscale_config(hidden));
    star.reset_parameters(1), dense.reset_parameters(2), multiscale.reset_parameters(4);
    for (std::int64_t n : sizes) {
      const std::int64_t b = sub_batch(n);
      const models::SequenceBatch batch = bench::random_token_batch(b, n, kVocab, static_cast<std::uint32_t>(n));
      const Tensor r = random_uniform({b, hidden}, -1, 1, 3);
      const std::vector<std::int64_t>& lengths = batch.lengths;
      const double flops[3] = {models::transformer_flops(transformer_config(hidden), lengths).train_step(),
                               models::star_flops(star_config(hidden), lengths).train_step(),
                               models::multiscale_flops(multiscale_config(hidden), lengths).train_step()};
      const char* names[3] = {"dense", "star", "multiscale"};
      for (int model = 0; model < 3; ++model) {
        const auto step = [&](const Config& c) {  // milliseconds
          const GemmPrecisionGuard g(c.precision);
          const GemmBackendGuard gb(c.precision, c.backend);
          const auto t0 = std::chrono::steady_clock::now();
          const models::Encoding e = model == 0   ? (dense.zero_grad(), dense.encode_dense(batch))
                                     : model == 1 ? (star.zero_grad(), star.encode(batch))
                                                  : (multiscale.zero_grad(), multiscale.encode(batch));
          nn::sum_all(e.sentences * nn::Var(r)).backward();
          return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        };
        std::fprintf(stderr, "  running models_backends %s d=%lld n=%lld (%d rounds)\n", names[model],
                     static_cast<long long>(hidden), static_cast<long long>(n), rounds);
        for (const Config& c : configs) (void)step(c);
        std::vector<std::vector<double>> times(configs.size());
        for (int i = 0; i < rounds; ++i)
          for (std::size_t j = 0; j < configs.size(); ++j) {
            const std::size_t c = i % 2 == 0 ? j : configs.size() - 1 - j;
            times[c].push_back(step(configs[c]));
          }
        for (std::size_t c = 0; c < configs.size(); ++c) {
          std::vector<double> over_rule, over_fp32;
          for (int i = 0; i < rounds; ++i) {
            over_rule.push_back(times[rule(configs[c].precision)][i] / times[c][i]);
            over_fp32.push_back(times[rule(Precision::fp32)][i] / times[c][i]);
          }
          const GemmPrecisionGuard g(configs[c].precision);  // the result is judged against its precision's peak
          const bench::Result res = bench.record(
              fmt::format("{} d={} {} {} n={}", names[model], hidden, precision_name(configs[c].precision),
                          gemm_backend_name(configs[c].backend), n),
              bench::summarize(times[c]), {.flops = flops[model]},
              {{"n", n}, {"hidden", hidden}, {"measured_sentences", b}, {"rounds", rounds},
               {"precision", precision_name(configs[c].precision)}, {"backend", gemm_backend_name(configs[c].backend)}});
          bench.annotate("mfu", res.fraction_of_peak);
          bench.annotate("over_rule", bench::summarize(over_rule).median_ms);  // summarize: any positive samples
          bench.annotate("fp32_over_this", bench::summarize(over_fp32).median_ms);
        }
      }
    }
  }
}
