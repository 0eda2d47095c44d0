// topo-train --task classify end to end on real data, and topo-eval on its checkpoint: a short Star run on
// one MTL-16 domain beats the majority class on dev; topo-eval re-scores the dev lines from a file to the
// same accuracy; malformed data stops the run naming file:line unless skip_bad; resume is identical.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <tuple>

#include "apps/tasks/classify/classify.hpp"
#include "apps/train/evaluate.hpp"
#include "apps/train/io.hpp"
#include "apps/train/model_factory.hpp"
#include "apps/train/trainer.hpp"
#include "kernels/error.hpp"
#include "nn/checkpoint.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::apps;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) { return testing::fresh_temp_dir(name); }

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

void write_lines(const fs::path& path, const std::vector<std::string>& lines) {
  std::ofstream out(path, std::ios::binary);
  for (const std::string& line : lines) out << line << '\n';
}

TrainConfig small_classify(const std::string& train, const fs::path& out) {
  TrainConfig c;
  c.set("task", "classify");
  c.set("model", "star");
  c.set("format", "mtl");
  c.set("train", train);
  c.set("max_len", 64);
  c.layers = 1;
  c.hidden = 32;
  c.heads = 4;
  c.head_hidden = 32;
  c.epochs = 4;
  c.batch = 32;
  c.lr = 2e-3;
  c.dropout = 0.1;
  c.progress = "none";
  c.out = out.string();
  return c;
}

}  // namespace

TEST_CASE("classify: Star on MTL-16 apparel beats the majority class on dev; topo-eval re-scores it from a file") {
  const std::string train = testing::shared_data_path("mtl16/apparel.task.train");
  const fs::path dir = fresh_dir("apparel");
  TrainConfig c = small_classify(train, dir / "run");
  const TrainResult r = Trainer(c).run();
  REQUIRE(r.completed);
  CHECK(r.metric == "acc");
  CHECK_FALSE(r.has_test);  // MTL-16 test files are held back: the run reports dev only
  const nlohmann::json& res = r.result;
  const double majority = res.at("majority_acc").get<double>();
  INFO("dev acc " << r.best_dev_metric << " majority " << majority);
  CHECK(res.at("baseline_split") == "dev");
  CHECK(r.best_dev_metric > majority + 0.1);
  CHECK(res.at("dev_acc").get<double>() == r.best_dev_metric);
  CHECK(res.at("data").at("train").at("examples").get<std::int64_t>() == 1400);
  CHECK(res.at("data").at("dev").at("examples").get<std::int64_t>() == 200);
  CHECK(res.at("data").at("train").at("truncated").get<std::int64_t>() > 0);  // apparel has reviews > 64 tokens
  for (const char* key : {"params", "dev_loss", "dev_ms_per_batch", "train_seconds", "config", "epochs_done"})
    CHECK_MESSAGE(res.contains(key), key);

  // The dev split is the file's last 200 lines: written to a file of their own and scored through topo-eval's
  // library call, the best checkpoint gives exactly the best dev accuracy.
  const auto lines = read_lines(train);
  REQUIRE(lines.size() == 1600u);
  write_lines(dir / "dev.txt", {lines.end() - 200, lines.end()});
  EvalOptions e;
  e.checkpoint = c.out;  // a run directory: its best.ckpt
  e.test = (dir / "dev.txt").string();
  e.json = (dir / "eval.json").string();
  const nlohmann::json eval = evaluate_checkpoint(e);
  CHECK(eval.at("acc").get<double>() == r.best_dev_metric);
  CHECK(eval.at("examples").get<std::int64_t>() == 200);
  CHECK(eval.at("format") == "mtl");
  std::ifstream written(e.json);
  REQUIRE(written.good());
  CHECK(nlohmann::json::parse(written).at("acc") == eval.at("acc"));

  // The vocabulary and labels ride in the checkpoint: unseen words are <unk>, an unseen label is an error
  // naming the file and line.
  write_lines(dir / "odd.txt", {"1\tzzqqx frobnicated", "7\tgreat shirt"});
  e.test = (dir / "odd.txt").string();
  e.json.clear();
  const std::string message = testing::error_of([&] { evaluate_checkpoint(e); });
  CHECK(message.find("odd.txt:2") != std::string::npos);
  CHECK(message.find("'7'") != std::string::npos);
  e.checkpoint = (dir / "missing").string();
  CHECK(testing::error_of([&] { evaluate_checkpoint(e); }).find("missing") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("classify: a malformed line stops the run naming file:line; skip_bad skips and counts it") {
  const fs::path dir = fresh_dir("bad");
  std::vector<std::string> lines;
  for (int i = 0; i < 60; ++i) lines.push_back(std::string(i % 2 ? "1\tgood fine nice " : "0\tbad awful poor ") + std::to_string(i));
  lines[17] = "1 no tab on this line";
  write_lines(dir / "data.tsv", lines);
  TrainConfig c = small_classify((dir / "data.tsv").string(), dir / "run");
  c.set("dev_split", 20);
  c.epochs = 1;
  const std::string message = testing::error_of([&] { Trainer(c).run(); });
  CHECK(message.find("data.tsv:18") != std::string::npos);
  c.set("skip_bad", true);
  const TrainResult r = Trainer(c).run();
  REQUIRE(r.completed);
  CHECK(r.result.at("data").at("train").at("skipped_bad").get<std::int64_t>() == 1);
  CHECK(r.result.at("data").at("train").at("examples").get<std::int64_t>() == 39);
  fs::remove_all(dir);
}

TEST_CASE("classify: interrupted and resumed runs give the same losses and dev accuracy (Transformer, dense)") {
  const fs::path dir = fresh_dir("resume");
  std::vector<std::string> lines;
  for (int i = 0; i < 300; ++i) {
    std::string text = i % 3 == 0 ? "0\t" : "1\t";
    for (int w = 0; w < 3 + i % 11; ++w) text += (i % 3 == 0 ? "meh " : "wow ") + std::to_string((i * 7 + w) % 13) + " ";
    lines.push_back(text);
  }
  write_lines(dir / "data.tsv", lines);
  TrainConfig c = small_classify((dir / "data.tsv").string(), dir / "full");
  c.set("format", "tsv");
  c.set("model", "transformer");
  set_config_field(c, "attention", "dense");
  c.set("dev_split", 50);
  c.epochs = 3;
  const TrainResult full = Trainer(c).run();
  REQUIRE(full.completed);
  c.out = (dir / "part").string();
  c.stop_after = 1;
  const TrainResult part1 = Trainer(c).run();
  CHECK_FALSE(part1.completed);
  c.stop_after = 0;
  c.resume = "on";
  const TrainResult part2 = Trainer(c).run();
  REQUIRE(part2.completed);
  REQUIRE(part1.losses.size() + part2.losses.size() == full.losses.size());
  for (std::size_t i = 0; i < full.losses.size(); ++i)
    CHECK((i < part1.losses.size() ? part1.losses[i] : part2.losses[i - part1.losses.size()]) == full.losses[i]);
  CHECK(part2.best_dev_metric == full.best_dev_metric);

  // topo-eval can run the trained dense Transformer through the graph kernels instead: same parameters,
  // same function, so the same accuracy on the dev lines.
  write_lines(dir / "dev.tsv", {lines.end() - 50, lines.end()});
  EvalOptions e;
  e.checkpoint = c.out;
  e.test = (dir / "dev.tsv").string();
  const nlohmann::json dense = evaluate_checkpoint(e);
  CHECK(dense.at("acc").get<double>() == full.best_dev_metric);
  e.attention = "graph";
  const nlohmann::json graph = evaluate_checkpoint(e);
  CHECK(graph.at("attention") == "graph");
  CHECK(graph.at("acc") == dense.at("acc"));
  CHECK(graph.at("loss").get<double>() == doctest::Approx(dense.at("loss").get<double>()).epsilon(1e-4));
  fs::remove_all(dir);
}

TEST_CASE("classify config: missing or inconsistent fields are rejected naming the field") {
  TrainConfig c;
  c.set("task", "classify");
  c.set("model", "star");
  c.set("format", "sst");
  CHECK(testing::error_of([&] { c.validate(); }).find("'train'") != std::string::npos);
  c.set("train", "x");
  CHECK(testing::error_of([&] { c.validate(); }).find("'dev'") != std::string::npos);
  c.set("dev", "y");
  c.validate();
  c.set("format", "csv");
  CHECK(testing::error_of([&] { c.validate(); }).find("'format'") != std::string::npos);
  c.set("format", "mtl");
  c.set("subtrees", true);
  CHECK(testing::error_of([&] { c.validate(); }).find("'subtrees'") != std::string::npos);
  c.set("subtrees", false);
  c.set("format", "sst");
  c.set("unique_subtrees", true);
  CHECK(testing::error_of([&] { c.validate(); }).find("'unique_subtrees'") != std::string::npos);
  c.set("subtrees", true);
  c.validate();
  c.set("subtrees", false);
  c.set("unique_subtrees", false);
  c.set("format", "mtl");
  CHECK(testing::error_of([&] { set_config_field(c, "attention", "dense"); })
            .find("'attention' applies only to --model transformer, multiscale") != std::string::npos);
  c.set("train", "/nonexistent/file.txt");
  c.set("dev", "");
  CHECK(testing::error_of([&] { make_task(c); }).find("/nonexistent/file.txt") != std::string::npos);
}

TEST_CASE("classify: --vectors replace the initial embedding rows they cover and no others; --freeze-vectors") {
  const fs::path dir = fresh_dir("vectors");
  std::vector<std::string> lines;
  for (int i = 0; i < 80; ++i) lines.push_back(i % 2 ? "1\tgood fine day" : "0\tbad awful day");
  write_lines(dir / "data.tsv", lines);
  // 4-dimensional vectors for two of the four words, one absent from the data; a malformed line is skipped.
  write_lines(dir / "vectors.txt", {"good 0.5 -1 2 0.25", "zebra 1 1 1 1", "bad -0.5 1 -2 -0.25", "fine 1 2"});
  TrainConfig c = small_classify((dir / "data.tsv").string(), dir / "run");
  c.set("format", "tsv");
  c.set("dev_split", 20);
  c.epochs = 2;
  c.hidden = 4;
  c.heads = 2;
  TrainConfig plain = c;
  c.set("vectors", (dir / "vectors.txt").string());
  c.set("freeze_vectors", true);
  // The same seed with and without vectors: every parameter is the same except the covered rows.
  const auto task = make_task(c);
  const auto& vocab = dynamic_cast<const TextClassification&>(*task).vocabulary();
  const auto with = make_task_model(c, *task);
  const auto without = make_task_model(plain, *make_task(plain));
  with->reset_parameters(7);
  without->reset_parameters(7);
  const auto with_params = with->named_parameters(), without_params = without->named_parameters();
  REQUIRE(with_params.size() == without_params.size());
  auto token_row = [&](const Tensor& weight, const std::string& token) {
    const std::vector<float> w = weight.to_vector<float>();
    const auto id = static_cast<std::ptrdiff_t>(vocab.id(token));
    return std::vector<float>(w.begin() + id * 4, w.begin() + id * 4 + 4);
  };
  for (std::size_t i = 0; i < with_params.size(); ++i) {
    const auto& [name, p] = with_params[i];
    CHECK(name == without_params[i].first);
    TOPO_CAPTURE(name);
    const Tensor a = p.data(), b = without_params[i].second.data();
    if (name != "encoder.embedding.token.weight") {
      CHECK(a.to_vector<float>() == b.to_vector<float>());
      continue;
    }
    CHECK(token_row(a, "good") == std::vector<float>{0.5f, -1.f, 2.f, 0.25f});
    CHECK(token_row(a, "bad") == std::vector<float>{-0.5f, 1.f, -2.f, -0.25f});
    CHECK(token_row(b, "good") != token_row(a, "good"));
    for (const char* other : {"<pad>", "<unk>", "fine", "awful", "day"})
      CHECK_MESSAGE(token_row(a, other) == token_row(b, other), other);
  }

  // Frozen: after training the whole table is still its initial draw with the vectors in place.
  const TrainResult r = Trainer(c).run();
  REQUIRE(r.completed);
  const nlohmann::json& v = r.result.at("vectors");
  CHECK(v.at("dim") == 4);
  CHECK(v.at("bad_lines") == 1);
  CHECK(v.at("train_coverage").at("types") == 5);  // good fine day bad awful
  CHECK(v.at("train_coverage").at("types_found") == 2);
  CHECK(v.at("train_coverage").at("tokens") == 60 * 3);
  CHECK(v.at("train_coverage").at("tokens_found") == 60);  // one of good/bad per sentence
  const auto model = make_task_model(c, *task);
  nn::load_checkpoint(Trainer::best_path(c.out), *model, nullptr, nullptr);
  Tensor trained;
  for (const auto& [name, p] : model->named_parameters())
    if (name == "encoder.embedding.token.weight") trained = p.data();
  REQUIRE(trained.defined());
  CHECK(token_row(trained, "good") == std::vector<float>{0.5f, -1.f, 2.f, 0.25f});
  fs::remove_all(dir);
}

TEST_CASE("classify: vectors narrower than --hidden go through a projection; result.json's test_accuracy is "
          "topo-eval's on the same file") {
  const fs::path dir = fresh_dir("vectors_projected");
  std::vector<std::string> lines, test;
  for (int i = 0; i < 80; ++i) lines.push_back(i % 2 ? "1\tgood fine day" : "0\tbad awful day");
  for (int i = 0; i < 30; ++i) test.push_back(i % 3 ? "1\tGood day" : "0\tawful Bad day");
  write_lines(dir / "data.tsv", lines);
  write_lines(dir / "test.tsv", test);
  const std::string vectors = testing::write_temp_file("vectors_narrow.txt", "good 0.5 -1 2\nbad -0.5 1 -2\n");
  TrainConfig c = small_classify((dir / "data.tsv").string(), dir / "run");
  c.set("format", "tsv");
  c.set("dev_split", 20);
  c.set("test", (dir / "test.tsv").string());
  c.epochs = 3;
  c.hidden = 8;
  c.heads = 2;
  c.set("vectors", vectors);
  const TrainResult r = Trainer(c).run();
  REQUIRE(r.completed);
  REQUIRE(r.has_test);
  const nlohmann::json& res = r.result;
  CHECK(res.at("vectors").at("dim") == 3);
  CHECK(res.at("dev_accuracy").get<double>() == r.best_dev_metric);
  CHECK(res.at("test_accuracy").get<double>() == r.test_metric);
  const auto task = make_task(c);
  std::map<std::string, Shape> shapes;
  for (const auto& [name, p] : make_task_model(c, *task)->named_parameters()) shapes[name] = p.shape();
  CHECK(shapes.at("encoder.embedding.token.weight") == Shape{task->vocab_size(), 3});
  CHECK(shapes.at("encoder.embedding.token_projection.weight") == Shape{8, 3});

  // topo-eval rebuilds the model from the checkpoint alone (no vectors file) and gives the same number.
  EvalOptions e;
  e.checkpoint = c.out;
  e.test = c.option<std::string>("test");
  CHECK(evaluate_checkpoint(e).at("acc").get<double>() == res.at("test_accuracy").get<double>());

  // Without a test file there is no test_accuracy; dev_accuracy is still the selected checkpoint's.
  c.set("test", "");
  c.out = (dir / "run_no_test").string();
  const TrainResult d = Trainer(c).run();
  CHECK_FALSE(d.result.contains("test_accuracy"));
  CHECK(d.result.at("dev_accuracy").get<double>() == d.best_dev_metric);
  fs::remove_all(dir);
}

TEST_CASE("classify: vectors_vocabulary brings the words the vectors cover into the vocabulary: train, data, all") {
  const fs::path dir = fresh_dir("vectors_vocabulary");
  std::vector<std::string> lines;
  for (int i = 0; i < 80; ++i) lines.push_back(i % 2 ? "1\tgood fine day" : "0\tbad awful day");
  lines.insert(lines.begin(), "1\trare good day");  // "rare": once in training, under min_freq 2
  write_lines(dir / "data.tsv", lines);
  write_lines(dir / "test.tsv", {"1\tlovely day", "0\tawful day"});  // "lovely": only in the test file
  write_lines(dir / "vectors.txt",
              {"good 0.5 -1 2 0.25", "zebra 1 1 1 1", "rare 2 2 2 2", "lovely 3 3 3 3", "bad -0.5 1 -2 -0.25"});
  TrainConfig c = small_classify((dir / "data.tsv").string(), dir / "run");
  c.set("format", "tsv");
  c.set("dev_split", 20);
  c.set("test", (dir / "test.tsv").string());
  c.set("min_freq", 2);
  c.set("vectors", (dir / "vectors.txt").string());
  c.epochs = 2;
  c.hidden = 4;
  c.heads = 2;
  auto vocabulary_of = [&](const std::string& which) {
    c.set("vectors_vocabulary", which);
    const auto task = make_task(c);
    return dynamic_cast<const TextClassification&>(*task).vocabulary();
  };
  const text::Vocabulary train = vocabulary_of("train"), data = vocabulary_of("data"), all = vocabulary_of("all");
  for (const char* w : {"rare", "lovely", "zebra"}) CHECK_MESSAGE(!train.contains(w), w);
  CHECK(data.contains("rare"));
  CHECK(data.contains("lovely"));
  CHECK(!data.contains("zebra"));
  CHECK(data.size() == train.size() + 2);
  CHECK(all.size() == train.size() + 3);
  // The training vocabulary keeps its ids: the added words come after it.
  for (std::int64_t id = 0; id < train.size(); ++id) CHECK(all.token(id) == train.token(id));

  // "all": the rows training never reads (the test file's word, the vectors' own) sit in the token table's
  // frozen tail, outside the optimizer, and keep their vectors; topo-eval reads them from the checkpoint alone.
  c.set("vectors_vocabulary", "all");
  const TrainResult r = Trainer(c).run();
  REQUIRE(r.completed);
  CHECK(r.result.at("vectors").at("vocabulary_added") == 3);
  const auto task = make_task(c);
  const auto model = make_task_model(c, *task);
  nn::load_checkpoint(Trainer::best_path(c.out), *model, nullptr, nullptr);
  CHECK(task->trained_rows() == train.size() + 1);  // the training tokens, "rare" with them
  Tensor head, tail;
  for (const auto& [name, p] : model->named_parameters()) {
    if (name == "encoder.embedding.token.weight") head = p.data();
    if (name == "encoder.embedding.token.tail") {
      tail = p.data();
      CHECK_FALSE(p.requires_grad());
    }
  }
  REQUIRE(head.defined());
  REQUIRE(tail.defined());
  CHECK(head.shape() == Shape{train.size() + 1, 4});
  CHECK(tail.shape() == Shape{2, 4});
  std::vector<float> w = head.to_vector<float>();
  for (const float x : tail.to_vector<float>()) w.push_back(x);
  auto row = [&](const std::string& token) {
    const auto id = static_cast<std::ptrdiff_t>(all.id(token));
    return std::vector<float>(w.begin() + id * 4, w.begin() + id * 4 + 4);
  };
  CHECK(row("zebra") == std::vector<float>{1.f, 1.f, 1.f, 1.f});
  CHECK(row("lovely") == std::vector<float>{3.f, 3.f, 3.f, 3.f});
  CHECK(row("rare") != std::vector<float>{2.f, 2.f, 2.f, 2.f});  // trained: it is in the training text
  EvalOptions e;
  e.checkpoint = c.out;
  e.test = (dir / "test.tsv").string();
  CHECK(evaluate_checkpoint(e).at("acc").get<double>() == r.result.at("test_accuracy").get<double>());

  CHECK(testing::error_of([&] { c.set("vectors_vocabulary", "some"); }).find("vectors_vocabulary") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("classify: a label seen only in the test file is an error naming file:line, not a new class") {
  const fs::path dir = fresh_dir("test_only_label");
  std::vector<std::string> train;
  for (int i = 0; i < 40; ++i) train.push_back(i % 2 ? "pos\tgood fine day" : "neg\tbad awful day");
  write_lines(dir / "train.tsv", train);
  write_lines(dir / "test.tsv", {"pos\tgood", "neg\tbad", "neutral\tso so"});
  TrainConfig c = small_classify((dir / "train.tsv").string(), dir / "run");
  c.set("format", "tsv");
  c.set("dev_split", 10);
  c.set("test", (dir / "test.tsv").string());
  const std::string message = testing::error_of([&] { make_task(c); });
  CHECK(message.find("test.tsv:3") != std::string::npos);
  CHECK(message.find("'neutral'") != std::string::npos);
  write_lines(dir / "test.tsv", {"pos\tgood", "neg\tbad"});
  const auto task = make_task(c);
  CHECK(dynamic_cast<const TextClassification&>(*task).labels().size() == 2);
  fs::remove_all(dir);
}

TEST_CASE("topo-eval: a checkpoint with missing or malformed metadata is an error naming the file and the key") {
  const fs::path dir = fresh_dir("eval_metadata");
  std::vector<std::string> lines;
  for (int i = 0; i < 40; ++i) lines.push_back(i % 2 ? "1\tgood fine day" : "0\tbad awful day");
  write_lines(dir / "data.txt", lines);
  TrainConfig c = small_classify((dir / "data.txt").string(), dir / "run");
  c.set("dev_split", 10);
  c.epochs = 1;
  c.hidden = 8;
  c.heads = 2;
  c.head_hidden = 8;
  REQUIRE(Trainer(c).run().completed);
  const std::string best = Trainer::best_path(c.out);
  const nlohmann::json meta = nn::read_checkpoint_index(best).at("metadata");
  const auto task = make_task(c);
  const auto model = make_task_model(c, *task);
  nn::load_checkpoint(best, *model, nullptr, nullptr);

  // Each damaged copy keeps the parameters and loses or breaks one piece of metadata.
  auto damaged = [&](const std::string& name, const std::function<void(nlohmann::json&)>& damage) {
    nlohmann::json m = meta;
    damage(m);
    const std::string path = (dir / (name + ".ckpt")).string();
    nn::save_checkpoint(path, *model, nullptr, nullptr, 0, m);
    EvalOptions e;
    e.checkpoint = path;
    e.test = (dir / "data.txt").string();
    return std::pair{path, testing::error_of([&] { evaluate_checkpoint(e); })};
  };
  for (const auto& [name, key, damage] :
       std::vector<std::tuple<std::string, std::string, std::function<void(nlohmann::json&)>>>{
           {"no_read", "'read'", [](nlohmann::json& m) { m["task"].erase("read"); }},
           {"no_labels", "'labels'", [](nlohmann::json& m) { m["task"].erase("labels"); }},
           {"no_encoding", "encoding", [](nlohmann::json& m) { m["task"]["read"].erase("encoding"); }},
           {"bad_vocab", "vocab", [](nlohmann::json& m) { m["task"]["vocabulary"] = 5; }},
           {"no_task", "task", [](nlohmann::json& m) { m.erase("task"); }}}) {
    const auto [path, message] = damaged(name, damage);
    TOPO_CAPTURE(name);
    TOPO_CAPTURE(message);
    CHECK(message.find(path) != std::string::npos);
    CHECK(message.find(key) != std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("classify: lr_base_width scales the Linears whose fan-in grows with hidden (muP), nothing at the base "
          "width, and resumes exactly") {
  const fs::path dir = fresh_dir("lr_width");
  std::vector<std::string> lines;
  for (int i = 0; i < 120; ++i) lines.push_back(i % 2 ? "1\tgood fine day " + std::to_string(i % 7) : "0\tbad awful day");
  write_lines(dir / "data.tsv", lines);
  const std::string vectors = testing::write_temp_file("vectors_lr_width.txt", "good 0.5 -1 2\nbad -0.5 1 -2\n");
  TrainConfig c = small_classify((dir / "data.tsv").string(), dir / "plain");
  c.set("format", "tsv");
  c.set("dev_split", 20);
  c.set("vectors", vectors);
  c.epochs = 2;
  c.hidden = 32;
  c.heads = 4;
  c.head_hidden = 16;
  const auto task = make_task(c);
  const auto model = make_task_model(c, *task);

  c.lr_base_width = 8;
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> scaled;  // name -> fan-in, base fan-in
  for (const WidthLrScale& w : width_lr_scales(c, *task, *model)) {
    scaled[w.name] = {w.fan_in, w.base_fan_in};
    CHECK(w.scale() == doctest::Approx(0.25));
  }
  // Star's attention projections (hidden -> hidden) and the head's first layer (hidden -> head_hidden) grow
  // with hidden; the vectors' projection (3 -> hidden) and the head's last layer (head_hidden -> classes) do not.
  CHECK(scaled.at("encoder.layers.0.satellite_attention.q") == std::pair<std::int64_t, std::int64_t>{32, 8});
  CHECK(scaled.at("encoder.layers.0.relay_attention.o") == std::pair<std::int64_t, std::int64_t>{32, 8});
  CHECK(scaled.at("head.layers.0") == std::pair<std::int64_t, std::int64_t>{32, 8});
  CHECK(scaled.size() == 9);  // 8 attention projections of the one layer + the head's first
  CHECK_FALSE(scaled.contains("encoder.embedding.token_projection"));
  CHECK_FALSE(scaled.contains("head.layers.1"));
  for (const std::int64_t base : {0, 32, 64}) {  // off, the width itself, wider than it: nothing scaled
    c.lr_base_width = base;
    CHECK(width_lr_scales(c, *task, *model).empty());
  }

  // At the base width the run is the one-lr run, bit for bit; below it the scaled weights learn slower.
  c.lr_base_width = 0;
  const TrainResult plain = Trainer(c).run();
  c.lr_base_width = 32;
  c.out = (dir / "base").string();
  const TrainResult base = Trainer(c).run();
  REQUIRE(plain.completed);
  REQUIRE(base.completed);
  CHECK(base.losses == plain.losses);
  c.lr_base_width = 8;
  c.out = (dir / "scaled").string();
  const TrainResult scaled_run = Trainer(c).run();
  REQUIRE(scaled_run.completed);
  CHECK(scaled_run.losses.front() == plain.losses.front());  // the same initial model and first batch
  CHECK(scaled_run.losses != plain.losses);
  CHECK(scaled_run.result.at("config").at("lr_base_width") == 8);
  // A checkpoint records the field as it takes effect: 0 at the base width, as a run from before the field
  // recorded it (its default), so such runs resume across it; 8 where it scales.
  const auto recorded = [&](const char* run) {
    return nn::read_checkpoint_index(Trainer::checkpoint_path((dir / run).string()))
        .at("metadata").at("config").at("lr_base_width").get<std::int64_t>();
  };
  CHECK(recorded("base") == 0);
  CHECK(recorded("scaled") == 8);

  // The split optimizer groups are in the checkpoint: stopped after one epoch and resumed, the same losses.
  c.out = (dir / "part").string();
  c.stop_after = 1;
  const TrainResult part1 = Trainer(c).run();
  c.stop_after = 0;
  c.resume = "on";
  const TrainResult part2 = Trainer(c).run();
  REQUIRE(part2.completed);
  std::vector<float> joined = part1.losses;
  joined.insert(joined.end(), part2.losses.begin(), part2.losses.end());
  CHECK(joined == scaled_run.losses);
  fs::remove_all(dir);
}

TEST_CASE("topo-eval's command line: a batch or thread count out of range names the value as typed") {
  const auto error_parsing = [](std::vector<const char*> args) {
    args.insert(args.begin(), {"topo-eval", "--checkpoint", "run", "--test", "t.txt"});
    std::ostringstream out;
    return topo::testing::error_of([&] { (void)parse_eval_args(static_cast<int>(args.size()), args.data(), out); });
  };
  // CLI11 clamps 10^20 to 2^63 - 1: --batch ran with it, --threads reported 9223372036854775807.
  CHECK(error_parsing({"--batch", "99999999999999999999"}).find("--batch: Value 99999999999999999999 not in range") !=
        std::string::npos);
  CHECK(error_parsing({"--batch", "0"}).find("--batch: Value 0 not in range 1 to 16777216") != std::string::npos);
  CHECK(error_parsing({"--threads", "99999999999999999999"})
            .find("--threads: Value 99999999999999999999 not in range 0 to 4096") != std::string::npos);
  const char* fine[] = {"topo-eval", "--checkpoint", "run", "--test", "t.txt", "--batch", "16", "--threads", "0"};
  std::ostringstream out;
  const auto o = parse_eval_args(9, fine, out);
  REQUIRE(o.has_value());
  CHECK(o->batch == 16);
}
