#include "models/encoder_config.hpp"

#include "models/registry.hpp"

namespace topo::models {

EncoderConfig encoder_config(const EncoderSpec& spec) {
  return {.vocab_size = spec.vocab_size, .input_dim = spec.input_dim, .hidden = spec.hidden, .heads = spec.heads,
          .layers = spec.layers, .max_length = spec.max_length, .dropout = spec.dropout, .pretrained = spec.pretrained,
          .freeze_pretrained = spec.freeze_pretrained, .pretrained_rows = spec.pretrained_rows,
          .trained_rows = spec.trained_rows,
          .embedding_dim = spec.embedding_dim, .case_classes = spec.case_classes,
          .char_classes = spec.char_classes, .char_filters = spec.char_filters, .suffix_classes = spec.suffix_classes,
          .bigram_classes = spec.bigram_classes, .bigram_dim = spec.bigram_dim,
          .bigram_pretrained = spec.bigram_pretrained, .bigram_pretrained_rows = spec.bigram_pretrained_rows,
          .word_dropout = spec.word_dropout};
}

}  // namespace topo::models
