#include "models/big_transformer/big_transformer.hpp"

#include <algorithm>
#include <cmath>

#include "models/sequence_embedding.hpp"
#include "nn/readout.hpp"

namespace topo::models {

Tensor sinusoidal_positions(std::int64_t max_length, std::int64_t dim) {
  std::vector<float> table(static_cast<std::size_t>(max_length * dim));
  for (std::int64_t p = 0; p < max_length; ++p)
    for (std::int64_t i = 0; i < dim; i += 2) {
      const double angle = double(p) / std::pow(10000.0, double(i) / double(dim));
      table[static_cast<std::size_t>(p * dim + i)] = static_cast<float>(std::sin(angle));
      if (i + 1 < dim) table[static_cast<std::size_t>(p * dim + i + 1)] = static_cast<float>(std::cos(angle));
    }
  return Tensor::from_vector(table, {max_length, dim});
}

BigTransformer::Layer::Layer(std::int64_t hidden, std::int64_t heads, std::int64_t ffn, float p) {
  block = register_module("block", std::make_shared<PostLnBlock>(hidden, heads, ffn, p));
  sentence = register_module("sentence", std::make_shared<nn::Linear>(hidden, hidden));
}

BigTransformer::BigTransformer(const BigConfig& config) : config_(config) {
  const EncoderConfig& e = config.encoder;
  TOPO_CHECK(e.vocab_size > 0 && e.input_dim == 0,
             "BiG-Transformer reads characters as token ids (vocab_size {}), not features (input_dim {})",
             e.vocab_size, e.input_dim);
  TOPO_CHECK(e.heads > 0 && e.hidden % e.heads == 0, "BiG-Transformer: heads ({}) must divide hidden ({})", e.heads,
             e.hidden);
  TOPO_CHECK(e.layers >= 1, "BiG-Transformer: layers must be >= 1, got {}", e.layers);
  TOPO_CHECK(e.max_length >= 1, "BiG-Transformer: max_length must be >= 1, got {}", e.max_length);
  if (config_.ffn == 0) config_.ffn = 4 * e.hidden;
  if (!config_.lexicon) config_.lexicon = std::make_shared<const Lexicon>();  // only batch-given words
  TOPO_CHECK(config.vocabulary.empty() || static_cast<std::int64_t>(config.vocabulary.size()) == e.vocab_size,
             "BiG-Transformer: {} vocabulary strings for vocab_size {}", config.vocabulary.size(), e.vocab_size);
  spellings_.reserve(config.vocabulary.size());
  for (std::size_t id = 0; id < config.vocabulary.size(); ++id) {
    const auto cps = utf8_code_points(config.vocabulary[id], fmt::format("vocabulary id {}", id));
    spellings_.emplace_back(cps.begin(), cps.end());
  }
  const EmbeddingConfig embedding = e.embedding();  // the character table and the pairs read it as SequenceEmbedding
  char_embedding = register_module("char", make_token_table(embedding, "BiG-Transformer"));
  dropout = register_module("dropout", std::make_shared<nn::Dropout>(e.dropout));
  layers = register_module("layers", std::make_shared<nn::ModuleList>());
  for (std::int64_t l = 0; l < e.layers; ++l)
    layers->push_back(std::make_shared<Layer>(e.hidden, e.heads, config_.ffn, e.dropout));
  positions_ = sinusoidal_positions(e.max_length, e.hidden);
  TOPO_CHECK(e.bigram_classes >= 0, "BiG-Transformer: bigram_classes must be >= 0, got {}", e.bigram_classes);
  if (e.bigram_classes > 0) bigrams = register_module("bigrams", std::make_shared<BigramFeatures>(embedding));
  // Registered last, so that the checkpoints of models without it keep their names and reset seeds.
  if (auto projection = make_token_projection(embedding))
    char_projection = register_module("char_projection", projection);
}

std::vector<std::vector<builders::Span>> BigTransformer::word_spans(const SequenceBatch& batch) {
  std::vector<std::vector<builders::Span>> spans(batch.lengths.size());
  const auto given = batch.node_sets.find("word");
  if (given != batch.node_sets.end()) {  // the caller's own words
    batch.validate();
    const NodeSet& words = given->second;
    TOPO_CHECK(words.spans.defined(), "BiG-Transformer: the batch's node set 'word' carries no spans");
    const auto flat = words.spans.to(Device::cpu()).to_vector<std::int64_t>();
    const auto offsets = words.offsets();
    for (std::size_t b = 0; b < spans.size(); ++b)
      for (std::int64_t w = offsets[b]; w < offsets[b + 1]; ++w)
        spans[b].push_back({flat[static_cast<std::size_t>(2 * w)], flat[static_cast<std::size_t>(2 * w + 1)]});
    return spans;
  }
  if (!uses_lexicon(config_.variant)) return spans;
  TOPO_CHECK(!spellings_.empty(),
             "BiG-Transformer: no vocabulary strings to match the lexicon on; give the batch a 'word' node set");
  TOPO_CHECK(batch.token_ids.defined(), "BiG-Transformer reads token ids, the batch has none");
  const auto ids = batch.token_ids.to(Device::cpu()).to_vector<std::int64_t>();
  std::size_t start = 0;
  for (std::size_t b = 0; b < spans.size(); ++b) {
    const std::int64_t* sentence = ids.data() + start;
    // Unit i spells the code points of its token; a token without text (padding) ends every word.
    const LexiconMatch m = config_.lexicon->match_units(
        batch.lengths[b],
        [&](std::int64_t i, std::int32_t node) {
          const std::u32string& spelling = spellings_.at(static_cast<std::size_t>(sentence[i]));
          if (spelling.empty()) return Lexicon::kNoNode;
          for (char32_t c : spelling)
            if ((node = config_.lexicon->child(node, c)) == Lexicon::kNoNode) break;
          return node;
        },
        config_.matching);
    if (m.dropped > 0) {
      if (capped_sentences_ == 0)
        fmt::print(stderr, "BiG-Transformer: a sentence of {} characters has {} lexicon words; max_words = {} keeps the "
                           "first {} (further caps are counted: capped_sentences / dropped_words)\n",
                   batch.lengths[b], m.spans.size() + static_cast<std::size_t>(m.dropped), config_.matching.max_words,
                   m.spans.size());
      ++capped_sentences_;
      dropped_words_ += m.dropped;
    }
    spans[b] = m.spans;
    start += static_cast<std::size_t>(batch.lengths[b]);
  }
  return spans;
}

nn::Var BigTransformer::embed(const SequenceBatch& batch) {
  TOPO_CHECK(!batch.lengths.empty(), "BiG-Transformer: empty batch");
  TOPO_CHECK(batch.token_ids.defined(), "BiG-Transformer reads token ids, the batch has none");
  const std::int64_t longest = *std::max_element(batch.lengths.begin(), batch.lengths.end());
  TOPO_CHECK(longest <= config_.encoder.max_length, "a sentence of length {} exceeds the model's max_length {}",
             longest, config_.encoder.max_length);
  nn::Var chars = char_embedding->forward(batch.token_ids);      // [N, embedding_dim or hidden]
  if (char_projection) chars = char_projection->forward(chars);  // [N, hidden]
  if (bigrams) chars = chars + bigrams->forward(batch);
  if (!(positions_.device() == chars.device())) positions_ = positions_.to(chars.device());
  const nn::Var positions = nn::index_select(nn::Var(positions_), positions_in_sentence(batch.lengths, chars.device()));
  return dropout->forward(chars + positions);
}

Encoding BigTransformer::encode(const SequenceBatch& batch) {
  return encode(batch, big_topology(batch.lengths, word_spans(batch), config_.variant, parameters().front().device()));
}

Encoding BigTransformer::encode(const SequenceBatch& batch, const BigTopology& topology) {
  TOPO_CHECK(topology.lengths == batch.lengths, "BiG-Transformer: topology built for other sentence lengths");
  nn::Var h = embed(batch);
  for (std::size_t l = 0; l < layers->size(); ++l) {
    const Layer& layer = this->layer(l);
    nn::NodeStates sources;
    if (topology.has_words)  // o_j = sum of the current states of its characters: [words, hidden]
      sources["word"] = nn::gspmm(topology.word_sum, MessageOp::CopyU, SpmmReduce::Sum, h, nn::Var());
    if (topology.has_sentence)  // s = mean(H) W_s: [sentences, hidden]
      sources["sent"] = layer.sentence->forward(nn::readout_nodes(h, batch.lengths, nn::Readout::Mean));
    h = layer.block->finish(h, layer.block->attention->forward(topology.chars, h, sources));
  }
  return Encoding{h, nn::readout_nodes(h, batch.lengths, nn::Readout::Mean)};
}

}  // namespace topo::models
