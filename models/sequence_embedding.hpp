#pragma once
// The input stage every sequence model here shares: token ids through an embedding table, or continuous
// features (masked summation) through a linear projection, plus a learned position embedding, then dropout.
#include <cstdint>
#include <memory>
#include <string_view>

#include "models/model.hpp"
#include "nn/layers.hpp"

namespace topo::models {

struct EmbeddingConfig {
  std::int64_t vocab_size = 0;  // > 0: token ids
  std::int64_t input_dim = 0;   // > 0: features (exactly one of the two)
  std::int64_t hidden = 100;
  std::int64_t max_length = 256;  // a longer sentence is an error naming its length
  float dropout = 0.f;
  // Optional pre-trained token vectors float32 [vocab_size, embedding_dim or hidden], and whether training
  // leaves the token table fixed (a projection, when there is one, still trains).
  Tensor pretrained;
  bool freeze_pretrained = false;
  // The rows of `pretrained` that hold vectors ([vocab_size], 1 = covered): the other rows keep the random
  // draw a table without vectors gets (reset_parameters redraws them and rewrites the covered ones). Empty:
  // the whole table is given and reset_parameters keeps it.
  std::vector<std::uint8_t> pretrained_rows;
  // In (0, vocab_size): ids from here on never occur in training (words only the vectors or the dev and test
  // files have); their rows sit in a frozen table outside the optimizer (nn::Embedding's tail). 0: one table.
  std::int64_t trained_rows = 0;
  // Width of the token table; 0: hidden. Otherwise a Linear [embedding_dim -> hidden] without bias follows
  // the look-up, so vectors of any width feed a model of any width and keep their geometry (a linear map),
  // and a frozen table still gets a trained map into the model.
  std::int64_t embedding_dim = 0;
  std::int64_t table_dim() const { return embedding_dim > 0 ? embedding_dim : hidden; }
  // > 0: an embedding [case_classes, hidden] of the batch's token_case ids is added to the token embedding
  // (tagging: capitalisation beside uncased word vectors). Its own table, not concatenated, so the width the
  // encoder sees stays hidden.
  std::int64_t case_classes = 0;
  // char_classes > 0 and char_filters > 0: a character CNN per token (Ma & Hovy 2016, the Star-Transformer's
  // "Char" rows) over the batch's token_chars: a width-3 convolution of the one-hot characters (so each of
  // its three offsets is a table [char_classes, char_filters]; a word's edges see no neighbour), tanh, the max
  // over the word's characters, then Linear [char_filters -> hidden] added to the token embedding.
  std::int64_t char_classes = 0;
  std::int64_t char_filters = 0;
  // > 0: an embedding [suffix_classes, hidden] of the batch's token_suffix ids is added, as case_classes.
  std::int64_t suffix_classes = 0;
  // > 0: bigram embeddings (Zhang & Yang 2018's character bigrams for Chinese tagging). Token t's two classes
  // in the batch's token_bigrams [tokens, 2] — its pair with the token before, then with the token after —
  // index one table [bigram_classes, bigram_dim]; the two rows side by side go through Linear [2 bigram_dim ->
  // hidden] (no bias) into the token's embedding, so the left and the right pair stay apart. bigram_pretrained
  // [bigram_classes, bigram_dim] (optional; bigram_pretrained_rows: its covered rows, the others keep their
  // random draw) initialises the table, which trains.
  std::int64_t bigram_classes = 0;
  std::int64_t bigram_dim = 0;  // 0: hidden
  Tensor bigram_pretrained;
  std::vector<std::uint8_t> bigram_pretrained_rows;
  // Word dropout (Dozat et al. 2017; fastNLP's drop_word): in training each token id is replaced by
  // unknown_id (the vocabulary's <unk>) with this probability before the look-up, so the <unk> row learns and
  // the model learns to tag from the case, character and suffix features, which still see the word. The draws
  // come from the default generator's uniform stream, as dropout's masks (a checkpoint resumes them). Needs
  // token ids.
  float word_dropout = 0.f;
  std::int64_t unknown_id = 1;
};

// The token table of `config` ([vocab_size, embedding_dim or hidden]; `owner` names the model in errors): the
// pre-trained vectors where given (their covered rows when pretrained_rows is set, the other rows drawn as a
// fresh table's), else a fresh N(0, 1) table. Shared by SequenceEmbedding and the models with their own input
// stage (BiG-Transformer's character table), so that vectors read the same way into every model.
std::shared_ptr<nn::Embedding> make_token_table(const EmbeddingConfig& config, std::string_view owner);
// The Linear [embedding_dim -> hidden] without bias after the token table when its width is not hidden (null
// when it is), initialised so that pre-trained vectors enter at unit variance (projection_init in the .cpp).
std::shared_ptr<nn::Linear> make_token_projection(const EmbeddingConfig& config);

// The bigram pairs of every token (EmbeddingConfig::bigram_classes > 0): [tokens, hidden] from the batch's
// token_bigrams. Shared by SequenceEmbedding and the models with their own input stage (BiG-Transformer).
class BigramFeatures : public nn::Module {
 public:
  explicit BigramFeatures(const EmbeddingConfig& config);
  nn::Var forward(const SequenceBatch& batch) const;

  std::shared_ptr<nn::Embedding> table;  // [bigram_classes, bigram_dim]
  std::shared_ptr<nn::Linear> projection;  // [2 bigram_dim -> hidden], no bias
};

class SequenceEmbedding : public nn::Module {
 public:
  explicit SequenceEmbedding(const EmbeddingConfig& config);
  // [total tokens, hidden].
  nn::Var forward(const SequenceBatch& batch) const;
  // With rows `lead` [c, hidden] before each sentence's tokens (a [CLS] row, Multi-Scale's): [total tokens +
  // c * sentences, hidden], sentence b's rows the c lead rows (the rows alone: no position) then its tokens.
  // Dropout covers every row, the lead rows too (as BERT's embeddings do).
  nn::Var forward(const SequenceBatch& batch, const nn::Var& lead) const;
  const EmbeddingConfig& config() const { return config_; }

  std::shared_ptr<nn::Embedding> token_embedding;  // when vocab_size > 0
  std::shared_ptr<nn::Linear> feature_projection;  // when input_dim > 0
  std::shared_ptr<nn::Linear> token_projection;    // when embedding_dim is neither 0 nor hidden
  std::shared_ptr<nn::Embedding> case_embedding;   // when case_classes > 0
  // When char_classes > 0: the convolution's offsets -1, 0, +1 ([char_classes, char_filters] each), its bias
  // [1, char_filters] (a one-row table, so one embedding_sum adds all four) and the projection to hidden.
  nn::Var char_before, char_at, char_after, char_bias;
  std::shared_ptr<nn::Linear> char_projection;
  std::shared_ptr<nn::Embedding> suffix_embedding;  // when suffix_classes > 0
  std::shared_ptr<BigramFeatures> bigrams;          // when bigram_classes > 0
  std::shared_ptr<nn::Embedding> position_embedding;
  std::shared_ptr<nn::Dropout> dropout;

 private:
  // [total tokens, hidden]: the character CNN's output per token (char_classes > 0).
  nn::Var char_features(const SequenceBatch& batch) const;
  // batch.token_ids flattened, with word dropout applied when training.
  Tensor token_ids(const SequenceBatch& batch) const;

  EmbeddingConfig config_;
};

// Position of every token within its sentence: int64 [total tokens].
Tensor positions_in_sentence(const std::vector<std::int64_t>& lengths, Device device = Device::cpu());

}  // namespace topo::models
