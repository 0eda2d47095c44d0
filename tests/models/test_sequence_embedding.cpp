// SequenceEmbedding, the input stage every sequence model shares: the one-pass path (token ids straight into
// the hidden width: embedding_sum over the token, position, case and lead tables) against the same rows
// composed from separate look-ups, a concat and a gather (what Multi-Scale built before), forward and every
// table's gradient; the projected path's lead rows; and errors.
#include <doctest/doctest.h>

#include "kernels/dense/random.hpp"
#include "kernels/dense/random_math.hpp"
#include "models/sequence_embedding.hpp"
#include "nn/ops.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::models;

namespace {

SequenceBatch token_batch(const std::vector<std::int64_t>& lengths, std::int64_t vocab, std::int64_t classes) {
  SequenceBatch batch;
  batch.lengths = lengths;
  std::int64_t n = 0;
  for (std::int64_t len : lengths) n += len;
  batch.token_ids = topo::testing::random_ids({n}, vocab, 11);
  if (classes > 0) batch.token_case = topo::testing::random_ids({n}, classes, 12);
  return batch;
}

// The rows composed as before embedding_sum: look-ups added, the lead row appended, every row gathered in
// layout order (sentence b: its lead row, then its tokens).
nn::Var composed(const SequenceEmbedding& e, const SequenceBatch& batch, const nn::Var& lead) {
  std::vector<std::int64_t> positions;  // written out here: the one-pass path's layout is under test
  for (std::int64_t len : batch.lengths)
    for (std::int64_t i = 0; i < len; ++i) positions.push_back(i);
  nn::Var rows = e.token_embedding->forward(batch.token_ids) +
                 e.position_embedding->forward(
                     Tensor::from_vector(positions, {static_cast<std::int64_t>(positions.size())}));
  if (e.case_embedding) rows = rows + e.case_embedding->forward(batch.token_case);
  if (!lead.defined()) return rows;
  std::vector<std::int64_t> pick;
  std::int64_t token = 0;
  for (std::int64_t len : batch.lengths) {
    pick.push_back(batch.num_tokens());
    for (std::int64_t i = 0; i < len; ++i) pick.push_back(token++);
  }
  return nn::index_select(nn::concat({rows, lead}, 0),
                          Tensor::from_vector(pick, {static_cast<std::int64_t>(pick.size())}));
}

}  // namespace

TEST_CASE("the one-pass embedding equals the composed look-ups, with and without a lead row, values and gradients") {
  const std::vector<std::int64_t> lengths = {5, 1, 17, 3};
  for (std::int64_t classes : {0, 3}) {
    for (bool with_lead : {false, true}) {
      CAPTURE(classes);
      CAPTURE(with_lead);
      EmbeddingConfig config;
      config.vocab_size = 23, config.hidden = 33, config.max_length = 20, config.case_classes = classes;
      SequenceEmbedding e(config);
      e.reset_parameters(5);
      const SequenceBatch batch = token_batch(lengths, config.vocab_size, classes);
      nn::Var lead(random_uniform({1, config.hidden}, -1, 1, 6), true);
      const nn::Var l = with_lead ? lead : nn::Var();
      const std::int64_t rows = batch.num_tokens() + (with_lead ? batch.size() : 0);
      const Tensor r = random_uniform({rows, config.hidden}, -1, 1, 7);
      std::vector<std::vector<float>> grads[2];
      std::vector<float> out[2];
      for (int path = 0; path < 2; ++path) {
        e.zero_grad();
        lead.zero_grad();
        const nn::Var y = path == 0 ? e.forward(batch, l) : composed(e, batch, l);
        REQUIRE(y.shape() == Shape{rows, config.hidden});
        out[path] = y.data().to_vector<float>();
        nn::sum_all(y * nn::Var(r)).backward();
        for (const nn::Var& p : {e.token_embedding->weight, e.position_embedding->weight})
          grads[path].push_back(p.grad().to_vector<float>());
        if (e.case_embedding) grads[path].push_back(e.case_embedding->weight.grad().to_vector<float>());
        if (with_lead) grads[path].push_back(lead.grad().to_vector<float>());
      }
      TOPO_CHECK_CLOSE(out[0], out[1], 1e-6, 1e-6);
      REQUIRE(grads[0].size() == grads[1].size());
      for (std::size_t k = 0; k < grads[0].size(); ++k) TOPO_CHECK_CLOSE(grads[0][k], grads[1][k], 1e-5, 1e-5);
    }
  }
}

TEST_CASE("a projected token table places the lead rows first in every sentence; a wrong lead or token count is an error") {
  EmbeddingConfig config;
  config.vocab_size = 9, config.hidden = 6, config.embedding_dim = 4, config.max_length = 8;
  SequenceEmbedding e(config);
  e.reset_parameters(3);
  const SequenceBatch batch = token_batch({2, 4}, config.vocab_size, 0);
  const nn::Var lead(random_uniform({1, 6}, -1, 1, 4));
  const std::vector<float> y = e.forward(batch, lead).data().to_vector<float>();
  const std::vector<float> plain = e.forward(batch).data().to_vector<float>();
  const std::vector<float> lv = lead.data().to_vector<float>();
  REQUIRE(y.size() == 8 * 6);
  for (std::int64_t c = 0; c < 6; ++c) {
    CHECK(y[c] == lv[c]);           // sentence 0's lead row
    CHECK(y[3 * 6 + c] == lv[c]);   // sentence 1's, after sentence 0's two tokens
    CHECK(y[6 + c] == plain[c]);    // token 0
    CHECK(y[4 * 6 + c] == plain[2 * 6 + c]);  // token 2: sentence 1's first
  }
  // Two lead rows ([CLS] nodes of a topology file): both before every sentence's tokens, in order.
  const nn::Var leads(random_uniform({2, 6}, -1, 1, 5));
  const std::vector<float> y2 = e.forward(batch, leads).data().to_vector<float>(), l2 = leads.data().to_vector<float>();
  REQUIRE(y2.size() == 10 * 6);
  for (std::int64_t c = 0; c < 6; ++c) {
    CHECK(y2[c] == l2[c]);
    CHECK(y2[6 + c] == l2[6 + c]);
    CHECK(y2[2 * 6 + c] == plain[c]);             // token 0
    CHECK(y2[4 * 6 + c] == l2[c]);                // sentence 1's lead rows
    CHECK(y2[5 * 6 + c] == l2[6 + c]);
    CHECK(y2[9 * 6 + c] == plain[5 * 6 + c]);     // the last token
  }
  CHECK_THROWS_AS((void)e.forward(batch, nn::Var(random_uniform({6}, -1, 1, 5))), Error);
  // The one-pass path (no projection: embedding_sum with the lead rows as a table) lays them out the same way.
  EmbeddingConfig direct = config;
  direct.embedding_dim = 0;
  SequenceEmbedding d(direct);
  d.reset_parameters(3);
  const std::vector<float> z = d.forward(batch, leads).data().to_vector<float>(), dp = d.forward(batch).data().to_vector<float>();
  REQUIRE(z.size() == 10 * 6);
  for (std::int64_t c = 0; c < 6; ++c) {
    CHECK(z[4 * 6 + c] == l2[c]);
    CHECK(z[5 * 6 + c] == l2[6 + c]);
    CHECK(z[6 * 6 + c] == doctest::Approx(dp[2 * 6 + c]));  // sentence 1's first token
  }
  SequenceBatch short_ids = batch;
  short_ids.token_ids = topo::testing::random_ids({5}, config.vocab_size, 13);  // sentences of 2 + 4 tokens
  CHECK_THROWS_WITH_AS((void)e.forward(short_ids), doctest::Contains("5 token ids for sentences of 6 tokens"), Error);
  CHECK_THROWS_AS((void)e.forward(batch, nn::Var(random_uniform({1, 5}, -1, 1, 5))), Error);
}

namespace {

// The character CNN written out per word in double: window sums of the three offset tables and the bias,
// tanh, the max over the word, then the projection: [tokens, hidden].
std::vector<double> naive_char_rows(const SequenceEmbedding& e, const std::vector<std::int64_t>& chars,
                                    const std::vector<std::int64_t>& counts) {
  const std::int64_t f = e.config().char_filters, h = e.config().hidden;
  const auto before = e.char_before.data().to_vector<float>(), at = e.char_at.data().to_vector<float>(),
             after = e.char_after.data().to_vector<float>(), bias = e.char_bias.data().to_vector<float>(),
             w = e.char_projection->weight.data().to_vector<float>(), b = e.char_projection->bias.data().to_vector<float>();
  std::vector<double> out;
  std::size_t c = 0;
  for (std::int64_t n : counts) {
    std::vector<double> pooled(static_cast<std::size_t>(f), -1e30);
    for (std::int64_t i = 0; i < n; ++i, ++c)
      for (std::int64_t j = 0; j < f; ++j) {
        double v = bias[j] + at[chars[c] * f + j];
        if (i > 0) v += before[chars[c - 1] * f + j];
        if (i + 1 < n) v += after[chars[c + 1] * f + j];
        pooled[j] = std::max(pooled[j], std::tanh(v));
      }
    for (std::int64_t k = 0; k < h; ++k) {
      double v = b[k];
      for (std::int64_t j = 0; j < f; ++j) v += w[k * f + j] * pooled[j];
      out.push_back(v);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("character CNN and suffix table: a naive loop per word gives the same rows, with and without a lead row; "
          "the tables' gradients match finite differences") {
  EmbeddingConfig config;
  config.vocab_size = 13, config.hidden = 6, config.max_length = 8, config.char_classes = 7, config.char_filters = 5;
  config.suffix_classes = 4;
  SequenceEmbedding e(config);
  e.reset_parameters(9);
  SequenceBatch batch = token_batch({3, 2}, config.vocab_size, 0);
  batch.chars_per_token = {1, 4, 2, 3, 1};  // one-character words have no neighbour on either side
  batch.token_chars = topo::testing::random_ids({11}, config.char_classes, 13);
  batch.token_suffix = topo::testing::random_ids({5}, config.suffix_classes, 14);
  const std::vector<std::int64_t> chars = batch.token_chars.to_vector<std::int64_t>();
  const std::vector<double> char_rows = naive_char_rows(e, chars, batch.chars_per_token);
  // The rows without characters and suffix, from the same look-ups the other test checks.
  std::vector<float> plain = composed(e, batch, nn::Var()).data().to_vector<float>();
  const std::vector<float> suffix = e.suffix_embedding->forward(batch.token_suffix).data().to_vector<float>();
  for (bool with_lead : {false, true}) {
    CAPTURE(with_lead);
    const nn::Var lead(random_uniform({1, config.hidden}, -1, 1, 6));
    const std::vector<float> got = e.forward(batch, with_lead ? lead : nn::Var()).data().to_vector<float>();
    std::size_t row = 0, token = 0;
    for (std::int64_t len : batch.lengths) {
      row += with_lead ? 1 : 0;  // the lead row is checked by the test above
      for (std::int64_t i = 0; i < len; ++i, ++row, ++token)
        for (std::int64_t k = 0; k < config.hidden; ++k) {
          const std::size_t t = token * config.hidden + k;
          CHECK(got[row * config.hidden + k] == doctest::Approx(plain[t] + suffix[t] + char_rows[t]).epsilon(1e-5));
        }
    }
  }
  // Gradients of sum(rows * R) with respect to every character table element against central differences
  // (the loss is recomputed in double from the forward's float rows).
  const Tensor r = random_uniform({batch.num_tokens(), config.hidden}, -1, 1, 15);
  const auto loss = [&] {
    const auto y = e.forward(batch).data().to_vector<float>();
    const auto rv = r.to_vector<float>();
    double s = 0;
    for (std::size_t i = 0; i < y.size(); ++i) s += double(y[i]) * rv[i];
    return s;
  };
  e.zero_grad();
  nn::sum_all(e.forward(batch) * nn::Var(r)).backward();
  for (const nn::Var* table : {&e.char_before, &e.char_at, &e.char_after, &e.char_bias}) {
    const std::vector<float> grad = table->grad().to_vector<float>();
    Tensor storage = table->data();  // shares the parameter's storage
    float* data = storage.data<float>();
    int bad = 0;
    for (std::size_t i = 0; i < grad.size(); ++i) {
      const float saved = data[i];
      data[i] = saved + 1e-3f;
      const double up = loss();
      data[i] = saved - 1e-3f;
      const double down = loss();
      data[i] = saved;
      const double numeric = (up - down) / 2e-3;
      if (std::fabs(numeric - grad[i]) > 1e-2 * (1 + std::fabs(numeric)) && bad++ < 3)
        FAIL_CHECK("element " << i << ": tape " << grad[i] << ", finite differences " << numeric);
    }
    CHECK(bad == 0);
  }
  // A batch without its characters, or counts that do not cover them, is an error naming what is missing.
  SequenceBatch missing = batch;
  missing.token_chars = Tensor();
  CHECK(topo::testing::error_of([&] { e.forward(missing); }).find("characters") != std::string::npos);
  SequenceBatch short_counts = batch;
  short_counts.chars_per_token = {1, 4, 2, 3, 2};
  CHECK(topo::testing::error_of([&] { e.forward(short_counts); }).find("characters") != std::string::npos);
}

TEST_CASE("pre-trained vectors projected to the hidden width start at unit variance, as the position table") {
  // Vectors of rms 0.25 (scaled N(0, 1) draws) over half the rows; the other rows keep N(0, 1) draws.
  EmbeddingConfig config;
  config.vocab_size = 400, config.hidden = 64, config.embedding_dim = 32, config.max_length = 8;
  const float rms = 0.25f;  // the table's rms, and the std of its draws
  config.pretrained = topo::random_normal({400, 32}, 0.f, rms, 5);
  config.pretrained_rows.assign(400, 0);
  for (std::size_t r = 0; r < 400; r += 2) config.pretrained_rows[r] = 1;
  SequenceEmbedding e(config);
  e.reset_parameters(3);
  const nn::Var projected = e.token_projection->forward(e.token_embedding->weight);  // [400, 64]
  const std::vector<float> p = projected.data().to_vector<float>();
  double covered = 0;
  for (std::size_t r = 0; r < 400; r += 2)
    for (std::size_t k = 0; k < 64; ++k) covered += double(p[r * 64 + k]) * p[r * 64 + k];
  covered /= 200.0 * 64;
  CHECK(covered == doctest::Approx(1.0).epsilon(0.15));  // the default init gave rms^2 / 3 = 0.02
  // Without vectors the projection keeps Linear's default.
  EmbeddingConfig plain = config;
  plain.pretrained = {};
  plain.pretrained_rows.clear();
  SequenceEmbedding f(plain);
  CHECK(f.token_projection->init_spec("weight").kind == nn::init::InitSpec::Kind::KaimingUniform);
}

TEST_CASE("bigram pairs: each token adds W [left row; right row] in both paths (one-pass and projected), the "
          "pre-trained rows come in at unit variance, a missing or misshapen pair tensor is an error") {
  for (std::int64_t embedding_dim : {0, 5}) {  // 0: the one-pass path; 5: the projected token table
    CAPTURE(embedding_dim);
    EmbeddingConfig config;
    config.vocab_size = 13, config.hidden = 6, config.max_length = 8, config.embedding_dim = embedding_dim;
    config.bigram_classes = 9, config.bigram_dim = 4;
    SequenceEmbedding e(config);
    e.reset_parameters(9);
    SequenceBatch batch = token_batch({3, 2}, config.vocab_size, 0);
    batch.token_bigrams = topo::testing::random_ids({5, 2}, config.bigram_classes, 21);
    const std::vector<std::int64_t> pairs = batch.token_bigrams.to_vector<std::int64_t>();
    const std::vector<float> table = e.bigrams->table->weight.data().to_vector<float>();
    const std::vector<float> w = e.bigrams->projection->weight.data().to_vector<float>();  // [hidden, 8]
    REQUIRE(w.size() == 6 * 8);
    // The rows without the pairs: the same embedding with the bigram table zeroed.
    const std::vector<float> got = e.forward(batch).data().to_vector<float>();
    e.bigrams->table->weight.set_data(Tensor::zeros({config.bigram_classes, 4}));
    const std::vector<float> plain = e.forward(batch).data().to_vector<float>();
    for (std::size_t t = 0; t < 5; ++t)
      for (std::size_t k = 0; k < 6; ++k) {
        double v = plain[t * 6 + k];
        for (std::size_t side = 0; side < 2; ++side)
          for (std::size_t j = 0; j < 4; ++j)
            v += double(w[k * 8 + side * 4 + j]) * table[static_cast<std::size_t>(pairs[t * 2 + side]) * 4 + j];
        CHECK(got[t * 6 + k] == doctest::Approx(v).epsilon(1e-5));
      }
    SequenceBatch missing = batch;
    missing.token_bigrams = Tensor();
    CHECK(topo::testing::error_of([&] { e.forward(missing); }).find("bigram") != std::string::npos);
    SequenceBatch flat = batch;
    flat.token_bigrams = batch.token_bigrams.reshape({10});
    CHECK(topo::testing::error_of([&] { e.forward(flat); }).find("bigram") != std::string::npos);
  }
  // Pre-trained pair vectors of rms 0.25 over half the rows: the projected pairs start at unit variance.
  EmbeddingConfig config;
  config.vocab_size = 13, config.hidden = 64, config.max_length = 8;
  config.bigram_classes = 400, config.bigram_dim = 32;
  config.bigram_pretrained = topo::random_normal({400, 32}, 0.f, 0.25f, 5);
  config.bigram_pretrained_rows.assign(400, 0);
  for (std::size_t r = 0; r < 400; r += 2) config.bigram_pretrained_rows[r] = 1;
  SequenceEmbedding e(config);
  e.reset_parameters(3);
  std::vector<std::int64_t> covered_pairs;
  for (std::int64_t r = 0; r < 400; r += 2) covered_pairs.push_back(r);
  const nn::Var rows = e.bigrams->table->forward(Tensor::from_vector(covered_pairs, {100, 2}).reshape({200}));
  const std::vector<float> p =
      e.bigrams->projection->forward(nn::reshape(rows, {100, 64})).data().to_vector<float>();  // [100, 64]
  double var = 0;
  for (float x : p) var += double(x) * x;
  CHECK(var / double(p.size()) == doctest::Approx(1.0).epsilon(0.2));
  CHECK(e.bigrams->table->weight.data().to_vector<float>()[0] ==
        config.bigram_pretrained.to_vector<float>()[0]);  // covered row 0 kept
  config.bigram_pretrained_rows.resize(10);
  CHECK(topo::testing::error_of([&] { SequenceEmbedding bad(config); }).find("bigram") != std::string::npos);
}

TEST_CASE("word dropout: in training a token reads the <unk> row where its draw of the generator's stream is below p, "
          "in evaluation never; both paths; bad settings are errors") {
  const std::vector<std::int64_t> lengths = {700, 1, 599, 300};  // 1,600 tokens
  for (std::int64_t embedding_dim : {0, 5}) {  // one pass, and the projected table
    CAPTURE(embedding_dim);
    EmbeddingConfig config;
    config.vocab_size = 40, config.hidden = 6, config.embedding_dim = embedding_dim, config.max_length = 700;
    config.case_classes = 3, config.word_dropout = 0.25f, config.unknown_id = 1;
    SequenceEmbedding e(config);
    e.reset_parameters(7);
    const SequenceBatch batch = token_batch(lengths, config.vocab_size, config.case_classes);
    const std::int64_t n = batch.num_tokens();

    e.eval();  // evaluation: the ids as given
    const std::vector<float> kept = e.forward(batch).data().to_vector<float>();
    // The ids a training pass must read: the stream's element offset + i below p -> unknown_id.
    nn::default_generator().set_seed(31);
    (void)nn::default_generator().advance(17);
    std::vector<std::int64_t> ids = batch.token_ids.to_vector<std::int64_t>();
    std::int64_t replaced = 0;
    for (std::int64_t i = 0; i < n; ++i)
      if (uniform_at(31, 17 + static_cast<std::uint64_t>(i)) < config.word_dropout) ids[i] = config.unknown_id, ++replaced;
    SequenceBatch dropped = batch;
    dropped.token_ids = Tensor::from_vector(ids, {n});
    const std::vector<float> want = e.forward(dropped).data().to_vector<float>();

    e.train();
    const std::vector<float> got = e.forward(batch).data().to_vector<float>();
    CHECK(nn::default_generator().offset() == 17 + static_cast<std::uint64_t>(n));  // one offset a token
    REQUIRE(got.size() == want.size());
    for (std::size_t k = 0; k < got.size(); ++k) CHECK(got[k] == want[k]);
    // About a quarter of the tokens (binomial: sd ~17 around 400), and the rows differ from evaluation's there.
    CHECK(replaced > 330);
    CHECK(replaced < 470);
    CHECK(got != kept);
  }
  EmbeddingConfig bad;
  bad.vocab_size = 10, bad.hidden = 4, bad.word_dropout = 1.f;
  CHECK_THROWS_WITH_AS(SequenceEmbedding{bad}, doctest::Contains("word_dropout must be in [0, 1)"), Error);
  bad.word_dropout = 0.1f, bad.unknown_id = 10;
  CHECK_THROWS_WITH_AS(SequenceEmbedding{bad}, doctest::Contains("unknown id 10 is outside the vocabulary"), Error);
  EmbeddingConfig features;
  features.input_dim = 3, features.hidden = 4, features.word_dropout = 0.1f;
  CHECK_THROWS_WITH_AS(SequenceEmbedding{features}, doctest::Contains("word dropout needs token ids"), Error);
}
