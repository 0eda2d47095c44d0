#include "models/sequence_embedding.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/dense/indexing.hpp"
#include "kernels/dense/random_math.hpp"
#include "nn/ops.hpp"
#include "nn/readout.hpp"

namespace topo::models {
namespace {

// The token projection's init. Pre-trained vectors enter at the scale of the tables trained from scratch: unit
// variance per coordinate, as the position table's N(0, 1) draw, so W ~ N(0, 1 / (rms^2 dim)) with rms the
// covered rows' root mean square. At PyTorch's default (U(+-1/sqrt(dim)): a third of unit variance for unit
// inputs) GloVe 6B 50-d (rms 0.65) came out at std 0.38 under positions of std 1, and Star sat at chance for
// five epochs and more on some seeds (MTL-16 health_personal_care, baby, dvd at seed 1: early-stopped at 49-59%).
// `pretrained` [rows, table_dim] (`covered`: its rows that hold vectors, empty: all) feeds a Linear of fan_in
// inputs (table_dim, or a multiple when rows are read side by side).
nn::init::InitSpec projection_init(const Tensor& pretrained, const std::vector<std::uint8_t>& covered,
                                   std::int64_t table_dim, std::int64_t fan_in) {
  if (!pretrained.defined()) return nn::init::InitSpec::kaiming_uniform(std::sqrt(5.f));  // Linear's default
  const std::vector<float> v = pretrained.to(Device::cpu()).to_vector<float>();
  const auto dim = static_cast<std::size_t>(table_dim);
  double sum = 0;
  std::size_t count = 0;
  for (std::size_t r = 0; r * dim < v.size(); ++r) {
    if (!covered.empty() && !covered[r]) continue;
    for (std::size_t k = 0; k < dim; ++k) sum += static_cast<double>(v[r * dim + k]) * v[r * dim + k];
    count += dim;
  }
  const double rms = count > 0 ? std::sqrt(sum / static_cast<double>(count)) : 0.0;
  if (!(rms > 1e-6)) return nn::init::InitSpec::kaiming_uniform(std::sqrt(5.f));  // no covered row, or all zero
  return nn::init::InitSpec::normal(0.f, static_cast<float>(1.0 / (rms * std::sqrt(static_cast<double>(fan_in)))));
}

}  // namespace

std::shared_ptr<nn::Embedding> make_token_table(const EmbeddingConfig& config, std::string_view owner) {
  const std::int64_t table_dim = config.table_dim();
  if (!config.pretrained.defined())
    return std::make_shared<nn::Embedding>(config.vocab_size, table_dim, false, config.trained_rows);
  TOPO_CHECK(config.vocab_size > 0 && config.pretrained.ndim() == 2 && config.pretrained.size(0) == config.vocab_size &&
                 config.pretrained.size(1) == table_dim,
             "{}: pre-trained vectors {} must be [vocab_size = {}, {} = {}]", owner, config.pretrained.str(),
             config.vocab_size, config.embedding_dim > 0 ? "embedding_dim" : "hidden", table_dim);
  if (config.pretrained_rows.empty()) {
    TOPO_CHECK(config.trained_rows == 0, "{}: trained_rows needs the covered rows (pretrained_rows)", owner);
    return nn::Embedding::from_pretrained(config.pretrained, config.freeze_pretrained);
  }
  return nn::Embedding::with_pretrained_rows(config.pretrained, config.pretrained_rows, config.freeze_pretrained,
                                             config.trained_rows);
}

std::shared_ptr<nn::Linear> make_token_projection(const EmbeddingConfig& config) {
  const std::int64_t table_dim = config.table_dim();
  if (table_dim == config.hidden) return nullptr;
  return std::make_shared<nn::Linear>(table_dim, config.hidden, false,
                                      projection_init(config.pretrained, config.pretrained_rows, table_dim, table_dim));
}

BigramFeatures::BigramFeatures(const EmbeddingConfig& config) {
  TOPO_CHECK(config.bigram_classes > 0 && config.bigram_dim >= 0 && config.vocab_size > 0,
             "bigram features: bigram_classes {} must be > 0, bigram_dim {} >= 0, and they need token ids (vocab_size {})",
             config.bigram_classes, config.bigram_dim, config.vocab_size);
  const std::int64_t dim = config.bigram_dim > 0 ? config.bigram_dim : config.hidden;
  if (config.bigram_pretrained.defined()) {
    TOPO_CHECK(config.bigram_pretrained.ndim() == 2 && config.bigram_pretrained.size(0) == config.bigram_classes &&
                   config.bigram_pretrained.size(1) == dim &&
                   (config.bigram_pretrained_rows.empty() ||
                    static_cast<std::int64_t>(config.bigram_pretrained_rows.size()) == config.bigram_classes),
               "bigram features: pre-trained bigram vectors {} must be [bigram_classes = {}, bigram_dim = {}] with a "
               "covered flag per row ({} given)",
               config.bigram_pretrained.str(), config.bigram_classes, dim, config.bigram_pretrained_rows.size());
    table = register_module("table", config.bigram_pretrained_rows.empty()
                                         ? nn::Embedding::from_pretrained(config.bigram_pretrained, false)
                                         : nn::Embedding::with_pretrained_rows(config.bigram_pretrained,
                                                                               config.bigram_pretrained_rows, false));
  } else {
    table = register_module("table", std::make_shared<nn::Embedding>(config.bigram_classes, dim));
  }
  projection = register_module(
      "projection", std::make_shared<nn::Linear>(
                        2 * dim, config.hidden, false,
                        projection_init(config.bigram_pretrained, config.bigram_pretrained_rows, dim, 2 * dim)));
}

nn::Var BigramFeatures::forward(const SequenceBatch& batch) const {
  const std::int64_t tokens = batch.num_tokens();
  const Tensor& ids = batch.token_bigrams;
  TOPO_CHECK(ids.defined() && ids.ndim() == 2 && ids.size(0) == tokens && ids.size(1) == 2,
             "this model reads two bigram classes per token; the batch has {} for {} tokens",
             ids.defined() ? ids.str() : std::string("none"), tokens);
  // [2 tokens, dim] with token t's left pair in row 2t and its right pair in row 2t + 1: as [tokens, 2 dim]
  // each row holds the two side by side.
  const nn::Var pairs = table->forward(ids.reshape({2 * tokens}));
  return projection->forward(nn::reshape(pairs, {tokens, 2 * pairs.size(1)}));
}

SequenceEmbedding::SequenceEmbedding(const EmbeddingConfig& config) : config_(config) {
  TOPO_CHECK((config.vocab_size > 0) != (config.input_dim > 0),
             "sequence embedding: set exactly one of vocab_size ({}) and input_dim ({})", config.vocab_size,
             config.input_dim);
  TOPO_CHECK(config.hidden > 0, "sequence embedding: hidden must be > 0, got {}", config.hidden);
  TOPO_CHECK(config.max_length >= 1, "sequence embedding: max_length must be >= 1, got {}", config.max_length);
  TOPO_CHECK(config.embedding_dim >= 0 && (config.embedding_dim == 0 || config.vocab_size > 0),
             "sequence embedding: embedding_dim {} needs token ids (vocab_size > 0)", config.embedding_dim);
  TOPO_CHECK(config.vocab_size > 0 || !config.pretrained.defined(),
             "sequence embedding: pre-trained vectors need token ids (vocab_size > 0)");
  if (config.vocab_size > 0)
    token_embedding = register_module("token", make_token_table(config, "sequence embedding"));
  else
    feature_projection = register_module("features", std::make_shared<nn::Linear>(config.input_dim, config.hidden));
  position_embedding = register_module("position", std::make_shared<nn::Embedding>(config.max_length, config.hidden));
  dropout = register_module("dropout", std::make_shared<nn::Dropout>(config.dropout));
  // Registered last so the other parameters keep their names and their reset seeds (registration order).
  if (auto projection = make_token_projection(config))
    token_projection = register_module("token_projection", projection);
  TOPO_CHECK(config.case_classes >= 0 && (config.case_classes == 0 || config.vocab_size > 0),
             "sequence embedding: case_classes {} needs token ids (vocab_size > 0)", config.case_classes);
  if (config.case_classes > 0)
    case_embedding = register_module("case", std::make_shared<nn::Embedding>(config.case_classes, config.hidden));
  TOPO_CHECK(config.char_classes >= 0 && config.char_filters >= 0 && config.suffix_classes >= 0 &&
                 (config.char_classes > 0) == (config.char_filters > 0),
             "sequence embedding: char_classes {} and char_filters {} must be both positive or both 0 (suffix_classes {})",
             config.char_classes, config.char_filters, config.suffix_classes);
  TOPO_CHECK((config.char_classes == 0 && config.suffix_classes == 0) || config.vocab_size > 0,
             "sequence embedding: character and suffix features need token ids (vocab_size > 0)");
  if (config.char_classes > 0) {
    // One-hot characters: each pre-activation sums three table entries, so +-0.25 starts it near std 0.25,
    // inside tanh's linear range.
    const Shape table{config.char_classes, config.char_filters};
    char_before = register_parameter("char_before", table, nn::init::InitSpec::uniform(-0.25f, 0.25f));
    char_at = register_parameter("char_at", table, nn::init::InitSpec::uniform(-0.25f, 0.25f));
    char_after = register_parameter("char_after", table, nn::init::InitSpec::uniform(-0.25f, 0.25f));
    char_bias = register_parameter("char_bias", {1, config.char_filters}, nn::init::InitSpec::zeros());
    char_projection = register_module("char_projection", std::make_shared<nn::Linear>(config.char_filters, config.hidden));
  }
  if (config.suffix_classes > 0)
    suffix_embedding = register_module("suffix", std::make_shared<nn::Embedding>(config.suffix_classes, config.hidden));
  TOPO_CHECK(config.bigram_classes >= 0, "sequence embedding: bigram_classes must be >= 0, got {}", config.bigram_classes);
  if (config.bigram_classes > 0) bigrams = register_module("bigrams", std::make_shared<BigramFeatures>(config));
  TOPO_CHECK(config.word_dropout >= 0.f && config.word_dropout < 1.f, "sequence embedding: word_dropout must be in [0, 1), got {}",
             config.word_dropout);
  TOPO_CHECK(config.word_dropout == 0.f || config.vocab_size > 0,
             "sequence embedding: word dropout needs token ids (vocab_size > 0); this model reads features");
  TOPO_CHECK(config.word_dropout == 0.f || (config.unknown_id >= 0 && config.unknown_id < config.vocab_size),
             "sequence embedding: word dropout's unknown id {} is outside the vocabulary [0, {})", config.unknown_id,
             config.vocab_size);
}

namespace {

// Where each output row comes from: row r holds token token_of[r] at position position_of[r] (lead_of[r] =
// kNoRow), or (the `leads` lead rows before each sentence's tokens) lead row k: token_of[r] = position_of[r] =
// kNoRow, lead_of[r] = k.
struct RowLayout {
  std::vector<std::int64_t> token_of, position_of, lead_of;
};
RowLayout row_layout(const std::vector<std::int64_t>& lengths, std::int64_t leads) {
  RowLayout l;
  std::int64_t token = 0;
  for (std::int64_t n : lengths) {
    for (std::int64_t k = 0; k < leads; ++k)
      l.token_of.push_back(kNoRow), l.position_of.push_back(kNoRow), l.lead_of.push_back(k);
    for (std::int64_t i = 0; i < n; ++i)
      l.token_of.push_back(token++), l.position_of.push_back(i), l.lead_of.push_back(kNoRow);
  }
  return l;
}

Tensor index_tensor(const std::vector<std::int64_t>& v, Device device) {
  return Tensor::from_vector(v, {static_cast<std::int64_t>(v.size())}, device);
}

// The layout's rows as picks from [per-token rows; the lead rows appended]: token t is row t, lead row k row
// `tokens` + k.
Tensor layout_picks(const RowLayout& l, std::int64_t tokens, Device device) {
  std::vector<std::int64_t> pick = l.token_of;
  for (std::size_t r = 0; r < pick.size(); ++r)
    if (pick[r] == kNoRow) pick[r] = tokens + l.lead_of[r];
  return index_tensor(pick, device);
}

// Per-token ids (token ids, case classes: [tokens], int32 or int64) laid out as the rows: kNoRow at lead rows.
Tensor ids_by_row(const Tensor& ids, const RowLayout& l, bool lead, Device device) {
  if (!lead) return ids;
  const Tensor none = ids.dtype() == DType::I32 ? Tensor::from_vector(std::vector<std::int32_t>{-1}, {1}, ids.device())
                                                : Tensor::from_vector(std::vector<std::int64_t>{kNoRow}, {1}, ids.device());
  std::vector<std::int64_t> pick = l.token_of;  // a lead row picks the appended `none`
  for (std::int64_t& t : pick)
    if (t == kNoRow) t = ids.numel();
  return index_select(concat({ids, none}, 0), index_tensor(pick, device));
}

}  // namespace

nn::Var SequenceEmbedding::char_features(const SequenceBatch& batch) const {
  const std::int64_t tokens = batch.num_tokens();
  TOPO_CHECK(batch.token_chars.defined() && static_cast<std::int64_t>(batch.chars_per_token.size()) == tokens,
             "this model reads each token's characters; the batch has {} for {} tokens",
             batch.token_chars.defined() ? std::to_string(batch.chars_per_token.size()) + " character counts"
                                         : std::string("none"),
             tokens);
  const std::vector<std::int64_t> chars = batch.token_chars.to(Device::cpu()).to_vector<std::int64_t>();
  std::vector<std::int64_t> before(chars.size(), kNoRow), after(chars.size(), kNoRow);
  std::size_t c = 0;
  for (std::int64_t count : batch.chars_per_token) {
    TOPO_CHECK(count >= 1, "a token with {} characters (each token needs at least one)", count);
    TOPO_CHECK(c + static_cast<std::size_t>(count) <= chars.size(), "the batch has {} characters, its counts sum past them",
               chars.size());
    for (std::int64_t i = 0; i < count; ++i, ++c) {
      TOPO_CHECK(chars[c] >= 0 && chars[c] < config_.char_classes, "character class {} is outside [0, {})", chars[c],
                 config_.char_classes);
      if (i > 0) before[c] = chars[c - 1];
      if (i + 1 < count) after[c] = chars[c + 1];
    }
  }
  TOPO_CHECK(c == chars.size(), "the batch has {} characters, its counts sum to {}", chars.size(), c);
  const Device device = char_at.device();
  // Window of character c: its left neighbour through char_before, itself through char_at, its right one
  // through char_after (kNoRow at a word's edges), plus the bias: [characters, char_filters].
  const nn::Var windows = nn::embedding_sum(
      {char_before, char_at, char_after, char_bias},
      {index_tensor(before, device), batch.token_chars.to(device), index_tensor(after, device),
       Tensor::zeros({static_cast<std::int64_t>(chars.size())}, DType::I64, device)});
  return char_projection->forward(nn::readout_nodes(nn::tanh(windows), batch.chars_per_token, nn::Readout::Max));
}

Tensor SequenceEmbedding::token_ids(const SequenceBatch& batch) const {
  const Tensor ids = batch.token_ids.reshape({batch.token_ids.numel()});
  if (!is_training() || config_.word_dropout == 0.f) return ids;
  // One uniform per token from the generator's stream (one offset each, as a dropout mask of that many
  // elements): a token whose draw is below p becomes <unk>.
  nn::Generator& gen = nn::default_generator();
  const std::uint64_t at = gen.advance(static_cast<std::uint64_t>(ids.numel()));
  const auto replace = [&](auto values) {
    for (std::size_t i = 0; i < values.size(); ++i)
      if (uniform_at(gen.seed(), at + i) < config_.word_dropout)
        values[i] = static_cast<typename decltype(values)::value_type>(config_.unknown_id);
    return Tensor::from_vector(values, {ids.numel()}, ids.device());
  };
  const Tensor host = ids.to(Device::cpu());
  return host.dtype() == DType::I32 ? replace(host.to_vector<std::int32_t>()) : replace(host.to_vector<std::int64_t>());
}

Tensor positions_in_sentence(const std::vector<std::int64_t>& lengths, Device device) {
  return index_tensor(row_layout(lengths, 0).position_of, device);
}

nn::Var SequenceEmbedding::forward(const SequenceBatch& batch) const { return forward(batch, nn::Var()); }

nn::Var SequenceEmbedding::forward(const SequenceBatch& batch, const nn::Var& lead) const {
  TOPO_CHECK(!batch.lengths.empty(), "sequence embedding: empty batch");
  const std::int64_t longest = *std::max_element(batch.lengths.begin(), batch.lengths.end());
  TOPO_CHECK(longest <= config_.max_length, "a sentence of length {} exceeds the model's max_length {}", longest,
             config_.max_length);
  const bool has_lead = lead.defined();
  TOPO_CHECK(!has_lead || (lead.ndim() == 2 && lead.size(0) >= 1 && lead.size(1) == config_.hidden),
             "sequence embedding: the lead rows must be [rows, {}], got {}", config_.hidden,
             has_lead ? lead.data().str() : std::string());
  const Device device = position_embedding->weight.device();
  const RowLayout layout = row_layout(batch.lengths, has_lead ? lead.size(0) : 0);
  if (token_embedding) {
    TOPO_CHECK(batch.token_ids.defined(), "this model reads token ids, the batch has none");
    TOPO_CHECK(batch.token_ids.numel() == batch.num_tokens(), "the batch has {} token ids for sentences of {} tokens",
               batch.token_ids.numel(), batch.num_tokens());
    if (case_embedding)
      TOPO_CHECK(batch.token_case.defined() && batch.token_case.ndim() == 1 &&
                     batch.token_case.size(0) == batch.token_ids.size(0),
                 "this model adds a per-token case class; the batch has {} for {} tokens",
                 batch.token_case.defined() ? batch.token_case.str() : std::string("none"), batch.token_ids.size(0));
    if (suffix_embedding)
      TOPO_CHECK(batch.token_suffix.defined() && batch.token_suffix.ndim() == 1 &&
                     batch.token_suffix.size(0) == batch.token_ids.size(0),
                 "this model adds a per-token suffix class; the batch has {} for {} tokens",
                 batch.token_suffix.defined() ? batch.token_suffix.str() : std::string("none"), batch.token_ids.size(0));
  }
  // Token ids straight into the hidden width: every table's rows summed in one pass (embedding_sum).
  if (token_embedding && !token_projection) {
    std::vector<nn::Var> tables{token_embedding->weight, position_embedding->weight};
    const auto [token_rows, tail_rows] =
        token_embedding->split_ids(ids_by_row(token_ids(batch), layout, has_lead, device), /*allow_no_row=*/true);
    std::vector<Tensor> ids{token_rows, index_tensor(layout.position_of, device)};
    if (tail_rows.defined()) {  // words training never reads (evaluation only): the frozen tail's rows
      tables.push_back(token_embedding->tail);
      ids.push_back(tail_rows);
    }
    if (case_embedding) {
      tables.push_back(case_embedding->weight);
      ids.push_back(ids_by_row(batch.token_case, layout, has_lead, device));
    }
    if (suffix_embedding) {
      tables.push_back(suffix_embedding->weight);
      ids.push_back(ids_by_row(batch.token_suffix, layout, has_lead, device));
    }
    if (char_projection) {  // token t's row of the CNN's output is "table" row t
      tables.push_back(char_features(batch));
      ids.push_back(index_tensor(layout.token_of, device));
    }
    if (bigrams) {  // the same for the projected bigram pairs
      tables.push_back(bigrams->forward(batch));
      ids.push_back(index_tensor(layout.token_of, device));
    }
    if (has_lead) {
      tables.push_back(lead);
      ids.push_back(index_tensor(layout.lead_of, device));
    }
    return dropout->forward(nn::embedding_sum(tables, ids));
  }
  nn::Var tokens;
  if (token_embedding) {
    tokens = token_projection->forward(token_embedding->forward(token_ids(batch)));  // [tokens, hidden]
    if (case_embedding) tokens = tokens + case_embedding->forward(batch.token_case);
    if (suffix_embedding) tokens = tokens + suffix_embedding->forward(batch.token_suffix);
    if (char_projection) tokens = tokens + char_features(batch);
    if (bigrams) tokens = tokens + bigrams->forward(batch);
  } else {
    TOPO_CHECK(batch.features.defined() && batch.features.ndim() == 2 && batch.features.size(1) == config_.input_dim,
               "this model reads features [tokens, {}], the batch has {}", config_.input_dim,
               batch.features.defined() ? batch.features.str() : std::string("none"));
    tokens = feature_projection->forward(nn::Var(batch.features));
  }
  nn::Var rows = tokens + position_embedding->forward(positions_in_sentence(batch.lengths, tokens.device()));
  if (has_lead)  // the lead row appended, then every row picked in layout order
    rows = nn::index_select(nn::concat({rows, lead}, 0), layout_picks(layout, tokens.size(0), device));
  return dropout->forward(rows);
}

}  // namespace topo::models
