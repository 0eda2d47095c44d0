// topo-train --task tag end to end on a slice of CoNLL-2003 and topo-eval on its checkpoint: Star with its
// registered tagging recipe (only data, size and run flags given) learns entities far above the majority tag
// (all "O": F1 0); topo-eval re-scores the dev file to the same F1 and writes predictions beside the input's
// columns; the capitalisation feature and the piece cutting of long sentences.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "apps/tasks/tag/tag.hpp"
#include "apps/train/cli.hpp"
#include "apps/train/evaluate.hpp"
#include "apps/train/model_factory.hpp"
#include "apps/train/trainer.hpp"
#include "nn/checkpoint.hpp"
#include "tests/apps/train_args.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::apps;
namespace fs = std::filesystem;

namespace {

// The first `sentences` sentences (and the -DOCSTART- lines among them) of a CoNLL file, as a new file.
std::string conll_slice(const std::string& source, std::int64_t sentences, const fs::path& out) {
  std::ifstream in(source);
  std::ofstream o(out);
  std::int64_t done = 0;
  bool in_sentence = false;
  for (std::string line; std::getline(in, line) && done < sentences;) {
    o << line << '\n';
    const bool blank = line.empty();
    if (blank && in_sentence) ++done;
    in_sentence = !blank && line.rfind("-DOCSTART-", 0) != 0;
  }
  return out.string();
}

// topo-train's command line, required to parse.
TrainConfig parsed_config(std::vector<std::string> args) {
  const auto c = topo::testing::parse_train_command(std::move(args));
  REQUIRE(c.has_value());
  return *c;
}

std::int64_t count_lines(const std::string& path) {
  std::ifstream in(path);
  std::int64_t n = 0;
  for (std::string line; std::getline(in, line);) n += !line.empty();
  return n;
}

}  // namespace

TEST_CASE("tag: Star's recipe learns NER on a CoNLL-2003 slice; topo-eval gives the same dev F1 and predictions") {
  const fs::path dir = testing::fresh_temp_dir("tag_conll");
  const std::string train = conll_slice(testing::shared_data_path("conll2003/iob2/train.txt"), 2000, dir / "train.txt");
  const std::string dev = conll_slice(testing::shared_data_path("conll2003/iob2/valid.txt"), 400, dir / "dev.txt");
  const std::string out = (dir / "run").string();
  // The recipe's settings (lowercase, case feature, min_freq 2 so <unk> is trained, dropout...) with a smaller
  // width, 6 epochs of batches of 16 at a higher lr for time (~6 s of CPU on one thread).
  const TrainConfig c = parsed_config({"--task", "tag", "--model", "star", "--train", train, "--dev", dev, "--test",
                                       dev, "--hidden", "64", "--heads", "4", "--head-hidden", "64", "--epochs", "6", "--batch", "16",
                                       "--lr", "2e-3", "--threads", "1", "--progress", "none", "--out", out});
  CHECK(c.option<bool>("case_feature"));
  CHECK(c.option<bool>("lowercase"));
  const TrainResult r = Trainer(c).run();
  REQUIRE(r.completed);
  CHECK(r.metric == "f1");
  const nlohmann::json& res = r.result;
  INFO(res.dump(1).substr(0, 3000));
  CHECK(res.at("majority_tag") == "O");
  CHECK(res.at("majority_f1").get<double>() == 0.0);
  // All-O scores 0; this run reached 0.50 when written (0.28 after its first epoch).
  CHECK(r.best_dev_metric > 0.3);
  CHECK(res.at("dev_f1").get<double>() == r.best_dev_metric);
  CHECK(res.at("test_f1").get<double>() == r.best_dev_metric);  // the same file
  CHECK(res.at("test_per_type").contains("PER"));
  CHECK(res.at("data").at("train").at("sentences").get<std::int64_t>() == 2000);

  // Predictions: every dev token line plus a column, in the file's scheme.
  const std::string predictions = (fs::path(out) / "test.predictions.txt").string();
  REQUIRE(fs::exists(predictions));
  const std::int64_t dev_tokens = res.at("data").at("dev").at("tokens").get<std::int64_t>();
  CHECK(count_lines(predictions) == dev_tokens);

  // topo-eval: the same F1 from the file, the per-type table, predictions written on request.
  EvalOptions e;
  e.checkpoint = out;
  e.test = dev;
  e.predictions = (dir / "eval.predictions.txt").string();
  const nlohmann::json eval = evaluate_checkpoint(e);
  CHECK(eval.at("f1").get<double>() == doctest::Approx(r.best_dev_metric).epsilon(1e-12));
  CHECK(eval.at("table").get<std::string>().find("PER: precision") != std::string::npos);
  std::ifstream a(predictions), b(e.predictions);
  std::stringstream sa, sb;
  sa << a.rdbuf();
  sb << b.rdbuf();
  CHECK(sa.str() == sb.str());

  // The IOB1 original of the same sentences, scored by the IOB2-trained checkpoint: the same chunks, so the
  // same F1 (conlleval reads both schemes alike).
  e.test = conll_slice(testing::shared_data_path("conll2003/original_iob1/eng.testa"), 400, dir / "dev_iob1.txt");
  e.predictions.clear();
  CHECK(evaluate_checkpoint(e).at("f1").get<double>() == doctest::Approx(r.best_dev_metric).epsilon(1e-12));
  fs::remove_all(dir);
}

TEST_CASE("tag: long sentences are cut into pieces and joined; capitalisation ids ride in the batch") {
  const fs::path dir = testing::fresh_temp_dir("tag_pieces");
  std::ofstream f(dir / "t.conll");
  // Sentence 1: 7 tokens; sentence 2: 3 tokens.
  f << "EU NNP B-NP B-ORG\nrejects VBZ B-VP O\nGerman JJ B-NP B-MISC\ncall NN I-NP O\nto TO B-VP O\n"
       "UK NNP B-NP B-LOC\n1996 CD I-NP O\n\nPeter NNP B-NP B-PER\nBlackburn NNP I-NP I-PER\nsaid VBD B-VP O\n\n";
  f.close();
  TagOptions o;
  o.train = o.dev = (dir / "t.conll").string();
  o.max_length = 3;
  o.case_feature = true;
  o.lowercase = true;
  SequenceTagging task(o);
  // 7 tokens -> pieces of 3, 3, 1; 3 tokens -> one piece.
  CHECK(task.size(Split::Dev) == 4);
  const TaskBatch b = task.batch(Split::Dev, {0, 1, 2, 3});
  CHECK(b.inputs.lengths == std::vector<std::int64_t>{3, 3, 1, 3});
  CHECK(b.inputs.token_case.to_vector<std::int64_t>() == std::vector<std::int64_t>{2, 0, 1, 0, 0, 2, 4, 1, 1, 0});
  CHECK(task.case_classes() == 5);
  CHECK(task.metric() == "f1");
  CHECK(task.scheme() == text::TagScheme::IOB2);
  // Gold vs itself through the scorer: the pieces are joined back into whole sentences.
  TrainConfig c = testing::tiny_star_tagger_config();
  c.set("max_len", 3);
  auto model = make_task_model(c, task);
  const auto p = task.predict(*model, Split::Dev, Device::cpu());
  REQUIRE(p.tags.size() == 2);
  CHECK(p.tags[0].size() == 7);
  CHECK(p.tags[1].size() == 3);
  CHECK(task.score(Split::Dev, {{"B-ORG", "O", "B-MISC", "O", "O", "B-LOC", "O"}, {"B-PER", "I-PER", "O"}})
            .overall()
            .f1() == 1.0);
  // With a CRF: its parameters ride in the model ("crf.*"), Viterbi decodes whole pieces, and no decoded path
  // takes a transition the scheme forbids (the CRF's transitions are zero, so the emissions alone would).
  o.crf = true;
  SequenceTagging crf_task(o);
  auto crf_model = make_task_model(c, crf_task);
  crf_model->reset_parameters(7);
  bool has_crf = false;
  for (const auto& [name, param] : crf_model->named_parameters()) has_crf |= name == "crf.transitions";
  CHECK(has_crf);
  const auto decoded = crf_task.predict(*crf_model, Split::Dev, Device::cpu());
  for (const auto& tags : decoded.tags)
    for (std::size_t t = 1; t < tags.size(); ++t)  // pieces of 3 are decoded apart: check inside them
      if (t % 3 != 0) CHECK(text::allowed_transition(tags[t - 1], tags[t], text::TagScheme::IOB2));
  const TaskBatch cb = crf_task.batch(Split::Dev, {0, 1, 2, 3});
  const nn::Var crf_loss = crf_task.batch_loss(*crf_model, crf_model->forward(cb.inputs), cb);
  CHECK(crf_loss.item() > 0.f);
  // BiG takes no capitalisation feature; the error says which flag turns it off.
  c.set("model", "big");
  CHECK(testing::error_of([&] { make_task_model(c, task); }).find("--case-feature=false") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("tag config: missing or inconsistent fields are rejected naming the field") {
  TrainConfig c;
  c.set("task", "tag");
  c.set("model", "star");
  CHECK(testing::error_of([&] { c.validate(); }).find("'train'") != std::string::npos);
  c.set("train", "x");
  CHECK(testing::error_of([&] { c.validate(); }).find("'dev'") != std::string::npos);
  c.set("dev", "y");
  c.set("format", "sst");
  CHECK(testing::error_of([&] { c.validate(); }).find("'format'") != std::string::npos);
  c.set("format", "conll");
  CHECK(testing::error_of([&] { c.set("tag_scheme", "iob3"); }).find("'tag_scheme' = 'iob3'") != std::string::npos);
  c.set("tag_scheme", "bioes");
  c.set("xpos", true);
  CHECK(testing::error_of([&] { c.validate(); }).find("'xpos'") != std::string::npos);
  c.set("xpos", false);
  c.validate();
  c.set("model", "deepsets");
  CHECK(testing::error_of([&] { c.validate(); }).find("token ids") != std::string::npos);
}

TEST_CASE("tag: the recipe's cosine warm-up shrinks to fit a short run; a --warmup the user typed does not") {
  // Star's tag recipe decays its lr on a cosine after 100 warm-up steps; `--epochs 1` on 40 sentences is 2 steps.
  const fs::path dir = testing::fresh_temp_dir("tag_short_run");
  const std::string train = conll_slice(testing::shared_data_path("conll2003/iob2/train.txt"), 40, dir / "train.txt");
  const std::vector<std::string> args = {"--task", "tag", "--model", "star", "--train", train, "--dev", train,
                                         "--hidden", "8", "--heads", "2", "--head-hidden", "8", "--layers", "1",
                                         "--epochs", "1", "--threads", "1", "--progress", "none"};
  std::vector<std::string> recipe_args = args;
  recipe_args.insert(recipe_args.end(), {"--out", (dir / "recipe").string()});
  const TrainConfig c = parsed_config(recipe_args);
  REQUIRE(c.schedule == "cosine");
  REQUIRE(c.sources.at("warmup").starts_with("recipe"));
  const TrainResult r = Trainer(c).run();
  CHECK(r.completed);
  // result.json has the warm-up as run beside the recipe's in its config
  CHECK(r.result.at("warmup_steps") == r.result.at("steps").get<std::int64_t>() / 10);
  CHECK(r.result.at("config").at("warmup") == 100);
  std::vector<std::string> typed = args;
  typed.insert(typed.end(), {"--warmup", "100", "--out", (dir / "typed").string()});
  const std::string error = testing::error_of([&] { Trainer(parsed_config(typed)).run(); });
  CHECK(error.find("'schedule' = 'cosine' with warmup = 100") != std::string::npos);
}

TEST_CASE("tag: with vectors, words the vectors know join the vocabulary from every split's text") {
  const fs::path dir = testing::fresh_temp_dir("tag_vectors");
  std::ofstream(dir / "train.conll") << "EU NNP B-NP B-ORG\nsays VBZ B-VP O\n\nEU NNP B-NP B-ORG\nsays VBZ B-VP O\n\n"
                                        "Rare NNP B-NP B-PER\nsays VBZ B-VP O\n\n";
  std::ofstream(dir / "dev.conll") << "Paris NNP B-NP B-LOC\nsays VBZ B-VP O\nzzunknown NN B-NP O\n\n";
  std::ofstream(dir / "vec.txt") << "eu 1 0\nparis 0 1\nrare 1 1\nsays 0.5 0.5\nberlin 0.25 1\n";
  TagOptions o;
  o.train = (dir / "train.conll").string();
  o.dev = (dir / "dev.conll").string();
  o.lowercase = true;
  o.min_freq = 2;  // "rare" occurs once: without vectors it would be <unk>
  const SequenceTagging plain(o);
  CHECK(plain.vocab_size() == 4);  // <pad> <unk> eu says
  o.vectors = (dir / "vec.txt").string();
  const SequenceTagging with(o);
  const std::vector<std::string> tokens = with.token_strings();
  CHECK(tokens.size() == 6);  // + rare (training, below min_freq) + paris (dev text); zzunknown stays <unk>
  CHECK(std::find(tokens.begin(), tokens.end(), "paris") != tokens.end());
  CHECK(std::find(tokens.begin(), tokens.end(), "rare") != tokens.end());
  CHECK(std::find(tokens.begin(), tokens.end(), "zzunknown") == tokens.end());
  CHECK(with.embedding_dim() == 2);
  CHECK(with.metadata().at("vectors").at("vocabulary_added") == 2);
  // Rows past the last one training reads (paris: dev text only) are the frozen tail, outside the optimizer.
  CHECK(with.trained_rows() == 5);
  CHECK(with.metadata().at("trained_rows") == 5);

  // vectors_vocabulary: train brings no word, all every word of the file (berlin: in no data file).
  o.vectors_vocabulary = "train";
  const SequenceTagging train_only(o);
  CHECK(train_only.vocab_size() == 4);
  CHECK(train_only.trained_rows() == 0);
  o.vectors_vocabulary = "all";
  const SequenceTagging all(o);
  const std::vector<std::string> every = all.token_strings();
  CHECK(every.size() == 7);
  CHECK(std::vector<std::string>(every.begin(), every.begin() + 6) == tokens);  // data's ids kept, berlin after
  CHECK(every.back() == "berlin");
  CHECK(all.trained_rows() == 5);

  // End to end: a held-back file's word that only the vector file has reads its vector through topo-eval.
  TrainConfig c = parsed_config({"--task", "tag", "--model", "star", "--train", o.train, "--dev", o.dev, "--vectors",
                                 o.vectors, "--vectors-vocabulary", "all", "--hidden", "8", "--heads", "2", "--layers",
                                 "1", "--epochs", "1", "--min-steps", "0", "--progress", "none", "--out",
                                 (dir / "run").string()});
  const TrainResult r = Trainer(c).run();
  REQUIRE(r.completed);
  CHECK(r.result.at("vectors").at("vocabulary_added") == 3);
  std::ofstream(dir / "held_back.conll") << "Berlin NNP B-NP B-LOC\nsays VBZ B-VP O\n\n";
  EvalOptions e;
  e.checkpoint = c.out;
  e.test = (dir / "held_back.conll").string();
  CHECK(evaluate_checkpoint(e).at("sentences") == 1);
  const auto task = make_task(c);
  const auto model = make_task_model(c, *task);
  nn::load_checkpoint(Trainer::best_path(c.out), *model, nullptr, nullptr);
  bool tail_holds_berlin = false;
  for (const auto& [name, p] : model->named_parameters())
    if (name == "encoder.embedding.token.tail") {
      CHECK_FALSE(p.requires_grad());
      CHECK(p.shape() == Shape{2, 2});  // paris, berlin: their vectors, untouched by training
      tail_holds_berlin = p.data().to_vector<float>() == std::vector<float>{0.f, 1.f, 0.25f, 1.f};
    }
  CHECK(tail_holds_berlin);
  fs::remove_all(dir);
}

TEST_CASE("tag: --tag-scheme auto predicts IOB chunks as BIOES and keeps BMES and free-form tags; scores are the chunks'") {
  const fs::path dir = testing::fresh_temp_dir("tag_scheme_auto");
  std::ofstream(dir / "ner.conll") << "EU NNP B-NP B-ORG\nrejects VBZ B-VP O\nGerman JJ B-NP B-MISC\ncall NN I-NP O\n\n"
                                      "Peter NNP B-NP B-PER\nBlackburn NNP I-NP I-PER\n\n";
  std::ofstream(dir / "pos.conll") << "EU NNP\nrejects VBZ\n\nPeter NNP\n\n";
  std::ofstream(dir / "resume.bmes") << "\u6b27 B-NAME\n\u9633 M-NAME\n\u4fee E-NAME\n\u597d O\n\n\u674e S-NAME\n\n";
  TagOptions o;
  o.scheme = "auto";
  o.train = o.dev = o.test = (dir / "ner.conll").string();
  const SequenceTagging ner(o);
  CHECK(ner.scheme() == text::TagScheme::BIOES);
  std::vector<std::string> names = ner.labels().names();
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"B-PER", "E-PER", "O", "S-MISC", "S-ORG"});
  // The file's chunks, predicted in the model's scheme, score as the same chunks.
  std::vector<std::vector<std::string>> predicted;
  for (const auto& sentence : ner.data(Split::Test).sentences)
    predicted.push_back(text::convert_tags(sentence.tags, text::TagScheme::IOB2, text::TagScheme::BIOES));
  CHECK(predicted[1] == std::vector<std::string>{"B-PER", "E-PER"});
  const text::TagScorer same = ner.score(Split::Test, predicted);
  CHECK(same.overall().f1() == 1.0);
  CHECK(same.overall().gold == 3);
  o.train = o.dev = o.test = (dir / "pos.conll").string();
  CHECK(SequenceTagging(o).scheme() == text::TagScheme::None);
  o.format = "bmes";
  o.train = o.dev = o.test = (dir / "resume.bmes").string();
  CHECK(SequenceTagging(o).scheme() == text::TagScheme::BMES);
  fs::remove_all(dir);
}

TEST_CASE("tag: a tag outside the file's scheme is an error naming file and line; --tag-scheme none takes it as a class") {
  const std::string bad = testing::write_temp_file("q_per.txt",
                                                   "EU NNP B-ORG\nrejects VBZ O\n\nPeter NNP B-PER\nBlackburn NNP I-PER\n\n"
                                                   "BRUSSELS NNP B-LOC\nsays VBZ Q-PER\n\n");
  TagOptions o;
  o.format = "conll";
  o.train = bad;
  o.dev = bad;
  const std::string message = testing::error_of([&] { SequenceTagging task(o); });
  CHECK(message.find(bad + ":8: tag 'Q-PER' is not a iob2 tag (prefixes B, I, or O)") != std::string::npos);
  CHECK(message.find("--tag-scheme none") != std::string::npos);
  // A BIOES file with a BIO-only mistake, and a dev file with a bad prefix in a good training file's scheme.
  const std::string bioes = testing::write_temp_file("bioes_bad.txt", "a X S-PER\nb X B-LOC\nc X E-LOC\nd X X-LOC\n\n");
  o.train = bioes;
  o.dev = bioes;
  CHECK(testing::error_of([&] { SequenceTagging task(o); }).find(":4: tag 'X-LOC' is not a bioes tag") != std::string::npos);
  const std::string good = testing::write_temp_file("good_bio.txt", "EU NNP B-ORG\nrejects VBZ O\n\n");
  o.train = good;
  o.dev = bad;
  CHECK(testing::error_of([&] { SequenceTagging task(o); }).find(bad + ":8: tag 'Q-PER'") != std::string::npos);
  // Free-form: every distinct tag is a class, scored by token accuracy.
  o.train = bad;
  o.scheme = "none";
  SequenceTagging free_form(o);
  CHECK(free_form.scheme() == text::TagScheme::None);
  CHECK(free_form.metric() == "acc");
}

TEST_CASE("tag: a tag without a type beside chunk tags is an error naming file and line; --tag-scheme none runs") {
  const fs::path dir = testing::fresh_temp_dir("tag_bare");
  const std::string second = "Peter NNP B-NP B-PER\nBlackburn NNP I-NP I-PER\n\n";
  const std::string good = testing::write_temp_file("bio_good.txt", "EU NNP B-NP B-ORG\nrejects VBZ B-VP O\n\n" +
                                                                        second);
  const std::string number = testing::write_temp_file("bio_42.txt", "EU NNP B-NP 42\nrejects VBZ B-VP O\n\n" + second);
  const std::string untyped = testing::write_temp_file(
      "bio_untyped.txt", "EU NNP B-NP B-ORG\nrejects VBZ B-VP O\n\nPeter NNP B-NP I-\nBlackburn NNP I-NP O\n\n");
  TagOptions o;
  o.format = "conll";
  o.dev = good;
  // These trained a whole epoch, then failed with "cannot convert tags between scheme 'none' and 'iob2'".
  for (const char* scheme : {"file", "auto", "iob2"}) {
    CAPTURE(scheme);
    o.scheme = scheme;
    o.train = number;
    const std::string message = testing::error_of([&] { SequenceTagging task(o); });
    CHECK(message.find(number + ":1: tag '42' is not a chunk tag (expected O, or a prefix B, I, E, S or M, "
                       "'-' and a type, as line 4's 'B-PER')") != std::string::npos);
    CHECK(message.find("--tag-scheme none") != std::string::npos);
    o.train = untyped;
    CHECK(testing::error_of([&] { SequenceTagging task(o); })
              .find(untyped + ":4: tag 'I-' is not a chunk tag") != std::string::npos);
    o.train = good;  // a dev file that mixes them
    o.dev = number;
    CHECK(testing::error_of([&] { SequenceTagging task(o); }).find(number + ":1: tag '42'") !=
          std::string::npos);
    o.dev = good;
  }
  // --tag-scheme none: every tag a class, the dev file's chunk tags too; predictions are written as predicted.
  o.scheme = "none";
  o.train = number;
  SequenceTagging task(o);
  CHECK(task.scheme() == text::TagScheme::None);
  const TrainConfig c = parsed_config({"--task", "tag", "--model", "star", "--train", number, "--dev", good, "--hidden",
                                       "8", "--heads", "2", "--layers", "1", "--tag-scheme", "none"});
  auto model = make_task_model(c, task);
  model->reset_parameters(3);
  const std::vector<std::string> written = task.write_outputs(*model, Device::cpu(), dir.string());
  REQUIRE(written.size() == 1);
  CHECK(count_lines(written[0]) == 4);
  fs::remove_all(dir);
}

TEST_CASE("tag: each word's characters and suffix ride in the batch; rare ones share class 0; topo-eval restores them") {
  const fs::path dir = testing::fresh_temp_dir("tag_chars");
  const fs::path file = dir / "t.conll";
  std::ofstream f(file);
  // "Müller" (a two-byte character) and "Berlin" twice: their characters and suffixes ("ler", "lin") occur
  // twice or more; "said"'s "aid" and "1996"'s "996" once.
  f << "Müller NNP B-NP B-PER\nsaid VBD B-VP O\n\nBerlin NNP B-NP B-LOC\n1996 CD I-NP O\n\n"
       "Müller NNP B-NP B-PER\nBerlin NNP B-NP B-LOC\n\n";
  f.close();
  TagOptions o;
  o.train = o.dev = file.string();
  o.lowercase = true;
  o.char_filters = 6;
  o.suffix_feature = true;
  SequenceTagging task(o);
  const TaskBatch b = task.batch(Split::Dev, {0, 1, 2});
  CHECK(b.inputs.chars_per_token == std::vector<std::int64_t>{6, 4, 6, 4, 6, 6});  // code points, not bytes
  const std::vector<std::int64_t> chars = b.inputs.token_chars.to_vector<std::int64_t>();
  REQUIRE(chars.size() == 32);
  // Class k + 1: the k-th of the code points seen twice or more in training, sorted; the others class 0.
  std::map<char32_t, std::int64_t> counts;
  const std::u32string words[] = {U"Müller", U"said", U"Berlin", U"1996", U"Müller", U"Berlin"};
  for (const auto& w : words)
    for (char32_t c : w) ++counts[c];
  std::vector<char32_t> kept;
  for (const auto& [c, n] : counts)
    if (n >= 2) kept.push_back(c);
  CHECK(task.char_classes() == static_cast<std::int64_t>(kept.size()) + 1);
  std::size_t at = 0;
  for (const auto& w : words)
    for (char32_t c : w) {
      const auto it = std::find(kept.begin(), kept.end(), c);
      CHECK(chars[at++] == (it == kept.end() ? 0 : (it - kept.begin()) + 1));
    }
  // Suffixes, sorted: "ler" (1), "lin" (2); "aid" and "996" once: class 0.
  CHECK(task.suffix_classes() == 3);
  CHECK(b.inputs.token_suffix.to_vector<std::int64_t>() == std::vector<std::int64_t>{1, 0, 2, 0, 1, 2});
  // A checkpoint's metadata gives topo-eval the same classes for the same file.
  TagOptions eval;
  eval.test = file.string();
  const auto restored = SequenceTagging::for_evaluation(task.metadata(), eval);
  const TaskBatch rb = restored->batch(Split::Test, {0, 1, 2});
  CHECK(rb.inputs.token_chars.to_vector<std::int64_t>() == chars);
  CHECK(rb.inputs.chars_per_token == b.inputs.chars_per_token);
  CHECK(rb.inputs.token_suffix.to_vector<std::int64_t>() == b.inputs.token_suffix.to_vector<std::int64_t>());
  CHECK(restored->char_filters() == 6);
  // Through a model: Star's embedding adds the character CNN and the suffix table, and both get gradients.
  TrainConfig c = parsed_config({"--task", "tag", "--model", "star", "--train", o.train, "--dev", o.dev, "--hidden",
                                 "8", "--heads", "2", "--layers", "1", "--char-filters", "6", "--suffix-feature"});
  CHECK(c.option<std::int64_t>("char_filters") == 6);
  auto model = make_task_model(c, task);
  model->reset_parameters(3);
  task.batch_loss(*model, model->forward(b.inputs), b).backward();
  std::set<std::string> with_grad;
  for (const auto& [name, param] : model->named_parameters())
    if (param.grad().defined() && nn::sum_all(nn::Var(param.grad()) * nn::Var(param.grad())).item() > 0.f)
      with_grad.insert(name);
  for (const char* name : {"encoder.embedding.char_at", "encoder.embedding.char_before", "encoder.embedding.char_after",
                           "encoder.embedding.char_bias", "encoder.embedding.char_projection.weight",
                           "encoder.embedding.suffix.weight"}) {
    CAPTURE(name);
    CHECK(with_grad.count(name) == 1);
  }
  // BiG reads characters as tokens: the error names the flags that turn these off.
  c.set("model", "big");
  c.set("case_feature", false);
  CHECK(testing::error_of([&] { make_task_model(c, task); }).find("--char-filters 0") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("tag: the character CNN reads a word's first 512 characters; the words cut are counted per split") {
  // A 10 MB token took 6.2 GiB through the CNN (about 600 bytes a character).
  const std::string file = testing::write_temp_file(
      "long_word.conll", "Peter NNP B-PER\n" + std::string(600, 'a') + " NN O\n" + std::string(512, 'b') + " NN O\n\n");
  TagOptions o;
  o.format = "conll";
  o.train = o.dev = file;
  o.char_filters = 4;
  SequenceTagging task(o);
  const TaskBatch b = task.batch(Split::Dev, {0});
  CHECK(b.inputs.chars_per_token == std::vector<std::int64_t>{5, 512, 512});
  CHECK(b.inputs.token_chars.numel() == 5 + 512 + 512);
  const nlohmann::json data = task.metadata().at("data");
  CHECK(data.at("train").at("char_truncated_words") == 1);
  CHECK(data.at("dev").at("char_truncated_words") == 1);
  o.char_filters = 0;  // without the CNN nothing is cut, and valid data's metadata has no count
  CHECK_FALSE(SequenceTagging(o).metadata().at("data").at("train").contains("char_truncated_words"));
}

TEST_CASE("tag: bigram classes from training pairs seen twice, pre-trained pairs from any split, across piece cuts; "
          "topo-eval restores them; Star and BiG train the table") {
  const fs::path dir = testing::fresh_temp_dir("tag_bigrams");
  // BMES characters: "北京" twice in training; the dev sentence has "上海", which only the vectors know.
  std::ofstream(dir / "train.bmes") << "北 B-LOC\n京 E-LOC\n好 O\n\n北 B-LOC\n京 E-LOC\n大 O\n\n";
  std::ofstream(dir / "dev.bmes") << "上 B-LOC\n海 E-LOC\n好 O\n\n";
  std::ofstream(dir / "pairs.vec") << "3 2\n上海 1 0\n北京 0 1\n京好 1 1\n";
  TagOptions o;
  o.format = "bmes";
  o.train = (dir / "train.bmes").string();
  o.dev = (dir / "dev.bmes").string();
  o.bigram_feature = true;
  const SequenceTagging plain(o);
  // Training pairs, once each: <s>北 ×2, 北京 ×2, 京好, 好</s>, 京大, 大</s>. Twice or more: <s>北, 北京.
  const std::vector<std::string> expected{"<pad>", "<unk>", "<s>北", "北京"};
  CHECK(plain.bigrams().tokens() == expected);
  CHECK(plain.bigram_classes() == 4);
  CHECK(plain.bigram_dim() == 0);  // the model's hidden
  const TaskBatch b = plain.batch(Split::Train, {0});
  REQUIRE(b.inputs.token_bigrams.shape() == Shape{3, 2});
  // 北: (<s>北, 北京); 京: (北京, 京好 -> unk); 好: (京好 -> unk, 好</s> -> unk).
  CHECK(b.inputs.token_bigrams.to_vector<std::int64_t>() == std::vector<std::int64_t>{2, 3, 3, 1, 1, 1});
  // Cut into pieces of 2, a token keeps its neighbours in the sentence: 京's right pair is still 京好.
  TagOptions cut = o;
  cut.max_length = 2;
  const SequenceTagging pieces(cut);
  const TaskBatch pb = pieces.batch(Split::Train, {0, 1});
  CHECK(pb.inputs.lengths == std::vector<std::int64_t>{2, 1});
  CHECK(pb.inputs.token_bigrams.to_vector<std::int64_t>() == b.inputs.token_bigrams.to_vector<std::int64_t>());
  // With vectors: covered pairs of any split join (上海 from dev, 京好 from training), the rows hold them.
  o.bigram_vectors = (dir / "pairs.vec").string();
  const SequenceTagging with(o);
  CHECK(with.bigram_classes() == 6);
  CHECK(with.bigram_dim() == 2);
  const std::vector<std::uint8_t> rows = with.bigram_vector_rows();
  const std::vector<float> table = with.bigram_vectors().to_vector<float>();
  const std::int64_t shanghai = with.bigrams().id("上海"), beijing = with.bigrams().id("北京");
  CHECK(shanghai > 3);
  CHECK(rows[static_cast<std::size_t>(shanghai)] == 1);
  CHECK(rows[static_cast<std::size_t>(beijing)] == 1);
  CHECK(rows[static_cast<std::size_t>(with.bigrams().id("<s>北"))] == 0);
  CHECK(table[static_cast<std::size_t>(shanghai) * 2] == 1.f);
  CHECK(table[static_cast<std::size_t>(beijing) * 2 + 1] == 1.f);
  CHECK(with.metadata().at("bigram_vectors").at("vocabulary_added") == 2);
  CHECK(with.batch(Split::Dev, {0}).inputs.token_bigrams.to_vector<std::int64_t>()[1] == shanghai);
  // topo-eval: the same classes and table width from the metadata.
  TagOptions eval;
  eval.test = o.dev;
  const auto restored = SequenceTagging::for_evaluation(with.metadata(), eval);
  CHECK(restored->bigram_classes() == 6);
  CHECK(restored->bigram_dim() == 2);
  CHECK(restored->batch(Split::Test, {0}).inputs.token_bigrams.to_vector<std::int64_t>() ==
        with.batch(Split::Dev, {0}).inputs.token_bigrams.to_vector<std::int64_t>());
  // Through Star: the table (from the vectors) and its projection get gradients.
  TrainConfig c = parsed_config({"--task", "tag", "--model", "star", "--format", "bmes", "--train", o.train, "--dev",
                                 o.dev, "--hidden", "8", "--heads", "2", "--layers", "1", "--bigram-feature",
                                 "--bigram-vectors", o.bigram_vectors});
  CHECK(c.option<bool>("bigram_feature"));
  auto model = make_task_model(c, with);
  model->reset_parameters(3);
  const TaskBatch wb = with.batch(Split::Train, {0, 1});
  with.batch_loss(*model, model->forward(wb.inputs), wb).backward();
  std::set<std::string> with_grad;
  for (const auto& [name, param] : model->named_parameters())
    if (param.grad().defined() && nn::sum_all(nn::Var(param.grad()) * nn::Var(param.grad())).item() > 0.f)
      with_grad.insert(name);
  CHECK(with_grad.count("encoder.embedding.bigrams.table.weight") == 1);
  CHECK(with_grad.count("encoder.embedding.bigrams.projection.weight") == 1);
  // The covered rows start from the vectors.
  for (const auto& [name, param] : model->named_parameters())
    if (name == "encoder.embedding.bigrams.table.weight")
      CHECK(param.data().to_vector<float>()[static_cast<std::size_t>(shanghai) * 2] == 1.f);
  // A training run reports the pair vectors as it reports word vectors (result.json "bigram_vectors").
  TrainConfig run = c;
  run.epochs = 1;
  run.min_steps = 0;  // the tag recipe's 3000 would raise the epochs
  run.progress = "none";
  run.out = (dir / "run").string();
  const TrainResult r = Trainer(run).run();
  REQUIRE(r.completed);
  const nlohmann::json& v = r.result.at("bigram_vectors");
  CHECK(v.at("dim") == 2);
  CHECK(v.at("vocabulary_added") == 2);
  CHECK(v.at("train_coverage").at("types_found") == 3);  // the classes with a vector: 北京, 京好, 上海
  // BiG adds the pairs to its character embedding beside its lexicon words: the table trains there too.
  c.set("model", "big");
  c.set("case_feature", false);
  auto big = make_task_model(c, with);
  big->reset_parameters(4);
  big->zero_grad();
  with.batch_loss(*big, big->forward(wb.inputs), wb).backward();
  bool big_table_trains = false;
  for (const auto& [name, param] : big->named_parameters())
    if (name == "encoder.bigrams.table.weight")
      big_table_trains = nn::sum_all(nn::Var(param.grad()) * nn::Var(param.grad())).item() > 0.f;
  CHECK(big_table_trains);
  // Vectors without the feature: an error, in the config and in the task.
  c.set("model", "star");
  c.set("bigram_feature", false);
  CHECK(testing::error_of([&] { c.validate(); }).find("'bigram_vectors'") != std::string::npos);
  TagOptions no_feature = o;
  no_feature.bigram_feature = false;
  CHECK(testing::error_of([&] { SequenceTagging t(no_feature); }).find("--bigram-feature") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("tag: a CRF trains and evaluates on a BIO file with 'O I-X' slips (Weibo's): gold reads as conlleval reads it") {
  const fs::path dir = testing::fresh_temp_dir("tag_slips");
  const fs::path file = dir / "t.bio";
  std::ofstream f(file);
  f << "张0\tB-PER.NAM\n三0\tI-PER.NAM\n说0\tO\n\n我0\tO\n妈0\tI-PER.NOM\n在0\tO\n北0\tB-GPE.NAM\n京0\tI-GPE.NAM\n\n";
  f.close();
  TagOptions o;
  o.format = "weibo";
  o.train = o.dev = file.string();
  o.crf = true;
  SequenceTagging task(o);
  CHECK(task.scheme() == text::TagScheme::IOB2);  // B- after O: BIO with a slip, not IOB1
  CHECK(task.labels().contains("B-PER.NOM"));      // the slip's chunk starts with B- in the training tags
  TrainConfig c = parsed_config({"--task", "tag", "--model", "star", "--train", o.train, "--dev", o.dev, "--hidden",
                                 "8", "--heads", "2", "--layers", "1", "--crf", "--case-feature=false"});
  auto model = make_task_model(c, task);
  model->reset_parameters(5);
  const TaskBatch b = task.batch(Split::Train, {0, 1});
  const nn::Var loss = task.batch_loss(*model, model->forward(b.inputs), b);
  CHECK(std::isfinite(loss.item()));
  const Evaluation e = task.evaluate(*model, Split::Dev, Device::cpu());
  CHECK(std::isfinite(e.values.at("loss").get<double>()));
  // Scored with the file's own tags: gold against itself is F1 1 whether the slip is written B- or I-.
  CHECK(task.score(Split::Dev, {{"B-PER.NAM", "I-PER.NAM", "O"}, {"O", "I-PER.NOM", "O", "B-GPE.NAM", "I-GPE.NAM"}})
            .overall()
            .f1() == 1.0);
  fs::remove_all(dir);
}
