// `--task tag`: sequence labelling (NER, POS) on CoNLL-2003, CoNLL-U, Weibo and Resume files, its options,
// their checks, and topo-eval's scoring of a saved tagger on a file (conlleval's table, predictions).
#include "apps/tasks/registry.hpp"
#include "apps/tasks/tag/tag.hpp"
#include "apps/tasks/text_task_options.hpp"

namespace topo::apps {

namespace {

TagOptions options_of(const TaskSettings& s) {
  TagOptions o;
  o.format = s.option<std::string>("format");
  o.train = s.option<std::string>("train");
  o.dev = s.option<std::string>("dev");
  o.test = s.option<std::string>("test");
  o.read.encoding = text::parse_text_encoding(s.option<std::string>("encoding"));
  o.read.skip_bad = s.option<bool>("skip_bad");
  o.read.xpos = s.option<bool>("xpos");
  o.scheme = s.option<std::string>("tag_scheme");
  o.lowercase = s.option<bool>("lowercase");
  o.case_feature = s.option<bool>("case_feature");
  o.char_filters = s.option<std::int64_t>("char_filters");
  o.suffix_feature = s.option<bool>("suffix_feature");
  o.bigram_feature = s.option<bool>("bigram_feature");
  o.bigram_vectors = s.option<std::string>("bigram_vectors");
  o.crf = s.option<bool>("crf");
  o.min_freq = s.option<std::int64_t>("min_freq");
  o.max_length = s.option<std::int64_t>("max_len");
  o.document_context = s.option<std::int64_t>("document_context");
  o.vectors = s.option<std::string>("vectors");
  o.vector_options = vector_options(s);
  o.vectors_vocabulary = s.option<std::string>("vectors_vocabulary");
  o.freeze_vectors = s.option<bool>("freeze_vectors");
  o.eval_batch = text_eval_batch(s);
  return o;
}

void validate(const TaskSettings& s) {
  const auto format = s.option<std::string>("format");
  if (!format.empty() && format != "conll" && format != "conllu" && format != "weibo" && format != "bmes")
    models::fail_invalid_field("format", format, "expected conll, conllu, weibo or bmes (empty: from the file name)");
  if (s.option<std::string>("train").empty()) models::fail_invalid_field("train", "", "tag needs a training file");
  if (s.option<std::string>("dev").empty())
    models::fail_invalid_field("dev", "", "tag needs a dev file (the checkpoint is selected on it)");
  if (s.option<std::int64_t>("char_filters") < 0)
    models::fail_invalid_field("char_filters", s.option<std::int64_t>("char_filters"), "expected >= 0 (0: no character CNN)");
  if (s.option<std::int64_t>("document_context") < 0)
    models::fail_invalid_field("document_context", s.option<std::int64_t>("document_context"),
                               "expected >= 0 (0: each sentence alone)");
  if (!s.option<std::string>("bigram_vectors").empty() && !s.option<bool>("bigram_feature"))
    models::fail_invalid_field("bigram_vectors", s.option<std::string>("bigram_vectors"),
                               "bigram vectors need the bigram feature (--bigram-feature)");
  if (s.option<bool>("xpos") && !format.empty() && format != "conllu")
    models::fail_invalid_field("xpos", true, "applies only to --format conllu");
  validate_text_task(s);
}

nlohmann::json evaluate_file(const FileEvaluation& request) {
  TagOptions options;
  options.format = request.format;
  options.test = request.test;
  options.eval_batch = request.batch;
  options.read.skip_bad = request.skip_bad;
  const auto task = SequenceTagging::for_evaluation(request.metadata, options, "checkpoint '" + request.checkpoint + "'");
  const auto model = request.load_model(*task);
  const SequenceTagging::Predictions p = task->predict(*model, Split::Test, request.device);
  const text::TagScorer scorer = task->score(Split::Test, p.tags);
  if (!request.predictions.empty()) {
    // Written in the file's own scheme, so conlleval can compare the columns.
    std::vector<std::vector<std::string>> tags = p.tags;
    const text::TaggedDataset& d = task->data(Split::Test);
    std::vector<std::vector<std::string>> gold;
    for (const auto& sentence : d.sentences) gold.push_back(sentence.tags);
    // A free-form model (scheme none) writes its tags as they are.
    const text::TagScheme file_scheme =
        task->scheme() == text::TagScheme::None ? text::TagScheme::None : text::detect_tag_scheme(gold);
    for (auto& t : tags) t = text::convert_tags(t, task->scheme(), file_scheme);
    text::write_tagged_predictions(request.predictions, d, tags);
  }
  nlohmann::json result = {{"format", text::tag_format_name(task->data(Split::Test).format)},
                           {"metric", task->metric()},
                           {"scheme", text::tag_scheme_name(task->scheme())},
                           {"loss", p.loss},
                           {"ms_per_batch", 1e3 * p.forward_seconds / double(std::max<std::int64_t>(p.batches, 1))},
                           {"batch", request.batch},
                           {"sentences", static_cast<std::int64_t>(p.tags.size())},
                           {"scores", scorer.to_json()},
                           {"table", scorer.table()}};
  result.update(task->baseline(Split::Test));
  const double value = task->metric() == "f1" ? scorer.overall().f1() : scorer.accuracy();
  result[task->metric()] = value;
  result["acc"] = scorer.accuracy();
  std::string report = fmt::format("{} on {} ({} sentences, scheme {}): {} {:.4f}; majority tag '{}' acc {:.4f}\n{}",
                                   request.config.value("model", "?"), request.test, p.tags.size(),
                                   result.at("scheme").get<std::string>(), task->metric(), value,
                                   result.at("majority_tag").get<std::string>(),
                                   result.at("majority_acc").get<double>(), scorer.table());
  if (!request.predictions.empty()) {
    result["predictions"] = request.predictions;
    report += fmt::format("predictions -> {}\n", request.predictions);
  }
  result["report"] = report;
  return result;
}

}  // namespace

TaskRegistration tag_registration() {
  TaskRegistration t;
  t.name = "tag";
  t.summary = "sequence labelling (NER, POS; CoNLL-2003, CoNLL-U, Weibo, Resume); conlleval F1 or accuracy";
  t.input = TaskInput::TokenIds;
  t.options = {{"format", "", "conll | conllu | weibo | bmes (empty: from the training file's name)", {}}};
  for (const models::Option& o : text_task_options()) t.options.push_back(o);
  t.options.push_back({"tag_scheme", "file",
                       "the scheme the model predicts: file (the training file's) | auto (the file's chunks as BIOES "
                       "from IOB1/IOB2, BMES and free-form tags as they are) | iob1 | iob2 | bio | bioes | bmes | "
                       "none (free-form tags, POS-style: no chunks, token accuracy; a tag outside the scheme is an "
                       "error otherwise)",
                       {"file", "auto", "iob1", "iob2", "bio", "bioes", "bmes", "none"}});
  t.options.push_back({"xpos", false, "conllu: tag with XPOS instead of UPOS", {}});
  t.options.push_back({"case_feature", false, "add a capitalisation embedding (lower, Upper, ALLCAPS, mixed, digits) to each token", {}});
  t.options.push_back({"char_filters", 0,
                       "> 0: a character CNN per word with this many filters (width-3 convolution over its "
                       "characters, the first 512 of a longer word, max over the word) added to the token's "
                       "embedding; 0: none",
                       {}});
  t.options.push_back({"suffix_feature", false, "add an embedding of each word's last three characters (lowercased)", {}});
  t.options.push_back({"bigram_feature", false,
                       "add embeddings of each token's pairs with its left and right neighbours (Chinese character "
                       "bigrams), projected into the token's embedding",
                       {}});
  t.options.push_back({"bigram_vectors", "",
                       "pre-trained bigram vectors (word2vec text keyed by the joined pair, e.g. scripts/zh_vectors.sh's "
                       "zh_bigrams.vec) for --bigram-feature's table, fine-tuned",
                       {}});
  t.options.push_back({"document_context", 0,
                       "> 0: pack consecutive sentences of one document (conll -DOCSTART- marks) into pieces of up "
                       "to this many tokens (at most max_len), so each is tagged in its neighbours' context; --batch "
                       "still counts sentences. 0: each sentence alone",
                       {}});
  t.options.push_back(vectors_vocabulary_option("data"));
  t.options.push_back({"crf", false, "a linear-chain CRF on the per-token scores (NLL training, Viterbi decoding, the scheme's constraints)", {}});
  t.validate = validate;
  t.make = [](const TaskSettings& s) -> std::unique_ptr<Task> { return std::make_unique<SequenceTagging>(options_of(s)); };
  t.evaluate_file = evaluate_file;
  return t;
}

}  // namespace topo::apps
