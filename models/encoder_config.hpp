#pragma once
// The settings every attention encoder here shares — its sizes, the task's inputs, dropout and pre-trained
// token vectors — in one struct that each model's config holds as its member `encoder` (StarConfig,
// TransformerConfig, MultiScaleConfig, BigConfig), beside that model's own switches.
//
// Why a member and not a base class: each model keeps its own defaults in one line
// (`EncoderConfig encoder{.hidden = 300, .heads = 6};`, a default member initializer; a base class would need
// a constructor per model), the configs stay aggregates, and every use reads `config.encoder.hidden` for a
// shared setting and `config.variant` for the model's own, so a reader sees which is which.
//
// A registration builds it from the run's spec with encoder_config(spec) (each field as the spec gives it);
// a model that cannot use a field (BiG: no features, no capitalisation) refuses a non-default value itself.
#include <cstdint>
#include <vector>

#include "kernels/tensor.hpp"
#include "models/sequence_embedding.hpp"

namespace topo::models {

struct EncoderSpec;  // models/registry.hpp

// The most layers and heads an encoder takes: far past any model that trains here, so that a typo fails at once,
// naming its field (topo-train's config, a topology file's per-layer heads), instead of building for minutes (a
// million layers ignored SIGTERM while it grew to 16 GiB) or failing in the allocator.
inline constexpr std::int64_t kMaxLayers = 1024, kMaxHeads = 4096;

struct EncoderConfig {
  std::int64_t vocab_size = 0;  // > 0: token ids through an embedding table
  std::int64_t input_dim = 0;   // > 0: continuous features through a linear projection (exactly one of the two)
  std::int64_t hidden = 100;    // the model's width, heads * head size
  std::int64_t heads = 10;
  std::int64_t layers = 2;
  std::int64_t max_length = 256;  // the longest sentence (position table size); a longer one is an error
  float dropout = 0.f;            // where each model applies it: see its config
  Tensor pretrained = {};         // optional token vectors [vocab_size, embedding_dim or hidden] (EmbeddingConfig)
  bool freeze_pretrained = false;
  std::vector<std::uint8_t> pretrained_rows = {};  // the rows of `pretrained` that hold vectors (empty: all)
  std::int64_t trained_rows = 0;                   // ids past it never occur in training (EmbeddingConfig)
  std::int64_t embedding_dim = 0;                  // token table width (0: hidden; else projected to hidden)
  std::int64_t case_classes = 0;                   // > 0: a capitalisation embedding added per token (tagging)
  std::int64_t char_classes = 0;                   // > 0 with char_filters: a character CNN per token (tagging)
  std::int64_t char_filters = 0;
  std::int64_t suffix_classes = 0;                 // > 0: a suffix embedding added per token (tagging)
  std::int64_t bigram_classes = 0;                 // > 0: bigram embeddings added per token (EmbeddingConfig)
  std::int64_t bigram_dim = 0;
  Tensor bigram_pretrained = {};
  std::vector<std::uint8_t> bigram_pretrained_rows = {};
  float word_dropout = 0.f;  // training: token ids replaced by <unk> (id 1) with this probability (EmbeddingConfig)

  // The input stage's share of it (SequenceEmbedding): everything but heads and layers.
  EmbeddingConfig embedding() const {
    // Designated: a field added to EmbeddingConfig cannot shift the others (most are int64 alike).
    return {.vocab_size = vocab_size, .input_dim = input_dim, .hidden = hidden, .max_length = max_length,
            .dropout = dropout, .pretrained = pretrained, .freeze_pretrained = freeze_pretrained,
            .pretrained_rows = pretrained_rows, .trained_rows = trained_rows, .embedding_dim = embedding_dim,
            .case_classes = case_classes, .char_classes = char_classes, .char_filters = char_filters,
            .suffix_classes = suffix_classes, .bigram_classes = bigram_classes, .bigram_dim = bigram_dim,
            .bigram_pretrained = bigram_pretrained, .bigram_pretrained_rows = bigram_pretrained_rows,
            .word_dropout = word_dropout};
  }
};

// The shared fields of a run's spec (its sizes, the task's inputs, dropout, pre-trained vectors): what every
// registration's factory starts its model's config from.
EncoderConfig encoder_config(const EncoderSpec& spec);

}  // namespace topo::models
