// Suite `nli`: sentence pairs per second, training and inference, for Star, Multi-Scale (band path) and the
// dense Transformer at SNLI's lengths (issue #40): 64 pairs a batch, premises of 6..22 tokens (mean 14) and
// hypotheses of 4..12 (mean 8), drawn once from a fixed seed. The papers' width (d = 300, 2 layers; Star and the
// Transformer 6 heads x 50, Multi-Scale 10 x 30), each encoder under models::PairClassifier with a 3-class head,
// so a batch is one graph of the 64 premises then the 64 hypotheses, as `topo-train --task nli` runs it. A step
// is forward + cross-entropy + backward (no optimizer update: identical for every model). FLOPs are counted from
// the shapes of the 128 sequences (models/*/flop_count.hpp; the pair head's small MLP is not counted), and
// `mfu` is against this run's sgemm peak. Each row reports `pairs_per_second`; the sparse models' rows also
// `over_dense` = their pairs per second over the dense Transformer's, for the same kind of row.
#include <random>

#include "bench/harness.hpp"
#include "models/heads.hpp"
#include "models/multiscale_transformer/flop_count.hpp"
#include "models/multiscale_transformer/multiscale_transformer.hpp"
#include "models/star_transformer/flop_count.hpp"
#include "models/star_transformer/star_transformer.hpp"
#include "models/transformer/flop_count.hpp"
#include "models/transformer/transformer.hpp"
#include "nn/autograd.hpp"
#include "nn/ops.hpp"

namespace {

using namespace topo;
constexpr std::int64_t kPairs = 64, kVocab = 20000, kHidden = 300, kLayers = 2, kClasses = 3;

// 64 premises then 64 hypotheses of SNLI-like lengths, random token ids.
models::SequenceBatch snli_like_batch(std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<std::int64_t> premise(6, 22), hypothesis(4, 12), id(0, kVocab - 1);
  models::SequenceBatch b;
  for (std::int64_t i = 0; i < kPairs; ++i) b.lengths.push_back(premise(gen));
  for (std::int64_t i = 0; i < kPairs; ++i) b.lengths.push_back(hypothesis(gen));
  std::vector<std::int64_t> ids(static_cast<std::size_t>(b.num_tokens()));
  for (auto& x : ids) x = id(gen);
  b.token_ids = Tensor::from_vector(ids, {b.num_tokens()});
  return b;
}

}  // namespace

TOPO_BENCH_SUITE(nli, "sentence pairs per second at SNLI's lengths: Star and Multi-Scale vs the dense Transformer") {
  const models::SequenceBatch batch = snli_like_batch(7);
  std::vector<std::int64_t> labels(kPairs);
  for (std::int64_t i = 0; i < kPairs; ++i) labels[static_cast<std::size_t>(i)] = i % kClasses;
  const Tensor targets = Tensor::from_vector(labels, {kPairs});
  const models::EncoderConfig encoder{.vocab_size = kVocab, .hidden = kHidden, .heads = 6, .layers = kLayers,
                                      .max_length = 64};

  models::StarConfig sc;
  sc.encoder = encoder;
  models::TransformerConfig tc;
  tc.encoder = encoder;
  tc.dense = true;
  models::MultiScaleConfig mc;
  mc.encoder = encoder;
  mc.encoder.heads = 10;
  struct Entry {
    const char* name;
    std::shared_ptr<models::PairClassifier> model;
    models::FlopCount flops;
  };
  std::vector<Entry> entries = {
      {"dense", std::make_shared<models::PairClassifier>(std::make_shared<models::Transformer>(tc), kClasses),
       models::transformer_flops(tc, batch.lengths)},
      {"star", std::make_shared<models::PairClassifier>(std::make_shared<models::StarTransformer>(sc), kClasses),
       models::star_flops(sc, batch.lengths)},
      {"multiscale",
       std::make_shared<models::PairClassifier>(std::make_shared<models::MultiScaleTransformer>(mc), kClasses),
       models::multiscale_flops(mc, batch.lengths)},
  };
  double dense_ms[2] = {0, 0};
  for (Entry& e : entries) {
    e.model->reset_parameters(3);
    const auto inference = [&] {
      nn::NoGradGuard g;
      (void)e.model->forward(batch);
    };
    const auto step = [&] {
      e.model->zero_grad();
      nn::cross_entropy(e.model->forward(batch), targets).backward();
    };
    const std::pair<const char*, std::function<void()>> rows[2] = {{"inference", inference}, {"train step", step}};
    for (int r = 0; r < 2; ++r) {
      const double flops = r == 0 ? e.flops.forward : e.flops.train_step();
      const bench::Result res = bench.run(fmt::format("{} {}", e.name, rows[r].first), {.flops = flops}, rows[r].second,
                                          {{"pairs", kPairs}, {"tokens", batch.num_tokens()}});
      bench.annotate("mfu", res.fraction_of_peak);
      bench.annotate("pairs_per_second", 1e3 * static_cast<double>(kPairs) / res.stats.median_ms);
      if (std::string(e.name) == "dense") dense_ms[r] = res.stats.median_ms;
      else bench.annotate("over_dense", dense_ms[r] / res.stats.median_ms);
    }
  }
}
