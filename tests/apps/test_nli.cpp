// --task nli: SNLI's JSON lines (plain or gzip) read with their gold labels, "-" pairs left out and counted, bad
// lines named by file:line; premises and hypotheses go through one encoder in one batch; Star learns a slice of
// the shared SNLI files well above the majority class, and topo-eval re-scores the checkpoint on a file.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <zlib.h>

#include "apps/tasks/classify/classify.hpp"
#include "apps/text/dataset.hpp"
#include "apps/train/config.hpp"
#include "apps/train/evaluate.hpp"
#include "apps/train/trainer.hpp"
#include "models/registry.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::apps;
namespace fs = std::filesystem;
using topo::testing::error_of;

namespace {

// The first `count` lines of a (gzipped) JSON-lines file, written plain to `to`.
void head_lines(const std::string& from, const fs::path& to, int count) {
  gzFile in = gzopen(from.c_str(), "rb");
  REQUIRE(in != nullptr);
  std::ofstream out(to);
  char line[1 << 16];
  for (int i = 0; i < count && gzgets(in, line, sizeof line) != nullptr; ++i) out << line;
  gzclose(in);
}

const char* kPair =
    R"json({"gold_label": "entailment", "sentence1": "A boy climbs a tree.",)json"
    R"json( "sentence1_binary_parse": "( ( A boy ) ( ( climbs ( a tree ) ) . ) )", "sentence2": "A kid is outdoors.",)json"
    R"json( "sentence2_binary_parse": "( ( A kid ) ( ( is outdoors ) . ) )"})json";

}  // namespace

TEST_CASE("snli reader: labels, parse tokens or text tokens, '-' pairs counted, bad lines named, gzip") {
  const auto dir = topo::testing::fresh_temp_dir("snli_reader");
  const fs::path path = dir / "pairs.jsonl";
  std::ofstream(path) << kPair << "\n"
                      << R"({"gold_label": "-", "sentence1": "x", "sentence2": "y"})" << "\n"
                      << R"({"gold_label": "contradiction", "sentence1": "A dog runs.", "sentence2": "A cat sleeps."})" << "\n";
  text::ReadOptions o;
  const text::Dataset d = text::read_snli(path.string(), o);
  REQUIRE(d.examples.size() == 2u);
  CHECK(d.stats.unlabelled == 1);
  CHECK(d.examples[0].label == "entailment");
  CHECK(d.examples[0].tokens == std::vector<std::string>{"A", "boy", "climbs", "a", "tree", "."});
  CHECK(d.examples[0].tokens2 == std::vector<std::string>{"A", "kid", "is", "outdoors", "."});
  CHECK(d.examples[1].tokens == std::vector<std::string>{"A", "dog", "runs."});  // no parse: the text's words
  CHECK(d.examples[1].line == 3);
  o.parse_tokens = false;
  CHECK(text::read_snli(path.string(), o).examples[0].tokens.back() == "tree.");

  // gzip reads the same (every reader takes .gz).
  REQUIRE(std::system(("gzip -c " + path.string() + " > " + path.string() + ".gz").c_str()) == 0);
  CHECK(text::read_snli(path.string() + ".gz", text::ReadOptions{}).examples.size() == 2u);

  auto bad = [&](const std::string& line) {
    const fs::path p = dir / "bad.jsonl";
    std::ofstream(p) << kPair << "\n" << line << "\n";
    return error_of([&] { text::read_snli(p.string(), text::ReadOptions{}); });
  };
  CHECK(bad("not json").find("bad.jsonl:2: bad JSON") != std::string::npos);
  CHECK(bad(R"({"gold_label": "neutral", "gold_label": "entailment", "sentence1": "a", "sentence2": "b"})")
            .find("bad.jsonl:2: bad JSON: [json.exception.parse_error.101] parse error: the key \"gold_label\" appears "
                  "twice") != std::string::npos);
  CHECK(bad(R"({"gold_label": )" + std::string(100000, '[') + std::string(100000, ']') + "}")
            .find("bad.jsonl:2: bad JSON: [json.exception.parse_error.101] parse error: nested deeper") !=
        std::string::npos);
  CHECK(bad(R"({"sentence1": "a", "sentence2": "b"})").find(":2: no 'gold_label' field") != std::string::npos);
  CHECK(bad(R"({"gold_label": "maybe", "sentence1": "a", "sentence2": "b"})").find(":2: gold_label 'maybe'") !=
        std::string::npos);
  CHECK(bad(R"({"gold_label": "neutral", "sentence1": "a"})").find(":2: no 'sentence2' field") != std::string::npos);
  CHECK(bad(R"({"gold_label": "neutral", "sentence1": "a", "sentence2": 3})").find(":2: 'sentence2' must be a string") !=
        std::string::npos);
  // A parse of another type is corrupt, not absent (the text's words were read instead, with nothing said).
  CHECK(bad(R"({"gold_label": "neutral", "sentence1": "a", "sentence1_binary_parse": 5, "sentence2": "b"})")
            .find(":2: 'sentence1_binary_parse' must be a string, got number") != std::string::npos);
  text::ReadOptions skip;
  skip.skip_bad = true;
  const fs::path p = dir / "skip.jsonl";
  std::ofstream(p) << kPair << "\nnot json\n";
  CHECK(text::read_snli(p.string(), skip).stats.skipped_bad == 1);
  fs::path corrupt = dir / "corrupt.jsonl.gz";
  std::ofstream(corrupt, std::ios::binary) << std::string("\x1f\x8b\x08\x00garbage", 12);
  CHECK(error_of([&] { text::read_snli(corrupt.string(), text::ReadOptions{}); }).find("corrupt.jsonl.gz") !=
        std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("nli: Star learns a slice of SNLI above the majority class; topo-eval re-scores the checkpoint") {
  const std::string train_all = topo::testing::shared_data_path("snli/snli_1.0_train_part.jsonl.gz");
  const std::string dev_all = topo::testing::shared_data_path("snli/snli_1.0_dev_part.jsonl.gz");
  const auto dir = topo::testing::fresh_temp_dir("nli_star");
  head_lines(train_all, dir / "train.jsonl", 6000);
  head_lines(dev_all, dir / "dev.jsonl", 600);
  TrainConfig c;
  c.set("task", "nli").set("model", "star");
  c.set("train", (dir / "train.jsonl").string()).set("dev", (dir / "dev.jsonl").string());
  c.hidden = 48;
  c.heads = 4;
  c.head_hidden = 48;
  c.epochs = 3;
  c.batch = 32;
  c.progress = "none";
  c.out = (dir / "run").string();
  const TrainResult r = Trainer(c).run();
  REQUIRE(r.completed);
  const double majority = r.result.at("majority_acc").get<double>();
  INFO("dev acc " << r.best_dev_metric << ", majority " << majority);
  CHECK(r.best_dev_metric > majority + 0.08);
  CHECK(r.result.at("data").at("train").at("examples").get<std::int64_t>() > 5900);  // "-" pairs left out

  EvalOptions e;
  e.checkpoint = c.out;
  e.test = (dir / "dev.jsonl").string();
  const nlohmann::json eval = evaluate_checkpoint(e);
  CHECK(eval.at("acc").get<double>() == r.best_dev_metric);
  CHECK(eval.at("format") == "snli");
  CHECK(eval.at("report").get<std::string>().find("star on") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("nli config: files are required and the task's own options are checked") {
  TrainConfig c;
  c.set("task", "nli").set("model", "star");
  CHECK(error_of([&] { c.validate(); }).find("'train'") != std::string::npos);
  c.set("train", "x");
  CHECK(error_of([&] { c.validate(); }).find("'dev'") != std::string::npos);
  c.set("dev", "y");
  CHECK_NOTHROW(c.validate());
  CHECK(error_of([&] { c.set("tokens", "bpe"); }).find("'tokens' = 'bpe': expected one of parse, text") !=
        std::string::npos);
  CHECK(error_of([&] { c.set("format", "snli"); }).find("applies only to --task classify, tag") != std::string::npos);
  c.set("model", "deepsets");
  CHECK(error_of([&] { c.validate(); }).find("nli needs a model that reads token ids") != std::string::npos);
}

TEST_CASE("nli: a training file without two labels is an error naming the nli task and the file, not classify") {
  const auto dir = topo::testing::fresh_temp_dir("nli_one_label");
  const fs::path train = dir / "train.jsonl", dashes = dir / "dashes.jsonl";
  std::ofstream(train) << kPair << "\n" << kPair << "\n";
  std::ofstream(dashes) << R"({"gold_label": "-", "sentence1": "x", "sentence2": "y"})" << "\n";
  const auto error_training_on = [&](const fs::path& file) {
    TrainConfig c;
    c.set("task", "nli").set("model", "star");
    c.set("train", file.string()).set("dev", train.string());
    c.progress = "none";
    c.out = (dir / "run").string();
    return error_of([&] { Trainer(c).run(); });
  };
  const std::string one = error_training_on(train), none = error_training_on(dashes);
  CHECK(one.find("nli: '" + train.string() + "' has a single label 'entailment'") != std::string::npos);
  CHECK(none.find("nli: '" + dashes.string() + "' holds no training examples") != std::string::npos);
  CHECK(one.find("classify:") == std::string::npos);
  fs::remove_all(dir);
}
