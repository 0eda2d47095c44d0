// BiG-Transformer: the char/word/sent topology and its variants, the encoder against a dense double-precision
// implementation of the same equations with an explicit char x (word + sent) mask (forward and every
// parameter gradient), on sentences with no word, one word and overlapping / nested words; lexicon matching
// on token ids; a sentence with no lexicon match.
#include <doctest/doctest.h>

#include <cmath>

#include "kernels/dense/random.hpp"
#include "models/big_transformer/big_transformer.hpp"
#include "models/registry.hpp"
#include "tests/support/dense_attention_reference.hpp"

using namespace topo;
using namespace topo::models;
using testing::Values;

namespace {

using Spans = std::vector<std::vector<builders::Span>>;

// Sentence 0: 3 chars, no word. Sentence 1: 4 chars, one word [1, 2]. Sentence 2: 6 chars, overlapping and
// nested words (char 1 is in four of them).
const std::vector<std::int64_t> kLengths = {3, 4, 6};
const Spans kSpans = {{}, {{1, 2}}, {{0, 2}, {1, 1}, {1, 4}, {4, 5}, {0, 5}}};

// y = x W^T + b: x [n, in], W [out, in].
std::vector<double> affine(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& b,
                           std::int64_t n, std::int64_t in, std::int64_t out) {
  std::vector<double> y(static_cast<std::size_t>(n * out));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t o = 0; o < out; ++o) {
      double acc = b[static_cast<std::size_t>(o)];
      for (std::int64_t c = 0; c < in; ++c)
        acc += x[static_cast<std::size_t>(i * in + c)] * w[static_cast<std::size_t>(o * in + c)];
      y[static_cast<std::size_t>(i * out + o)] = acc;
    }
  return y;
}

std::vector<double> layer_norm(const std::vector<double>& x, const std::vector<double>& gamma,
                               const std::vector<double>& beta, std::int64_t n, std::int64_t d) {
  std::vector<double> y(x.size());
  for (std::int64_t i = 0; i < n; ++i) {
    double mean = 0, var = 0;
    for (std::int64_t c = 0; c < d; ++c) mean += x[static_cast<std::size_t>(i * d + c)] / double(d);
    for (std::int64_t c = 0; c < d; ++c) var += std::pow(x[static_cast<std::size_t>(i * d + c)] - mean, 2) / double(d);
    for (std::int64_t c = 0; c < d; ++c)
      y[static_cast<std::size_t>(i * d + c)] =
          (x[static_cast<std::size_t>(i * d + c)] - mean) / std::sqrt(var + 1e-5) * gamma[static_cast<std::size_t>(c)] +
          beta[static_cast<std::size_t>(c)];
  }
  return y;
}

// The BiG encoder's equations with dense matrices: every value by parameter name ("char.weight",
// "layers.0.block.attention.q.weight", ...), the attention through the shared dense reference with masks
// built here from the spans, not from the graph.
struct BigDense {
  std::vector<std::int64_t> lengths, ids;
  Spans spans;
  bool words = true, sentence = true;
  std::int64_t dim = 0, heads = 0, ffn = 0, layers = 0;
  std::vector<double> positions;  // the sinusoid table [max_length, dim]

  // The sentence features: mean over each sentence's final char states [B, dim].
  std::vector<double> forward(const Values& v) const {
    const auto n = static_cast<std::int64_t>(ids.size()), batch = static_cast<std::int64_t>(lengths.size());
    std::vector<std::int64_t> sentence_of, position;
    for (std::int64_t b = 0; b < batch; ++b)
      for (std::int64_t i = 0; i < lengths[static_cast<std::size_t>(b)]; ++i) sentence_of.push_back(b), position.push_back(i);
    std::vector<double> h(static_cast<std::size_t>(n * dim));
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t c = 0; c < dim; ++c)
        h[static_cast<std::size_t>(i * dim + c)] = v.at("char.weight")[static_cast<std::size_t>(ids[static_cast<std::size_t>(i)] * dim + c)] +
                                                   positions[static_cast<std::size_t>(position[static_cast<std::size_t>(i)] * dim + c)];
    // Words as (first, last) global char rows.
    std::vector<std::pair<std::int64_t, std::int64_t>> word_rows;
    for (std::int64_t b = 0, start = 0; b < batch; start += lengths[static_cast<std::size_t>(b)], ++b)
      if (words)
        for (const builders::Span& s : spans[static_cast<std::size_t>(b)]) word_rows.emplace_back(start + s.start, start + s.end);
    const auto num_words = static_cast<std::int64_t>(word_rows.size());
    // The explicit mask: char i may attend to word w iff i lies in w's span, to sentence b iff it is in b.
    testing::DenseProblem att;
    att.dim = dim;
    att.heads = heads;
    att.num_dst = n;
    if (words) att.src_types.push_back("word");
    if (sentence) att.src_types.push_back("sent");
    att.num_src = (words ? num_words : 0) + (sentence ? batch : 0);
    std::vector<char> mask(static_cast<std::size_t>(n * att.num_src), 0);
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t w = 0; w < num_words; ++w)
        if (word_rows[static_cast<std::size_t>(w)].first <= i && i <= word_rows[static_cast<std::size_t>(w)].second)
          mask[static_cast<std::size_t>(i * att.num_src + w)] = 1;
      if (sentence) mask[static_cast<std::size_t>(i * att.num_src + (words ? num_words : 0) + sentence_of[static_cast<std::size_t>(i)])] = 1;
    }
    att.masks.assign(static_cast<std::size_t>(heads), mask);

    for (std::int64_t l = 0; l < layers; ++l) {
      const std::string p = "layers." + std::to_string(l) + ".";
      auto at = [&](const std::string& name) -> const std::vector<double>& { return v.at(p + name); };
      Values a{{"dst", h}};
      if (words) {
        std::vector<double> o(static_cast<std::size_t>(num_words * dim), 0.0);
        for (std::int64_t w = 0; w < num_words; ++w)
          for (std::int64_t i = word_rows[static_cast<std::size_t>(w)].first; i <= word_rows[static_cast<std::size_t>(w)].second; ++i)
            for (std::int64_t c = 0; c < dim; ++c) o[static_cast<std::size_t>(w * dim + c)] += h[static_cast<std::size_t>(i * dim + c)];
        a["src:word"] = o;
      }
      if (sentence) a["src:sent"] = affine(mean_per_sentence(h), at("sentence.weight"), at("sentence.bias"), batch, dim, dim);
      for (const char* m : {"q", "k", "v", "o"})
        for (const char* f : {"weight", "bias"})
          a[std::string(m) + "." + f] = at(std::string("block.attention.") + m + "." + f);
      const auto attended = att.forward(a);
      std::vector<double> x(h.size());
      for (std::size_t i = 0; i < h.size(); ++i) x[i] = h[i] + attended[i];
      const auto mid = layer_norm(x, at("block.attention_norm.weight"), at("block.attention_norm.bias"), n, dim);
      auto inner = affine(mid, at("block.ffn_in.weight"), at("block.ffn_in.bias"), n, dim, ffn);
      for (double& z : inner) z = std::max(z, 0.0);
      const auto out = affine(inner, at("block.ffn_out.weight"), at("block.ffn_out.bias"), n, ffn, dim);
      for (std::size_t i = 0; i < h.size(); ++i) x[i] = mid[i] + out[i];
      h = layer_norm(x, at("block.ffn_norm.weight"), at("block.ffn_norm.bias"), n, dim);
    }
    return mean_per_sentence(h);
  }

  std::vector<double> mean_per_sentence(const std::vector<double>& h) const {
    std::vector<double> s(lengths.size() * static_cast<std::size_t>(dim), 0.0);
    std::int64_t row = 0;
    for (std::size_t b = 0; b < lengths.size(); ++b)
      for (std::int64_t i = 0; i < lengths[b]; ++i, ++row)
        for (std::int64_t c = 0; c < dim; ++c)
          s[b * static_cast<std::size_t>(dim) + static_cast<std::size_t>(c)] += h[static_cast<std::size_t>(row * dim + c)] / double(lengths[b]);
    return s;
  }
};

SequenceBatch char_batch(const std::vector<std::int64_t>& lengths, std::int64_t vocab, std::uint64_t seed) {
  SequenceBatch batch;
  batch.lengths = lengths;
  std::int64_t total = 0;
  for (std::int64_t n : lengths) total += n;
  std::vector<std::int64_t> ids;
  for (std::int64_t i = 0; i < total; ++i) ids.push_back(static_cast<std::int64_t>((seed * 7 + static_cast<std::uint64_t>(i) * 13) % static_cast<std::uint64_t>(vocab)));
  batch.token_ids = Tensor::from_vector(ids, {total});
  return batch;
}

// The encoder's sentence features against BigDense: forward element by element, and the gradient of every
// parameter as a directional derivative of the dense model (central differences along a random direction).
void check_encoder_against_dense(BigVariant variant, const Spans& spans, std::uint64_t seed) {
  BigConfig c;
  c.encoder.vocab_size = 11;
  c.encoder.hidden = 8;
  c.encoder.heads = 2;
  c.encoder.layers = 2;
  c.ffn = 12;
  c.encoder.max_length = 8;
  c.variant = variant;
  BigTransformer model(c);
  model.reset_parameters(seed);
  const SequenceBatch batch = char_batch(kLengths, c.encoder.vocab_size, seed);
  const BigTopology topology = big_topology(kLengths, spans, variant);

  BigDense dense;
  dense.lengths = kLengths;
  dense.ids = batch.token_ids.to_vector<std::int64_t>();
  dense.spans = variant == BigVariant::Radical ? adjacent_pairs(kLengths) : spans;
  dense.words = variant != BigVariant::NoLocal;
  dense.sentence = variant != BigVariant::NoGlobal;
  dense.dim = c.encoder.hidden;
  dense.heads = c.encoder.heads;
  dense.ffn = c.ffn;
  dense.layers = c.encoder.layers;
  dense.positions = testing::to_double(sinusoidal_positions(c.encoder.max_length, c.encoder.hidden));
  Values values;
  for (auto& [name, p] : model.named_parameters()) {
    values[name] = testing::to_double(p.data());
    p.zero_grad();
  }

  const nn::Var out = model.encode(batch, topology).sentences;
  const auto expected = dense.forward(values);
  TOPO_CHECK_CLOSE(out.data().to_vector<float>(), std::vector<float>(expected.begin(), expected.end()), 1e-4, 1e-4);

  const Tensor weights_t = testing::random_uniform(out.shape(), seed + 1);
  const auto weights = testing::to_double(weights_t);
  nn::sum_all(nn::mul(out, nn::Var(weights_t))).backward();  // L = sum(out * weights)
  auto loss = [&](const Values& v) {
    const auto y = dense.forward(v);
    double l = 0;
    for (std::size_t i = 0; i < y.size(); ++i) l += y[i] * weights[i];
    return l;
  };
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  for (const auto& entry : model.named_parameters()) {  // no structured binding: clang 14's INFO cannot capture one
    const std::string& name = entry.first;
    const auto& p = entry.second;
    INFO("gradient of " << name);
    // A sentence projection no character reads (no-global) has no gradient: nothing to compare.
    if (!p.grad().defined()) {
      CHECK(variant == BigVariant::NoGlobal);
      continue;
    }
    const auto g = testing::to_double(p.grad());
    Values plus = values, minus = values;
    double analytic = 0;
    const double eps = 1e-5;
    for (std::size_t i = 0; i < g.size(); ++i) {
      const double u = normal(rng);
      analytic += g[i] * u;
      plus.at(name)[i] += eps * u;
      minus.at(name)[i] -= eps * u;
    }
    const double numeric = (loss(plus) - loss(minus)) / (2 * eps);
    CHECK(std::abs(analytic - numeric) <= 2e-3 * (1.0 + std::abs(numeric)));
  }
}

}  // namespace

TEST_CASE("BiG topology: char, word and sent nodes; words feed the sums, words and sentence the attention") {
  const BigTopology t = big_topology(kLengths, kSpans, BigVariant::Full);
  CHECK(t.word_counts == std::vector<std::int64_t>{0, 1, 5});
  CHECK(t.word_sum.num_dst == 6);
  CHECK(t.word_sum.num_src == 13);
  CHECK(t.word_sum.num_edges() == 2 + (3 + 1 + 4 + 2 + 6));
  CHECK(t.chars.num_dst == 13);
  CHECK(t.chars.src_types == std::vector<std::string>{"word", "sent"});
  CHECK(t.chars.num_edges() == t.word_sum.num_edges() + 13);  // every char also reads its sentence node
  // The explicit char x (word + sent) mask of sentence 2's char 1 (global row 8): words [0,2] [1,1] [1,4] [0,5]
  // (block sources 1, 2, 3, 5) and sentence node 2 (source 6 + 2).
  const auto mask = testing::block_mask(t.chars);
  std::vector<std::int64_t> row8;
  for (std::int64_t j = 0; j < t.chars.num_src; ++j)
    if (mask[static_cast<std::size_t>(8 * t.chars.num_src + j)]) row8.push_back(j);
  CHECK(row8 == std::vector<std::int64_t>{1, 2, 3, 5, 8});

  const BigTopology no_global = big_topology(kLengths, kSpans, BigVariant::NoGlobal);
  CHECK(no_global.chars.src_types == std::vector<std::string>{"word"});
  const BigTopology no_local = big_topology(kLengths, kSpans, BigVariant::NoLocal);
  CHECK_FALSE(no_local.has_words);
  CHECK(no_local.chars.src_types == std::vector<std::string>{"sent"});
  const BigTopology radical = big_topology(kLengths, kSpans, BigVariant::Radical);
  CHECK(radical.word_counts == std::vector<std::int64_t>{2, 3, 5});  // every adjacent pair
  const BigTopology none = big_topology({2, 1}, {{}, {}}, BigVariant::Full);  // no word in the whole batch
  CHECK(none.word_sum.num_dst == 0);
  CHECK(none.chars.num_edges() == 3);

  CHECK_THROWS_WITH_AS(big_topology({3}, {{{1, 3}}}, BigVariant::Full), doctest::Contains("3"), Error);
  CHECK_THROWS_WITH_AS(parse_big_variant("no-ring"), doctest::Contains("'no-ring'"), Error);
}

TEST_CASE("BiG encoder equals a dense masked implementation, forward and every parameter gradient") {
  SUBCASE("full") { check_encoder_against_dense(BigVariant::Full, kSpans, 3); }
  SUBCASE("no-global") { check_encoder_against_dense(BigVariant::NoGlobal, kSpans, 4); }
  SUBCASE("no-local") { check_encoder_against_dense(BigVariant::NoLocal, kSpans, 5); }
  SUBCASE("radical") { check_encoder_against_dense(BigVariant::Radical, kSpans, 6); }
  SUBCASE("no word in any sentence") { check_encoder_against_dense(BigVariant::Full, Spans(3), 7); }
}

TEST_CASE("BiG encoder: words matched on token ids, batch-given spans win, a sentence with no match") {
  // Vocabulary as a classify task gives it: <pad>, <unk>, then characters (one a non-BMP one).
  const std::vector<std::string> vocabulary = {"<pad>", "<unk>", "南", "京", "市", "长", "江", "大", "桥", "\xF0\xA0\x80\x80"};
  auto u32 = [](const std::string& s) {
    const auto cps = utf8_code_points(s);
    return std::u32string(cps.begin(), cps.end());
  };
  BigConfig c;
  c.encoder.vocab_size = static_cast<std::int64_t>(vocabulary.size());
  c.encoder.hidden = 8;
  c.encoder.heads = 2;
  c.encoder.layers = 1;
  c.vocabulary = vocabulary;
  c.lexicon = std::make_shared<const Lexicon>(std::vector<std::u32string>{
      u32("南京"), u32("南京市"), u32("市长"), u32("长江"), u32("长江大桥"), u32("大桥"), u32("桥\xF0\xA0\x80\x80")});
  c.matching.max_words = 4;
  BigTransformer model(c);
  model.reset_parameters(1);
  SequenceBatch batch;
  batch.lengths = {7, 3, 2};  // 南京市长江大桥 | 江<unk>南 (no word) | 桥𠀀
  batch.token_ids = Tensor::from_vector(std::vector<std::int64_t>{2, 3, 4, 5, 6, 7, 8, 6, 1, 2, 8, 9}, {12});
  const auto spans = model.word_spans(batch);
  REQUIRE(spans.size() == 3);
  REQUIRE(spans[0].size() == 4);  // 南京 南京市 市长 长江 | capped: 长江大桥 大桥 dropped
  CHECK(spans[0][3].start == 3);
  CHECK(spans[0][3].end == 4);
  CHECK(spans[1].empty());
  REQUIRE(spans[2].size() == 1);
  CHECK(spans[2][0].end == 1);
  CHECK(model.capped_sentences() == 1);
  CHECK(model.dropped_words() == 2);
  const Encoding e = model.encode(batch);
  CHECK(e.tokens.shape() == Shape{12, 8});
  CHECK(e.sentences.shape() == Shape{3, 8});
  for (float x : e.sentences.data().to_vector<float>()) CHECK(std::isfinite(x));

  // The caller's own words: node set "word" with spans per example.
  NodeSet words;
  words.counts = {1, 0, 0};
  words.spans = Tensor::from_vector(std::vector<std::int64_t>{0, 6}, {1, 2});
  batch.node_sets["word"] = words;
  const auto given = model.word_spans(batch);
  REQUIRE(given[0].size() == 1);
  CHECK(given[0][0].end == 6);
  CHECK(given[1].empty());
}

TEST_CASE("BiG is registered: --model big with its variant choices, a lexicon option and a char recipe") {
  const ModelRegistration& big = find_model("big");
  CHECK_FALSE(big.reads_features);
  CHECK(big.recipes.at("classify").at("tokenize") == "char");
  EncoderSpec spec;
  spec.vocab_size = 3;
  spec.hidden = 8;
  spec.heads = 2;
  spec.vocabulary = {"<pad>", "<unk>", "好"};
  spec.options = {{"variant", "radical"}, {"lexicon", ""}, {"lexicon_single_chars", false}, {"max_words", 0}};
  const auto encoder = big.make(spec);  // radical needs no lexicon file
  SequenceBatch batch;
  batch.lengths = {2};
  batch.token_ids = Tensor::from_vector(std::vector<std::int64_t>{2, 2}, {2});
  CHECK(encoder->encode(batch).sentences.shape() == Shape{1, 8});
  spec.options["variant"] = "full";
  spec.options["lexicon"] = "/nonexistent/words.txt";
  CHECK_THROWS_WITH_AS(big.make(spec), doctest::Contains("/nonexistent/words.txt"), Error);
}

TEST_CASE("BiG reads character vectors of another width as the other models do: covered rows kept, projected") {
  // 6 characters, vectors of width 5 for ids 2 and 4 only, a model of width 8.
  BigConfig c;
  c.encoder.vocab_size = 6;
  c.encoder.hidden = 8;
  c.encoder.heads = 2;
  c.encoder.layers = 1;
  c.encoder.embedding_dim = 5;
  c.encoder.pretrained = topo::random_normal({6, 5}, 0.f, 0.5f, 11);
  c.encoder.pretrained_rows = {0, 0, 1, 0, 1, 0};
  c.variant = BigVariant::Radical;  // no lexicon needed
  BigTransformer model(c);
  model.reset_parameters(2);
  REQUIRE(model.char_projection);
  CHECK(model.char_embedding->weight.shape() == Shape{6, 5});
  const std::vector<float> vectors = c.encoder.pretrained.to_vector<float>();
  const std::vector<float> table = model.char_embedding->weight.data().to_vector<float>();
  for (std::size_t k = 0; k < 5; ++k) {
    CHECK(table[2 * 5 + k] == vectors[2 * 5 + k]);
    CHECK(table[4 * 5 + k] == vectors[4 * 5 + k]);
    CHECK(table[3 * 5 + k] != vectors[3 * 5 + k]);  // uncovered: a fresh draw
  }
  // H^0 = table[id] W^T + the sinusoid of the position (dropout 0).
  SequenceBatch batch;
  batch.lengths = {3};
  batch.token_ids = Tensor::from_vector(std::vector<std::int64_t>{4, 2, 3}, {3});
  const std::vector<float> h = model.embed(batch).data().to_vector<float>();
  const std::vector<float> w = model.char_projection->weight.data().to_vector<float>();  // [8, 5]
  const std::vector<float> pe = sinusoidal_positions(3, 8).to_vector<float>();
  const std::vector<std::size_t> ids = {4, 2, 3};
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t o = 0; o < 8; ++o) {
      double expect = pe[i * 8 + o];
      for (std::size_t k = 0; k < 5; ++k) expect += double(table[ids[i] * 5 + k]) * w[o * 5 + k];
      CHECK(h[i * 8 + o] == doctest::Approx(expect).epsilon(1e-5));
    }
  // A table of the wrong width is an error naming the model and the shapes.
  c.encoder.embedding_dim = 0;
  CHECK_THROWS_WITH_AS(BigTransformer{c}, doctest::Contains("BiG-Transformer: pre-trained vectors"), Error);
}
