#pragma once
// The BiG-Transformer (Shu et al.; ../shared/docs/models.md §3) over big_topology():
//   H^0 = char embedding (+ its projected bigram pairs, with bigram_classes) + sinusoidal position, dropout
//   layer l:  o_j = sum_{c in span j} h_c                          (gspmm copy_u / sum, char -> word)
//             s   = mean_i(H) W_s                                   (per sentence)
//             A   = MultiAtt(H, U_i = [words containing i; s])      (one softmax; keys, values from U_i)
//             H   = LN(H + drop(A));  H = LN(H + drop(FFN(H)))      (post-LN: PostLnBlock::finish)
//   readout: per-char states H (tagging), average pooling over chars (classification).
//
// Where the words come from (the design choice of issue #16): the encoder matches them itself. The task's
// vocabulary (id -> token string) reaches it through EncoderSpec::vocabulary; each id is spelled as code
// points once at construction, and every batch's token ids are matched against the lexicon trie
// (Lexicon::match_units: a word may span several tokens, so whitespace tokens work too). This keeps apps/
// free of models and of lexicons, keeps the registry's contract (a spec in, an encoder out), and makes a
// checkpoint self-describing: topo-eval rebuilds the same words from the saved vocabulary and the lexicon
// option. A caller with its own segmentation passes it instead, as the batch's node set "word" (spans per
// example, models/model.hpp), which then wins over the lexicon.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/big_transformer/lexicon.hpp"
#include "models/big_transformer/topology.hpp"
#include "models/blocks/post_ln_block.hpp"
#include "models/encoder_config.hpp"
#include "models/model.hpp"
#include "models/sequence_embedding.hpp"
#include "nn/attention.hpp"

namespace topo::models {

struct BigConfig {
  // Characters are token ids: vocab_size required, input_dim must stay 0; max_length sizes the sinusoid table;
  // pretrained: character vectors [vocab_size, embedding_dim or hidden] read as SequenceEmbedding reads token
  // vectors (pretrained_rows, freeze_pretrained; embedding_dim != hidden: projected to hidden);
  // case_classes must stay 0 (characters have no capitalisation); dropout: embedding output and both sublayers.
  EncoderConfig encoder{.hidden = 100, .heads = 4};
  std::int64_t ffn = 0;  // feed-forward width; 0 means 4 * hidden
  BigVariant variant = BigVariant::Full;
  std::shared_ptr<const Lexicon> lexicon = nullptr;  // full / no-global without batch spans: required
  std::vector<std::string> vocabulary = {};          // [vocab_size] token strings by id (lexicon matching)
  LexiconMatchOptions matching = {};
};

// Sinusoidal position encodings [max_length, dim]: PE[p, 2i] = sin(p / 10000^(2i/dim)), PE[p, 2i+1] = cos(...).
Tensor sinusoidal_positions(std::int64_t max_length, std::int64_t dim);

class BigTransformer : public SequenceEncoder {
 public:
  explicit BigTransformer(const BigConfig& config);
  Encoding encode(const SequenceBatch& batch) override;
  Encoding encode(const SequenceBatch& batch, const BigTopology& topology);
  std::int64_t hidden_size() const override { return config_.encoder.hidden; }
  const BigConfig& config() const { return config_; }

  // The words of every sentence: the batch's "word" node set when it has one, else lexicon matches of the
  // token ids (empty lists under no-local and radical, whose topology ignores them).
  std::vector<std::vector<builders::Span>> word_spans(const SequenceBatch& batch);
  // H^0: [total chars, hidden].
  nn::Var embed(const SequenceBatch& batch);
  // Sentences whose matches the cap (matching.max_words) cut, and the words it dropped, over the run so far.
  std::int64_t capped_sentences() const { return capped_sentences_; }
  std::int64_t dropped_words() const { return dropped_words_; }

  struct Layer : nn::Module {
    Layer(std::int64_t hidden, std::int64_t heads, std::int64_t ffn, float dropout);
    std::shared_ptr<PostLnBlock> block;    // attention, post-LN residuals, FFN
    std::shared_ptr<nn::Linear> sentence;  // W_s
  };
  std::shared_ptr<nn::Embedding> char_embedding;
  std::shared_ptr<nn::Linear> char_projection;  // [embedding_dim -> hidden]: character vectors of another width
  std::shared_ptr<BigramFeatures> bigrams;  // with bigram_classes > 0: each character's pairs, added to its embedding
  std::shared_ptr<nn::Dropout> dropout;
  std::shared_ptr<nn::ModuleList> layers;
  const Layer& layer(std::size_t i) const { return *layers->at<Layer>(i); }

 private:
  BigConfig config_;
  std::vector<std::u32string> spellings_;  // code points of every vocabulary id
  Tensor positions_;                       // sinusoid table, moved to the device of the first batch
  std::int64_t capped_sentences_ = 0, dropped_words_ = 0;
};

}  // namespace topo::models
