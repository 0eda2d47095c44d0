// The BiG-Transformer as `--model big`: its variant, its lexicon and matching options, and its recipe.
#include <filesystem>

#include "models/big_transformer/big_transformer.hpp"
#include "models/registry.hpp"

namespace topo::models {
namespace {

// The lexicon option's file: the given path, or (empty) jieba's dictionary where this machine has it: the
// Debian package python3-jieba, else the shared data folder beside the checkout (models/CMakeLists.txt).
std::string lexicon_path(const std::string& given) {
  if (!given.empty()) return given;
  const std::vector<std::string> candidates = {"/usr/lib/python3/dist-packages/jieba/dict.txt",
                                               TOPO_SHARED_DATA_DIR "/zh_lexicon/dict.txt"};
  for (const std::string& path : candidates)
    if (std::filesystem::exists(path)) return path;
  fail("BiG-Transformer: no lexicon given (--lexicon FILE) and jieba's dictionary is in none of: {}",
       fmt::join(candidates, ", "));
}

}  // namespace

ModelRegistration big_transformer_registration() {
  ModelRegistration m;
  m.name = "big";
  m.summary = "BiG-Transformer (Shu et al.): characters attend over the lexicon words containing them + a sentence node";
  m.reads_features = false;
  m.options = {
      {"variant", "full", "BiG-Transformer ablation: full | no-global | no-local | radical",
       {"full", "no-global", "no-local", "radical"}},
      {"lexicon", "", "BiG: word list, 'WORD [FREQ [POS]]' per line (empty: jieba's dict.txt)", {}},
      {"lexicon_single_chars", false, "BiG: single-character lexicon words become word nodes too", {}},
      {"max_words", 400, "BiG: at most this many lexicon words per sentence (0: no cap; capping is reported)", {}},
  };
  m.make = [](const EncoderSpec& spec) {
    BigConfig config{.encoder = encoder_config(spec)};
    TOPO_CHECK(config.encoder.case_classes == 0,
               "BiG-Transformer reads characters: it takes no capitalisation feature (tag with --case-feature=false)");
    TOPO_CHECK(config.encoder.char_classes == 0 && config.encoder.suffix_classes == 0,
               "BiG-Transformer reads characters as its tokens: it takes no character CNN or suffix feature (tag "
               "with --char-filters 0 --suffix-feature=false)");
    TOPO_CHECK(spec.word_dropout == 0.f,
               "BiG-Transformer reads characters through its own input stage: it takes no word dropout (train with "
               "--word-dropout 0)");
    config.variant = parse_big_variant(spec.option<std::string>("variant"));
    config.vocabulary = spec.vocabulary;
    config.matching.single_units = spec.option<bool>("lexicon_single_chars");
    config.matching.max_words = spec.option<std::int64_t>("max_words");
    TOPO_CHECK(config.matching.max_words >= 0, "max_words must be >= 0, got {}", config.matching.max_words);
    if (uses_lexicon(config.variant))
      config.lexicon = std::make_shared<const Lexicon>(Lexicon::load(lexicon_path(spec.option<std::string>("lexicon"))));
    return std::make_shared<BigTransformer>(config);
  };
  // Text classification on characters (ChnSentiCorp): the paper's 6 heads at width 96 (random init, no
  // pre-trained character vectors here), post-LN with warm-up as the Transformer baseline.
  m.recipes["classify"] = {{"tokenize", "char"}, {"max_len", 256}, {"min_freq", 2},     {"layers", 2},
                           {"hidden", 96},       {"heads", 6},     {"head_hidden", 96}, {"dropout", 0.2},
                           {"epochs", 6},        {"patience", 3},  {"batch", 32},       {"lr", 7e-4},
                           {"clip", 5.0},        {"warmup", 200}};
  // Character tagging (Resume, Weibo NER): no capitalisation feature (characters), the classify recipe's sizes,
  // and a CRF (docs/results.md, "Star's tagging recipe": Resume dev F1 60.75 -> 91.65 with it, three seeds).
  // IOB chunks predicted as BIOES (tag_scheme auto; Resume's BMES as it is): Weibo dev 54.83 -> 57.51, test
  // 48.18 -> 50.77, three seeds, every seed higher (docs/results.md, "BIOES chunks for the taggers").
  m.recipes["tag"] = {{"tag_scheme", "auto"}, {"case_feature", false}, {"crf", true}, {"max_len", 256},
                      {"min_freq", 2}, {"layers", 2}, {"hidden", 96},
                      {"heads", 6}, {"head_hidden", 96}, {"dropout", 0.2}, {"epochs", 10}, {"min_steps", 3000},
                      {"patience", 4}, {"batch", 32}, {"lr", 7e-4}, {"clip", 5.0}, {"warmup", 200}};
  return m;
}

}  // namespace topo::models
