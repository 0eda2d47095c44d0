// Suite `big`: the BiG-Transformer's cost on real Chinese text (issue #16) — inference and training step per
// batch of ChnSentiCorp reviews at its classify recipe (d = 96, 6 heads, 2 layers, FFN 4d, reviews cut at 256
// characters, batches of 32), against the dense Transformer (the fused dense attention, each review at its own length) and the Star-Transformer of
// the same width on the same batches. BiG's time includes what a real step does on the host: lexicon matching
// of every sentence against jieba's dict.txt and building its char–word–sentence topology (both also timed
// alone). A step is forward + backward of a linear loss on the sentence features (no optimizer update).
// Batches: the dev reviews in file order, `--sizes` batches of 32 (default 4; quick: 2), each timed on its own;
// FLOPs from the shapes (each model's flop_count.hpp) give `mfu` against the sgemm peak of the same run.
// Data from TOPO_DATA (default ../shared/data); the suite says so and records nothing when it is missing.
#include <cstdlib>
#include <map>
#include <memory>

#include "bench/harness.hpp"
#include "bench/review_text.hpp"
#include "kernels/dense/random.hpp"
#include "models/big_transformer/flop_count.hpp"
#include "models/star_transformer/flop_count.hpp"
#include "models/transformer/flop_count.hpp"
#include "nn/autograd.hpp"
#include "nn/ops.hpp"

namespace {

using namespace topo;
constexpr std::int64_t kHidden = 96, kHeads = 6, kLayers = 2, kBatch = 32, kMaxChars = 256;

}  // namespace

TOPO_BENCH_SUITE(big, "BiG-Transformer vs dense Transformer and Star on ChnSentiCorp batches (d = 96)") {
  const std::vector<std::string> paths = bench::data_files("big", {"zh_lexicon/dict.txt", "chnsenticorp/dev.tsv"});
  if (paths.empty()) return;
  const std::string &dict = paths[0], &text = paths[1];
  const std::vector<std::vector<std::string>> texts = bench::review_characters(text, kMaxChars);
  // Character ids over the reviews read (id 0 unused, as <pad>); the vocabulary holds each id's string.
  std::map<std::string, std::int64_t> ids;
  std::vector<std::string> vocabulary = {"<pad>"};
  for (const auto& t : texts)
    for (const std::string& c : t)
      if (ids.emplace(c, static_cast<std::int64_t>(vocabulary.size())).second) vocabulary.push_back(c);
  const auto vocab = static_cast<std::int64_t>(vocabulary.size());

  models::BigConfig bc;
  bc.encoder = {.vocab_size = vocab, .hidden = kHidden, .heads = kHeads, .layers = kLayers, .max_length = kMaxChars};
  bc.lexicon = std::make_shared<const models::Lexicon>(models::Lexicon::load(dict));
  bc.vocabulary = vocabulary;
  models::BigTransformer big(bc);
  big.reset_parameters(1);
  models::TransformerConfig tc;
  tc.encoder = {.vocab_size = vocab, .hidden = kHidden, .heads = kHeads, .layers = kLayers, .max_length = kMaxChars};
  models::Transformer dense(tc);
  dense.reset_parameters(2);
  models::StarConfig sc;
  sc.encoder = {.vocab_size = vocab, .hidden = kHidden, .heads = kHeads, .layers = kLayers, .max_length = kMaxChars};
  models::StarTransformer star(sc);
  star.reset_parameters(3);

  const std::int64_t batches = std::min<std::int64_t>(
      bench.sizes().empty() ? (bench.quick() ? 2 : 4) : bench.sizes().front(), static_cast<std::int64_t>(texts.size()) / kBatch);
  for (std::int64_t bi = 0; bi < batches; ++bi) {
    models::SequenceBatch batch;
    std::vector<std::int64_t> tokens;
    for (std::int64_t s = bi * kBatch; s < (bi + 1) * kBatch; ++s) {
      const std::vector<std::string>& t = texts[static_cast<std::size_t>(s)];
      batch.lengths.push_back(static_cast<std::int64_t>(t.size()));
      for (const std::string& c : t) tokens.push_back(ids.at(c));
    }
    batch.token_ids = Tensor::from_vector(tokens, {static_cast<std::int64_t>(tokens.size())});
    const std::int64_t chars = batch.num_tokens(), longest = *std::max_element(batch.lengths.begin(), batch.lengths.end());
    const std::vector<std::vector<builders::Span>> spans = big.word_spans(batch);
    std::int64_t words = 0;
    for (const auto& s : spans) words += static_cast<std::int64_t>(s.size());
    const models::BigTopology topology = models::big_topology(batch.lengths, spans, bc.variant);
    // encode_dense is the fused kernel over packed sentences: it computes no padding, so the dense FLOPs are
    // those of the sentences at their own lengths (counting the padded batch gave MFUs above 100%).
    const models::FlopCount big_f = models::big_flops(bc, topology), dense_f = models::transformer_flops(tc, batch.lengths),
                            star_f = models::star_flops(sc, batch.lengths);
    const Tensor r = random_uniform({kBatch, kHidden}, -1, 1, 4);
    const nlohmann::json shape = {{"batch", bi},       {"sentences", kBatch}, {"characters", chars},
                                  {"longest", longest}, {"lexicon_words", words}};
    auto step = [&](auto&& encode) {
      const models::Encoding e = encode();
      nn::sum_all(e.sentences * nn::Var(r)).backward();
    };
    std::map<std::string, double> ms;
    auto record = [&](const std::string& what, double flops, const std::function<void()>& fn) {
      const bench::Result res = bench.run(fmt::format("{} batch {}", what, bi), {.flops = flops}, fn, shape);
      bench.annotate("mfu", res.fraction_of_peak);
      bench.annotate("us_per_character", 1e3 * res.stats.median_ms / static_cast<double>(chars));
      ms[what] = res.stats.median_ms;
    };
    record("lexicon match + topology", 0.0, [&] {
      const models::BigTopology t = models::big_topology(batch.lengths, big.word_spans(batch), bc.variant);
      if (t.lengths.empty()) std::abort();  // keeps the call
    });
    record("big inference", big_f.forward, [&] { nn::NoGradGuard g; (void)big.encode(batch); });
    record("big train step", big_f.train_step(), [&] { big.zero_grad(); step([&] { return big.encode(batch); }); });
    record("dense inference", dense_f.forward, [&] { nn::NoGradGuard g; (void)dense.encode_dense(batch); });
    record("dense train step", dense_f.train_step(),
           [&] { dense.zero_grad(); step([&] { return dense.encode_dense(batch); }); });
    record("star inference", star_f.forward, [&] { nn::NoGradGuard g; (void)star.encode(batch); });
    record("star train step", star_f.train_step(), [&] { star.zero_grad(); step([&] { return star.encode(batch); }); });
    bench.annotate("dense_over_big_inference", ms["dense inference"] / ms["big inference"]);
    bench.annotate("dense_over_big_train", ms["dense train step"] / ms["big train step"]);
    bench.annotate("big_over_star_train", ms["big train step"] / ms["star train step"]);
    bench.annotate("matching_share_of_big_step", ms["lexicon match + topology"] / ms["big train step"]);
  }
}
