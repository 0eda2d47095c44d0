#include "apps/tasks/tag/tag.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <tuple>
#include <utility>

#include "apps/tasks/classify/classify.hpp"
#include "apps/tasks/task_vectors.hpp"
#include "apps/text/batching.hpp"
#include "kernels/error.hpp"
#include "models/big_transformer/lexicon.hpp"
#include "nn/json_number.hpp"
#include "nn/ops.hpp"

namespace topo::apps {
namespace {

std::vector<std::vector<std::string>> tags_of(const text::TaggedDataset& d) {
  std::vector<std::vector<std::string>> out;
  out.reserve(d.sentences.size());
  for (const auto& s : d.sentences) out.push_back(s.tags);
  return out;
}

// The words the vocabulary sees (lowercased with `lowercase`).
std::string word_form(const std::string& token, bool lowercase) {
  std::string w = token;
  if (lowercase) text::ascii_lower(w);
  return w;
}

// The last `n` characters of a UTF-8 word (the whole word when it is shorter).
std::string last_characters(const std::string& word, int n) {
  std::size_t i = word.size();
  for (int seen = 0; i > 0 && seen < n;)
    if ((static_cast<unsigned char>(word[--i]) & 0xC0) != 0x80) ++seen;  // not a continuation byte
  return word.substr(i);
}
constexpr int kSuffixLength = 3;
// A character or suffix needs this many training occurrences for a class of its own, so that the shared
// class 0 (the rare and unseen ones) is trained too.
constexpr std::int64_t kMinCharCount = 2;

nlohmann::json tagged_stats_json(const text::TaggedReadStats& s) {
  nlohmann::json j = read_stats_json(s.read);
  j["sentences"] = s.read.examples;
  j["tokens"] = s.tokens;
  j["documents"] = s.documents;
  j["skipped_lines"] = s.skipped_lines;
  return j;
}

// The 1-based line of tag i of sentence s.
std::int64_t tag_line(const text::TaggedSentence& s, std::size_t i) {
  return i < s.lines.size() ? s.lines[i] : s.line + static_cast<std::int64_t>(i);
}

// Every tag of `d` in `scheme` (tag_in_scheme): a prefix the scheme lacks (Q-PER in a BIO file) is an error
// naming the file and line, not a class of its own.
void check_tag_prefixes(const text::TaggedDataset& d, text::TagScheme scheme) {
  for (const text::TaggedSentence& s : d.sentences)
    for (std::size_t i = 0; i < s.tags.size(); ++i)
      if (!text::tag_in_scheme(s.tags[i], scheme))
        fail("{}:{}: tag '{}' is not a {} tag (prefixes {}, or O); if the column holds free-form tags "
             "(POS-style), train with --tag-scheme none",
             d.path, tag_line(s, i), s.tags[i], text::tag_scheme_name(scheme), text::scheme_prefixes(scheme));
}

// detect_tag_scheme reads a file as free-form (scheme none) as soon as one tag other than O has no type ("42",
// "I-"). Beside chunk tags (B-X, I-X, E-X, S-X, M-X) such a tag is a slip, not a POS column: read as none, the
// run trained a whole epoch and then failed converting its predictions to the dev file's chunk scheme, naming
// no line. So a file that mixes them is refused here with the first bare tag's line; --tag-scheme none (which
// skips this detection) still reads any mix as free-form classes.
text::TagScheme detect_file_scheme(const text::TaggedDataset& d) {
  const text::TagScheme scheme = text::detect_tag_scheme(tags_of(d));
  if (scheme != text::TagScheme::None) return scheme;
  // The first tag for which `is` holds: its line and text ({0, ""}: none).
  const auto first = [&](auto is) -> std::pair<std::int64_t, std::string> {
    for (const text::TaggedSentence& s : d.sentences)
      for (std::size_t i = 0; i < s.tags.size(); ++i)
        if (is(s.tags[i])) return {tag_line(s, i), s.tags[i]};
    return {0, ""};
  };
  const auto [chunk_line, chunk] = first([](const std::string& tag) {
    return !text::split_tag(tag).type.empty() && text::tag_in_scheme(tag, text::TagScheme::BIOES);
  });
  if (chunk_line == 0) return scheme;  // no chunk tag at all: a POS-style column
  const auto [line, tag] = first([](const std::string& t) { return t != "O" && text::split_tag(t).type.empty(); });
  fail("{}:{}: tag '{}' is not a chunk tag (expected O, or a prefix B, I, E, S or M, '-' and a type, as "
       "line {}'s '{}'); if the column holds free-form tags (POS-style), train with --tag-scheme none",
       d.path, line, tag, chunk_line, chunk);
}

text::TagScheme model_scheme(const std::string& name, text::TagScheme file_scheme) {
  if (name == "file") return file_scheme;
  // auto: chunks as BIOES, which marks each chunk's last token and single-token chunks (Ratinov & Roth 2009);
  // BMES already does, and free-form tags have no chunks.
  if (name == "auto")
    return file_scheme == text::TagScheme::IOB1 || file_scheme == text::TagScheme::IOB2 ? text::TagScheme::BIOES
                                                                                         : file_scheme;
  if (name == "none") return text::TagScheme::None;  // free-form tags, whatever their spelling
  const text::TagScheme s = text::parse_tag_scheme(name);
  TOPO_CHECK((s == text::TagScheme::None) == (file_scheme == text::TagScheme::None),
             "tag scheme '{}' does not fit the data's tags (scheme '{}')", name, text::tag_scheme_name(file_scheme));
  return s;
}

}  // namespace

SequenceTagging::SequenceTagging(const TagOptions& options) : options_(options) {
  TOPO_CHECK(options.max_length > 0, "tag: max_length must be > 0");
  TOPO_CHECK(options.eval_batch > 0, "tag: eval_batch must be > 0");
  TOPO_CHECK(options.document_context >= 0, "tag: document_context must be >= 0, got {}", options.document_context);
  format_ = options.format.empty() ? text::guess_tag_format(options.train) : text::parse_tag_format(options.format);
  options_.format = text::tag_format_name(format_);
  TOPO_CHECK(!options.read.xpos || format_ == text::TagFormat::Conllu, "tag: xpos applies only to conllu files");
  data_[0] = text::read_tagged(format_, options.train, options.read);
  data_[1] = text::read_tagged(format_, options.dev, options.read);
  if (!options.test.empty()) data_[2] = text::read_tagged(format_, options.test, options.read);
  TOPO_CHECK(!data_[0].sentences.empty(), "tag: '{}' holds no sentences", options.train);
  TOPO_CHECK(!data_[1].sentences.empty(), "tag: '{}' holds no sentences", options.dev);
  // --tag-scheme none: the tags are free-form classes (POS-style), whatever their spelling.
  file_scheme_ = options.scheme == "none" ? text::TagScheme::None : detect_file_scheme(data_[0]);
  scheme_ = model_scheme(options.scheme, file_scheme_);

  text::Dataset words;  // the training words as the vocabulary builder reads them
  words.path = options.train;
  std::map<std::string, std::int64_t> tag_counts;
  for (const auto& s : data_[0].sentences) {
    text::Example e;
    for (const auto& t : s.tokens) e.tokens.push_back(word_form(t, options.lowercase));
    words.examples.push_back(std::move(e));
    for (const auto& t : text::convert_tags(s.tags, file_scheme_, scheme_)) ++tag_counts[t];
  }
  vocab_ = text::Vocabulary::build({&words}, options.min_freq);
  ExtendedVocabulary with_vectors;  // the vocabulary and its vectors, read once (with --vectors)
  const bool extend = !options.vectors.empty() && options.vectors_vocabulary != "train";
  if (extend) {
    // By default ("data") the words the vectors know join the vocabulary whatever their training count, those
    // of the dev and test files included (their text only, never their tags): a word unseen in training still
    // gets its pre-trained vector instead of <unk> (as Lample et al. 2016 and the Star-Transformer's tagger do).
    std::vector<std::string> candidates;
    for (const text::TaggedDataset& d : data_)
      for (const auto& s : d.sentences)
        for (const auto& t : s.tokens) {
          std::string w = word_form(t, options.lowercase);
          if (!vocab_.contains(w)) candidates.push_back(std::move(w));
        }
    with_vectors = vocabulary_with_vectors(vocab_, std::move(candidates), options.vectors_vocabulary, options.vectors,
                                           options.vector_options);
    vocab_ = with_vectors.vocab;
  }
  std::vector<std::string> names;
  for (const auto& [tag, count] : tag_counts) names.push_back(tag);
  labels_ = text::LabelSet(names);
  TOPO_CHECK(labels_.size() >= 2, "tag: '{}' has a single tag '{}'; nothing to learn", options.train, names.front());
  majority_tag_ = std::max_element(tag_counts.begin(), tag_counts.end(),
                                   [](const auto& a, const auto& b) { return a.second < b.second; })
                      ->first;
  TOPO_CHECK(options.char_filters >= 0, "tag: char_filters must be >= 0, got {}", options.char_filters);
  TOPO_CHECK(options.bigram_vectors.empty() || options.bigram_feature,
             "tag: bigram vectors '{}' need the bigram feature (--bigram-feature)", options.bigram_vectors);
  build_char_classes_();
  build_bigram_classes_();
  for (Split s : {Split::Train, Split::Dev, Split::Test}) encode_(s);
  if (extend) {
    use_vectors(task_vectors(with_vectors.vectors, options.vectors, options.vector_options, vocab_,
                             split_(Split::Train).ids),
                options.freeze_vectors);
    vectors_.report["vocabulary_added"] = with_vectors.added;
    // The words training never reads (dev's, test's, the vector file's) stay out of the optimizer.
    trained_rows_ = trained_rows_of(vocab_.size(), {&split_(Split::Train).ids});
  } else if (!options.vectors.empty()) {
    load_vectors(options.vectors, options.vector_options, split_(Split::Train).ids, options.freeze_vectors);
  }
}

void SequenceTagging::build_char_classes_() {
  std::map<char32_t, std::int64_t> char_counts;
  std::map<std::string, std::int64_t> suffix_counts;
  const text::TaggedDataset& train = data_[0];
  for (const auto& s : train.sentences)
    for (const auto& t : s.tokens) {
      if (options_.char_filters > 0) {
        const std::vector<char32_t> code_points = models::utf8_code_points(t, train.path);
        const std::size_t read = std::min(code_points.size(), kMaxWordCharacters);  // what encode_ keeps
        for (std::size_t k = 0; k < read; ++k) ++char_counts[code_points[k]];
      }
      if (options_.suffix_feature) ++suffix_counts[last_characters(word_form(t, true), kSuffixLength)];
    }
  chars_.clear();
  suffixes_.clear();
  for (const auto& [c, n] : char_counts)
    if (n >= kMinCharCount) chars_.push_back(static_cast<std::int64_t>(c));
  for (const auto& [suffix, n] : suffix_counts)
    if (n >= kMinCharCount) suffixes_.push_back(suffix);
}

std::pair<std::string, std::string> SequenceTagging::bigram_keys_(const std::vector<std::string>& tokens,
                                                                  std::size_t t) const {
  const std::string here = word_form(tokens[t], options_.lowercase);
  return {(t == 0 ? std::string("<s>") : word_form(tokens[t - 1], options_.lowercase)) + here,
          here + (t + 1 == tokens.size() ? std::string("</s>") : word_form(tokens[t + 1], options_.lowercase))};
}

void SequenceTagging::build_bigram_classes_() {
  bigrams_ = text::Vocabulary();
  if (!options_.bigram_feature) return;
  // Every pair occurrence once: each token's left pair, plus the sentence's last right pair.
  const auto pairs_of = [&](const text::TaggedSentence& s) {
    std::vector<std::string> out;
    for (std::size_t t = 0; t < s.tokens.size(); ++t) {
      auto [left, right] = bigram_keys_(s.tokens, t);
      out.push_back(std::move(left));
      if (t + 1 == s.tokens.size()) out.push_back(std::move(right));
    }
    return out;
  };
  text::Dataset train;
  train.path = options_.train;
  for (const auto& s : data_[0].sentences) {
    text::Example e;
    e.tokens = pairs_of(s);
    train.examples.push_back(std::move(e));
  }
  bigrams_ = text::Vocabulary::build({&train}, kMinCharCount);
  if (options_.bigram_vectors.empty()) return;
  std::vector<std::string> candidates;
  for (const text::TaggedDataset& d : data_)
    for (const auto& s : d.sentences)
      for (std::string& p : pairs_of(s))
        if (!bigrams_.contains(p)) candidates.push_back(std::move(p));
  text::WordVectorOptions read;  // exact look-up: a pair of characters has no case to fold
  read.bad_lines = options_.vector_options.bad_lines;
  const ExtendedVocabulary extended = extended_by_vectors(bigrams_, candidates, options_.bigram_vectors, read);
  bigrams_ = extended.vocab;
  std::vector<std::vector<std::int64_t>> train_ids;
  for (const auto& e : train.examples) train_ids.push_back(bigrams_.encode(e.tokens));
  bigram_vectors_ = task_vectors(extended.vectors, options_.bigram_vectors, read, bigrams_, train_ids);
  bigram_vectors_.report["vocabulary_added"] = extended.added;
  bigram_dim_ = bigram_vectors_.dim;
}

std::int64_t SequenceTagging::char_class_(char32_t c) const {
  const auto it = std::lower_bound(chars_.begin(), chars_.end(), static_cast<std::int64_t>(c));
  return it != chars_.end() && *it == static_cast<std::int64_t>(c) ? (it - chars_.begin()) + 1 : 0;
}

std::int64_t SequenceTagging::suffix_class_(const std::string& word) const {
  const std::string suffix = last_characters(word_form(word, true), kSuffixLength);
  const auto it = std::lower_bound(suffixes_.begin(), suffixes_.end(), suffix);
  return it != suffixes_.end() && *it == suffix ? (it - suffixes_.begin()) + 1 : 0;
}

void SequenceTagging::encode_(Split split) {
  const text::TaggedDataset& d = data_[static_cast<int>(split)];
  EncodedTagSplit out;
  // A dev/test file may be written in another scheme than training's (topo-eval): read its own.
  // A free-form model reads every file's tags as they are.
  const text::TagScheme file_scheme =
      split == Split::Train || d.sentences.empty() || scheme_ == text::TagScheme::None
          ? (scheme_ == text::TagScheme::None ? text::TagScheme::None : file_scheme_)
          : detect_file_scheme(d);
  check_tag_prefixes(d, file_scheme);
  TOPO_CHECK((file_scheme == text::TagScheme::None) == (scheme_ == text::TagScheme::None),
             "'{}': its tags (scheme '{}') are not of the model's kind (scheme '{}')", d.path,
             text::tag_scheme_name(file_scheme), text::tag_scheme_name(scheme_));
  std::vector<std::int64_t> lengths, documents;
  for (const text::TaggedSentence& s : d.sentences) {
    lengths.push_back(s.size());
    documents.push_back(s.document);
    // Canonical in the model's scheme (convert_tags): an annotation slip ("O I-PER" in a BIO file) reads as
    // conlleval reads it, so the CRF's constraints hold for every gold path and the scores are unchanged.
    out.gold.push_back(text::convert_tags(s.tags, file_scheme, scheme_));
  }
  for (text::Piece& piece : text::plan_tag_pieces(lengths, documents, options_.max_length, options_.document_context)) {
    std::vector<std::int64_t> ids, cases, tags, chars, char_counts, suffixes, bigrams;
    for (const text::PieceSpan& span : piece) {
      const text::TaggedSentence& s = d.sentences[static_cast<std::size_t>(span.sentence)];
      const std::vector<std::string>& gold = out.gold[static_cast<std::size_t>(span.sentence)];
      for (std::int64_t t = span.offset; t < span.offset + span.size; ++t) {
        const std::string& token = s.tokens[static_cast<std::size_t>(t)];
        const std::string& tag = gold[static_cast<std::size_t>(t)];
        ids.push_back(vocab_.id(word_form(token, options_.lowercase)));
        cases.push_back(text::case_class(token) +
                        (options_.document_context > 0 && t == 0 ? text::kCaseClasses : 0));
        if (options_.char_filters > 0) {
          std::vector<char32_t> code_points = models::utf8_code_points(token, d.path);
          if (code_points.size() > kMaxWordCharacters) {
            code_points.resize(kMaxWordCharacters);
            ++out.char_truncated_words;
          }
          for (char32_t c : code_points) chars.push_back(char_class_(c));
          if (code_points.empty()) chars.push_back(0);  // an empty token still has one (unknown) character
          char_counts.push_back(std::max<std::int64_t>(static_cast<std::int64_t>(code_points.size()), 1));
        }
        if (options_.suffix_feature) suffixes.push_back(suffix_class_(token));
        if (options_.bigram_feature) {  // the sentence's neighbours, across a piece's cut too
          const auto [left, right] = bigram_keys_(s.tokens, static_cast<std::size_t>(t));
          bigrams.push_back(bigrams_.id(left));
          bigrams.push_back(bigrams_.id(right));
        }
        // A tag training never saw cannot be predicted; it still counts as gold in the scores (a miss).
        tags.push_back(labels_.contains(tag) ? labels_.id(tag) : -1);
        TOPO_CHECK(split != Split::Train || tags.back() >= 0, "{}:{}: tag '{}' missing from the label set", d.path,
                   s.line, tag);
      }
    }
    out.ids.push_back(std::move(ids));
    out.cases.push_back(std::move(cases));
    out.chars.push_back(std::move(chars));
    out.char_counts.push_back(std::move(char_counts));
    out.suffixes.push_back(std::move(suffixes));
    out.bigrams.push_back(std::move(bigrams));
    out.tags.push_back(std::move(tags));
    out.spans.push_back(std::move(piece));
  }
  splits_[static_cast<int>(split)] = std::move(out);
}

std::unique_ptr<SequenceTagging> SequenceTagging::for_evaluation(const nlohmann::json& metadata, TagOptions options,
                                                                 const std::string& source) {
  TOPO_CHECK(!options.test.empty(), "evaluation needs a file to score");
  TOPO_CHECK(metadata.is_object(), "{}: the task metadata is {}, not an object", source, metadata.type_name());
  for (const char* key : {"vocabulary", "labels", "scheme", "file_scheme", "format", "read", "majority_tag"})
    TOPO_CHECK(metadata.contains(key), "{}: the task metadata has no '{}' (a tagger's checkpoint carries it)", source,
               key);
  std::unique_ptr<SequenceTagging> t(new SequenceTagging());
  try {
    const nlohmann::json& read = metadata.at("read");
    options.read.encoding = text::parse_text_encoding(read.at("encoding").get<std::string>());
    options.read.xpos = read.at("xpos").get<bool>();
    options.lowercase = read.at("lowercase").get<bool>();
    options.case_feature = read.at("case_feature").get<bool>();
    options.char_filters = json_number_or(read, "char_filters", std::int64_t{0});
    options.suffix_feature = read.value("suffix_feature", false);
    options.bigram_feature = read.value("bigram_feature", false);
    t->chars_ = metadata.value("chars", std::vector<std::int64_t>{});
    t->suffixes_ = metadata.value("suffixes", std::vector<std::string>{});
    if (options.bigram_feature) t->bigrams_ = text::Vocabulary::from_json(metadata.at("bigrams"));
    t->bigram_dim_ = json_number_or(metadata, "bigram_dim", std::int64_t{0});
    options.crf = read.value("crf", false);
    options.max_length = json_number<std::int64_t>(read.at("max_length"));
    options.document_context = json_number_or(read, "document_context", std::int64_t{0});
    if (options.format.empty()) options.format = metadata.at("format").get<std::string>();
    t->format_ = text::parse_tag_format(options.format);
    t->scheme_ = text::parse_tag_scheme(metadata.at("scheme").get<std::string>());
    t->file_scheme_ = text::parse_tag_scheme(metadata.at("file_scheme").get<std::string>());
    t->vocab_ = text::Vocabulary::from_json(metadata.at("vocabulary"));
    t->labels_ = text::LabelSet::from_json(metadata.at("labels"));
    t->majority_tag_ = metadata.at("majority_tag").get<std::string>();
    t->embedding_dim_ = json_number_or(metadata, "embedding_dim", std::int64_t{0});
    t->trained_rows_ = json_number_or(metadata, "trained_rows", std::int64_t{0});  // before the tail: one table
  } catch (const nlohmann::json::exception& e) {
    fail("{}: malformed task metadata: {}", source, e.what());
  } catch (const Error& e) {
    fail("{}: {}", source, e.what());
  }
  TOPO_CHECK(std::is_sorted(t->chars_.begin(), t->chars_.end()) && std::is_sorted(t->suffixes_.begin(), t->suffixes_.end()),
             "{}: the task metadata's chars and suffixes must be sorted lists", source);
  TOPO_CHECK(options.document_context >= 0, "{}: the task metadata's document_context is {}", source,
             options.document_context);
  TOPO_CHECK(options.max_length > 0 && t->labels_.contains(t->majority_tag_) && t->trained_rows_ >= 0 &&
                 t->trained_rows_ <= t->vocab_.size(),
             "{}: inconsistent task metadata (max_length {}, majority tag '{}', trained_rows {} of a vocabulary of {})",
             source, options.max_length, t->majority_tag_, t->trained_rows_, t->vocab_.size());
  options.scheme = text::tag_scheme_name(t->scheme_);
  t->options_ = options;
  t->data_[2] = text::read_tagged(t->format_, options.test, options.read);
  TOPO_CHECK(!t->data_[2].sentences.empty(), "'{}' holds no sentences", options.test);
  t->encode_(Split::Test);
  return t;
}

std::shared_ptr<models::SequenceModel> SequenceTagging::make_model(std::shared_ptr<models::SequenceEncoder> encoder,
                                                                   const models::HeadOptions& head) const {
  std::shared_ptr<nn::LinearChainCrf> crf;
  if (options_.crf) {
    // Transitions the scheme forbids (O -> I-X in IOB2, ...) are removed; no start/end constraints, because a
    // sentence cut into pieces may start a piece inside a chunk.
    const auto k = static_cast<std::size_t>(labels_.size());
    nn::CrfConstraints c;
    c.transition.resize(k * k);
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j)
        c.transition[i * k + j] = text::allowed_transition(labels_.name(static_cast<std::int64_t>(i)),
                                                           labels_.name(static_cast<std::int64_t>(j)), scheme_);
    crf = std::make_shared<nn::LinearChainCrf>(labels_.size(), std::move(c));
  }
  return std::make_shared<models::TokenTagger>(std::move(encoder), labels_.size(), head, std::move(crf));
}

namespace {

// The CRF of a tagging model, or null.
const nn::LinearChainCrf* crf_of(const models::SequenceModel& model) {
  const auto* tagger = dynamic_cast<const models::TokenTagger*>(&model);
  return tagger != nullptr ? tagger->crf().get() : nullptr;
}

bool all_known(const Tensor& targets) {
  const std::vector<std::int64_t> t = targets.to(Device::cpu()).to_vector<std::int64_t>();
  return std::all_of(t.begin(), t.end(), [](std::int64_t x) { return x >= 0; });
}

}  // namespace

nn::Var SequenceTagging::batch_loss(models::SequenceModel& model, const nn::Var& output, const TaskBatch& batch) const {
  if (const nn::LinearChainCrf* crf = crf_of(model)) {
    // crf->nll is the mean over pieces; packed pieces hold several spans, and the loss stays a mean per span
    // (the objective, and the gradient's scale under --clip, of unpacked training).
    const nn::Var nll = crf->nll(output, batch.inputs.lengths, batch.targets);
    const auto pieces = static_cast<std::int64_t>(batch.inputs.lengths.size());
    if (batch.loss_items <= 0 || batch.loss_items == pieces) return nll;
    return nn::mul_scalar(nll, float(pieces) / float(batch.loss_items));
  }
  return loss(output, batch.targets);
}

std::vector<std::vector<std::int64_t>> SequenceTagging::epoch_batches(std::int64_t batch, std::uint64_t seed,
                                                                      std::int64_t epoch) const {
  const EncodedTagSplit& train = split_(Split::Train);
  std::vector<std::int64_t> lengths(train.ids.size());
  for (std::size_t i = 0; i < lengths.size(); ++i) lengths[i] = static_cast<std::int64_t>(train.ids[i].size());
  // `batch` counts sentences: packed pieces (document_context) hold several, so a batch takes fewer pieces and
  // an epoch keeps about the steps it has without packing.
  const double sentences_per_piece = double(train.gold.size()) / double(std::max<std::int64_t>(train.size(), 1));
  const std::int64_t pieces = std::max<std::int64_t>(1, std::llround(double(batch) / sentences_per_piece));
  return text::length_bucketed_batches(lengths, std::min(batch, pieces), seed, epoch);
}

TaskBatch SequenceTagging::batch(Split split, const std::vector<std::int64_t>& indices) const {
  const EncodedTagSplit& data = split_(split);
  TOPO_CHECK(!indices.empty(), "tag: empty batch");
  TaskBatch out;
  std::vector<std::int64_t> ids, cases, tags, chars, suffixes, bigrams;
  for (std::int64_t i : indices) {
    TOPO_CHECK(i >= 0 && i < data.size(), "tag: piece {} out of range for the {} split of {}", i, split_name(split),
               data.size());
    const auto u = static_cast<std::size_t>(i);
    out.inputs.lengths.push_back(static_cast<std::int64_t>(data.ids[u].size()));
    out.loss_items += static_cast<std::int64_t>(data.spans[u].size());
    ids.insert(ids.end(), data.ids[u].begin(), data.ids[u].end());
    cases.insert(cases.end(), data.cases[u].begin(), data.cases[u].end());
    chars.insert(chars.end(), data.chars[u].begin(), data.chars[u].end());
    out.inputs.chars_per_token.insert(out.inputs.chars_per_token.end(), data.char_counts[u].begin(),
                                      data.char_counts[u].end());
    suffixes.insert(suffixes.end(), data.suffixes[u].begin(), data.suffixes[u].end());
    bigrams.insert(bigrams.end(), data.bigrams[u].begin(), data.bigrams[u].end());
    // An unseen gold tag (dev/test only) is left out of the loss (cross_entropy ignores -100); scores count it.
    for (std::int64_t t : data.tags[u]) tags.push_back(t >= 0 ? t : -100);
  }
  const auto n = static_cast<std::int64_t>(ids.size());
  out.inputs.token_ids = Tensor::from_vector(ids, {n});
  if (options_.case_feature) out.inputs.token_case = Tensor::from_vector(cases, {n});
  if (options_.char_filters > 0)
    out.inputs.token_chars = Tensor::from_vector(chars, {static_cast<std::int64_t>(chars.size())});
  if (options_.suffix_feature) out.inputs.token_suffix = Tensor::from_vector(suffixes, {n});
  if (options_.bigram_feature) out.inputs.token_bigrams = Tensor::from_vector(bigrams, {n, 2});
  out.targets = Tensor::from_vector(tags, {n});
  return out;
}

nn::Var SequenceTagging::loss(const nn::Var& output, const Tensor& targets) const {
  return nn::cross_entropy(output, targets);  // [tokens, tags] vs [tokens]: mean over real tokens
}

SequenceTagging::Predictions SequenceTagging::predict(models::SequenceModel& model, Split split, Device device) const {
  using Clock = std::chrono::steady_clock;
  const EncodedTagSplit& data = split_(split);
  TOPO_CHECK(data.size() > 0, "tag: the {} split is empty", split_name(split));
  const bool was_training = model.is_training();
  model.eval();
  nn::NoGradGuard no_grad;
  Predictions p;
  p.tags.resize(data.gold.size());
  for (std::size_t s = 0; s < data.gold.size(); ++s) p.tags[s].resize(data.gold[s].size());
  const std::int64_t classes = labels_.size();
  const nn::LinearChainCrf* crf = crf_of(model);
  std::int64_t tokens = 0;
  for (const auto& indices : text::sequential_batches(data.size(), options_.eval_batch)) {
    const TaskBatch b = batch(split, indices).to(device);
    const auto t0 = Clock::now();
    const nn::Var logits = model.forward(b.inputs);
    const std::vector<float> out = logits.data().to(Device::cpu()).to_vector<float>();  // waits for the device
    p.forward_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    const std::int64_t n = b.inputs.num_tokens();
    TOPO_CHECK(static_cast<std::int64_t>(out.size()) == n * classes, "tag: the model gives {} outputs for {} tokens of {} tags",
               out.size(), n, classes);
    // Loss per token: cross-entropy, or with a CRF its NLL per piece spread over the piece's tokens (batches
    // holding a tag training never saw are left out of the CRF's loss: it has no path through them).
    std::vector<std::int64_t> decoded;
    if (crf != nullptr) {
      decoded = crf->decode(logits.data(), b.inputs.lengths);
      if (all_known(b.targets)) {
        p.loss += double(crf->nll(logits, b.inputs.lengths, b.targets).item()) * double(indices.size());
        tokens += n;
      }
    } else {
      p.loss += double(nn::cross_entropy(logits, b.targets).item()) * double(n);
      tokens += n;
    }
    ++p.batches;
    std::size_t row = 0;
    for (std::int64_t i : indices)
      for (const text::PieceSpan& span : data.spans[static_cast<std::size_t>(i)]) {
        auto& sentence = p.tags[static_cast<std::size_t>(span.sentence)];
        for (std::int64_t t = span.offset; t < span.offset + span.size; ++t, ++row) {
          const float* r = out.data() + row * static_cast<std::size_t>(classes);
          const std::int64_t tag = crf != nullptr ? decoded[row] : std::max_element(r, r + classes) - r;
          sentence[static_cast<std::size_t>(t)] = labels_.name(tag);
        }
      }
  }
  p.loss /= double(std::max<std::int64_t>(tokens, 1));
  model.train(was_training);
  return p;
}

text::TagScorer SequenceTagging::score(Split split, const std::vector<std::vector<std::string>>& predicted) const {
  const EncodedTagSplit& data = split_(split);
  TOPO_CHECK(predicted.size() == data.gold.size(), "tag: {} predicted sentences for {}", predicted.size(),
             data.gold.size());
  text::TagScorer scorer(scheme_);
  for (std::size_t s = 0; s < predicted.size(); ++s) scorer.add(data.gold[s], predicted[s]);
  return scorer;
}

Evaluation SequenceTagging::evaluate(models::SequenceModel& model, Split split, Device device) const {
  const Predictions p = predict(model, split, device);
  const text::TagScorer scorer = score(split, p.tags);
  Evaluation e;
  e.values = {{"acc", scorer.accuracy()},
              {"loss", p.loss},
              {"ms_per_batch", 1e3 * p.forward_seconds / double(std::max<std::int64_t>(p.batches, 1))},
              {"batch", options_.eval_batch},
              {"sentences", static_cast<std::int64_t>(p.tags.size())},
              {"tokens", scorer.tokens()}};
  if (scheme_ != text::TagScheme::None) {
    const nlohmann::json s = scorer.to_json();
    for (const char* key : {"f1", "precision", "recall", "per_type"}) e.values[key] = s.at(key);
    e.values["chunks"] = {{"correct", s.at("correct")}, {"guessed", s.at("guessed")}, {"gold", s.at("gold")}};
  }
  e.metric = e.values.at(metric()).get<double>();
  return e;
}

nlohmann::json SequenceTagging::baseline(Split split) const {
  const EncodedTagSplit& data = split_(split);
  text::TagScorer scorer(scheme_);
  for (const auto& gold : data.gold) scorer.add(gold, std::vector<std::string>(gold.size(), majority_tag_));
  nlohmann::json out = {{"majority_tag", majority_tag_},
                        {"majority_acc", scorer.accuracy()},
                        {"baseline", "always predict the training set's most frequent tag"}};
  if (scheme_ != text::TagScheme::None) out["majority_f1"] = scorer.overall().f1();
  return out;
}

nlohmann::json SequenceTagging::metadata() const {
  nlohmann::json data;
  for (Split s : {Split::Train, Split::Dev, Split::Test})
    if (size(s) > 0) {
      data[split_name(s)] = tagged_stats_json(data_[static_cast<int>(s)].stats);
      data[split_name(s)]["pieces"] = size(s);  // the model's sequences (cut or packed sentences)
      if (const std::int64_t cut = split_(s).char_truncated_words; cut > 0) {
        data[split_name(s)]["char_truncated_words"] = cut;  // read by the CNN up to kMaxWordCharacters
        data[split_name(s)]["char_word_limit"] = kMaxWordCharacters;
      }
    }
  return {{"vocabulary", vocab_.to_json()},
          {"labels", labels_.to_json()},
          {"majority_tag", majority_tag_},
          {"format", options_.format},
          {"scheme", text::tag_scheme_name(scheme_)},
          {"file_scheme", text::tag_scheme_name(file_scheme_)},
          {"read",
           {{"encoding", text::text_encoding_name(options_.read.encoding)},
            {"xpos", options_.read.xpos},
            {"lowercase", options_.lowercase},
            {"case_feature", options_.case_feature},
            {"char_filters", options_.char_filters},
            {"suffix_feature", options_.suffix_feature},
            {"bigram_feature", options_.bigram_feature},
            {"crf", options_.crf},
            {"max_length", options_.max_length},
            {"document_context", options_.document_context}}},
          {"vocab_size", vocab_.size()},
          {"chars", chars_},
          {"suffixes", suffixes_},
          {"bigrams", bigrams_.to_json()},
          {"bigram_dim", bigram_dim_},
          {"bigram_vectors", bigram_vectors_.report},
          {"embedding_dim", embedding_dim_},
          {"trained_rows", trained_rows_},
          {"vectors", vectors_report()},
          {"data", data}};
}

std::vector<std::string> SequenceTagging::write_outputs(models::SequenceModel& model, Device device,
                                                        const std::string& out_dir) const {
  std::vector<std::string> written;
  for (Split s : {Split::Dev, Split::Test}) {
    if (size(s) == 0) continue;
    const text::TaggedDataset& d = data(s);
    std::vector<std::vector<std::string>> tags = predict(model, s, device).tags;
    // Written in the file's own scheme, so the gold and predicted columns read alike (conlleval, a user); a
    // free-form model (scheme none) read every file's tags as they are (encode_), and writes its own so too.
    if (scheme_ != text::TagScheme::None) {
      const text::TagScheme file_scheme = detect_file_scheme(d);
      for (auto& t : tags) t = text::convert_tags(t, scheme_, file_scheme);
    }
    const std::string path = (std::filesystem::path(out_dir) / (split_name(s) + ".predictions.txt")).string();
    text::write_tagged_predictions(path, d, tags);
    written.push_back(path);
  }
  return written;
}

}  // namespace topo::apps
