// The Transformer baseline as `--model transformer`: its attention path switch and its working recipe.
#include "models/registry.hpp"
#include "models/transformer/transformer.hpp"

namespace topo::models {

ModelRegistration transformer_registration() {
  ModelRegistration m;
  m.name = "transformer";
  m.summary = "Transformer baseline: full attention per sentence (dense: fused kernel, graph: sparse kernels)";
  m.options = {
      {"attention", "graph",
       "Transformer attention: graph (full graph, sparse kernels) | dense (fused dense kernel) | padded (padded "
       "batched GEMMs, the former dense path)",
       {"graph", "dense", "padded"}},
  };
  m.make = [](const EncoderSpec& spec) {
    TransformerConfig config{.encoder = encoder_config(spec)};
    const std::string attention = spec.option<std::string>("attention");
    config.dense = attention != "graph";
    config.padded = attention == "padded";
    return std::make_shared<Transformer>(config);
  };
  // Text classification, docs/results.md: the post-LN Transformer stays at chance without warm-up, so it
  // has a lower lr, larger batches and a longer warm-up than Star; the dense path is the usual implementation.
  // Its lr is width 100's: wider, the weights whose fan-in grows learn at lr x 100 / hidden (lr_base_width, as
  // Star's; at width 300 on four MTL-16 domains, one seed: dev 77.0 -> 78.3, docs/results.md). Reviews are cut at
  // 1024 tokens, as Star's and Multi-Scale's: with MTL-16's in-domain vectors, three seeds, dev 83.94 -> 84.39
  // (+0.31, +0.63, +0.40), at 1.2-1.4x the time (docs/results.md, "Multi-Scale's sentence feature"); with GloVe
  // alone it had been +0.33 over two seeds, one of them level.
  m.recipes["classify"] = {{"attention", "dense"}, {"max_len", 1024}, {"min_freq", 2},      {"layers", 2},
                           {"hidden", 100},        {"heads", 4},      {"head_hidden", 100}, {"dropout", 0.3},
                           {"epochs", 15},         {"patience", 6},   {"batch", 32},        {"lr", 5e-4},
                           {"clip", 5.0},          {"warmup", 200},   {"lr_base_width", 100}};
  // Sequence labelling: as classify (post-LN needs the lower lr and the warm-up), with lowercased words, the
  // capitalisation feature, and Star's CRF and character features (CoNLL-2003 dev F1 82.84 -> 91.01 with them,
  // three seeds; docs/results.md, "Star's tagging recipe"). At the paper's width 300 (4 heads of 75), its lr
  // scaled per fan-in as Star's (lr_base_width): CoNLL-2003 dev 91.23 -> 92.29 and EWT 93.33 -> 94.38, three seeds
  // each, at 4.5-4.8x the time (CoNLL: 92 -> 440 s a run on one thread; docs/results.md, "The Transformer and
  // Multi-Scale at width 300"). 30 epochs with the lr on a cosine to 0 and no early stop, as Star's: CoNLL-2003
  // dev 92.29 -> 92.83 and test 86.72 -> 87.77, three seeds each (docs/results.md, "Star's tagging recipe on a
  // cosine schedule"), at 3.3x the time. Word dropout 0.1 (with --vectors only), as Star's: CoNLL-2003 dev 92.83 ->
  // 93.07, test 87.77 -> 88.04, three seeds, every seed's dev higher (docs/results.md, "Word dropout for Star's tagger").
  // IOB chunks predicted as BIOES (tag_scheme auto), as the other taggers: CoNLL-2003 dev 93.07 -> 93.37 (two of
  // three seeds higher), test 88.04 -> 88.48, at no cost in time (docs/results.md, "BIOES chunks for the taggers").
  m.recipes["tag"] = {{"tag_scheme", "auto"}, {"attention", "dense"}, {"lowercase", true}, {"case_feature", true},
                      {"crf", true}, {"char_filters", 50}, {"suffix_feature", true}, {"max_len", 256},
                      {"min_freq", 2}, {"layers", 2}, {"hidden", 300}, {"heads", 4}, {"head_hidden", 300},
                      {"dropout", 0.3}, {"epochs", 30}, {"schedule", "cosine"}, {"min_steps", 3000},
                      {"patience", 0}, {"batch", 32},
                      {"lr", 5e-4}, {"clip", 5.0}, {"warmup", 200}, {"lr_base_width", 100}, {"word_dropout", 0.1}};
  // Natural language inference (SNLI): Star's nli recipe on the fused dense kernel (docs/results.md: 70.6% dev
  // after 6 epochs of the shared 93k pairs, 756 s on 2 cores under load).
  m.recipes["nli"] = {{"attention", "dense"}, {"max_len", 64}, {"min_freq", 1}, {"layers", 2}, {"hidden", 100},
                      {"heads", 4}, {"head_hidden", 100}, {"dropout", 0.1}, {"epochs", 6}, {"patience", 3},
                      {"batch", 64}, {"lr", 1e-3}, {"clip", 5.0}, {"warmup", 200}};
  return m;
}

}  // namespace topo::models
