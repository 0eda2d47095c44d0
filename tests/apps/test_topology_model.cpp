// `topo-train --model graph --topology FILE.json` from the command line: the file's head groups set --heads
// and --layers over the recipe; a value the user types that disagrees, a bad file and --topology with another
// model are errors naming the file, path or owner before any data is read; a file trains and a checkpoint
// evaluates through topo-eval.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "apps/train/cli.hpp"
#include "apps/train/config.hpp"
#include "apps/train/trainer.hpp"
#include "tests/apps/train_args.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::apps;
using topo::testing::error_of;

namespace {

std::string shipped(const std::string& name) {
  return std::string(TOPO_SOURCE_DIR) + "/configs/topologies/" + name + ".json";
}

std::optional<TrainConfig> parse(std::vector<std::string> args) {
  return topo::testing::parse_train_command(std::move(args));
}

}  // namespace

TEST_CASE("graph model: the file's head groups set heads and layers; a typed value must agree") {
  const auto ms = parse({"--task", "classify", "--model", "graph", "--topology", shipped("multiscale"), "--train", "x",
                         "--format", "mtl"});
  REQUIRE(ms.has_value());
  CHECK(ms->heads == 10);  // over the recipe's 4
  CHECK(ms->layers == 2);
  CHECK(ms->sources.at("heads").find("the model's options") != std::string::npos);
  CHECK_NOTHROW(ms->validate());
  // No head groups: the recipe's heads stay.
  const auto star = parse({"--task", "classify", "--model", "graph", "--topology", shipped("star"), "--train", "x"});
  CHECK(star->heads == 4);
  // A typed --heads stays, and validation says why it cannot be.
  const auto typed = parse({"--task", "classify", "--model", "graph", "--topology", shipped("head_groups"), "--train",
                            "x", "--format", "mtl", "--heads", "10"});
  REQUIRE(typed.has_value());
  CHECK(typed->heads == 10);
  CHECK(error_of([&] { typed->validate(); }).find("head_groups: the groups' heads sum to 4 (2 + 2) in layer 1; this run has --heads 10") !=
        std::string::npos);
  const auto deep = parse({"--task", "classify", "--model", "graph", "--topology", shipped("multiscale"), "--train", "x",
                           "--format", "mtl", "--layers", "3"});
  CHECK(error_of([&] { deep->validate(); }).find("head_groups[0].heads: lists the heads of 2 layers; this run has --layers 3") !=
        std::string::npos);
  // Groups whose heads do not divide the recipe's width (Star's 100): the error names the file and the fix, not
  // only a --heads the user never typed.
  const std::string three = topo::testing::write_temp_file(
      "three_heads.json", R"({"relations": [{"name": "a", "src": "tok", "dst": "tok", "builder": "window", "radius": 1}],
                               "head_groups": [{"heads": 2, "relations": ["a"]}, {"heads": 1, "relations": ["a"]}]})");
  const auto odd = parse({"--task", "classify", "--model", "graph", "--topology", three, "--train", "x", "--format", "mtl"});
  REQUIRE(odd.has_value());
  CHECK(odd->heads == 3);
  CHECK(error_of([&] { odd->validate(); })
            .find(three + ": head_groups: the groups' heads sum to 3, which does not divide --hidden 100") != std::string::npos);
  const auto wide = parse({"--task", "classify", "--model", "graph", "--topology", three, "--train", "x", "--format", "mtl", "--hidden", "99"});
  CHECK_NOTHROW(wide->validate());
}

TEST_CASE("graph model: a bad file, no file, or --topology with another model are errors naming them") {
  const std::string bad = topo::testing::write_temp_file(
      "bad_radius.json", R"({"relations": [{"name": "a", "src": "tok", "dst": "tok", "builder": "window", "radius": -2}]})");
  CHECK(error_of([&] { parse({"--model", "graph", "--topology", bad}); }).find(bad + ": relations[0].radius: must be >= 0, got -2") !=
        std::string::npos);
  const auto none = parse({"--model", "graph"});
  REQUIRE(none.has_value());
  CHECK(error_of([&] { none->validate(); }).find("--model graph needs --topology FILE.json") != std::string::npos);
  CHECK(error_of([&] { parse({"--model", "star", "--topology", shipped("star")}); })
            .find("config field 'topology' applies only to --model graph") != std::string::npos);
  // An empty softmax for short sentences is found when the config is validated.
  const std::string gap = topo::testing::write_temp_file(
      "gap.json", R"({"relations": [{"name": "far", "src": "tok", "dst": "tok", "builder": "dilated", "dilation": 5, "reach": 1}]})");
  const auto with_gap = parse({"--model", "graph", "--topology", gap});
  CHECK(error_of([&] { with_gap->validate(); }).find("has no in-edge") != std::string::npos);
}

TEST_CASE("graph model: a topology file trains on masked summation and on text, whose checkpoint topo-eval scores") {
  const auto dir = topo::testing::fresh_temp_dir("graph_model_run");
  auto config = parse({"--task", "masked-sum", "--model", "graph", "--topology", shipped("head_groups"), "--n", "12",
                       "--k", "3", "--train-size", "256", "--dev-size", "64", "--test-size", "64", "--epochs", "2",
                       "--hidden", "16", "--progress", "none", "--out", dir.string() + "/sum"});
  REQUIRE(config.has_value());
  CHECK(config->heads == 4);
  const TrainResult r = Trainer(*config).run();
  REQUIRE(r.completed);
  CHECK(r.metric == "mse");
  std::ifstream in(Trainer::result_path(dir.string() + "/sum"));
  const auto result = nlohmann::json::parse(in);
  CHECK(result.at("config").at("topology") == shipped("head_groups"));

  // Text: sentences with "good" are positive; BigBird's pattern (random keys) through classify and topo-eval.
  auto lines = [](int count, int seed) {
    std::string text;
    const char* words[] = {"the", "film", "was", "plot", "long", "acting", "music", "very"};
    for (int i = 0; i < count; ++i) {
      const bool good = (i + seed) % 2 == 0;
      std::string sentence;
      for (int w = 0; w < 3 + (i * 7 + seed) % 9; ++w) sentence += std::string(words[(i * 3 + w * 5 + seed) % 8]) + " ";
      sentence += good ? "good" : "bad";
      text += nlohmann::json{{"label", good ? "pos" : "neg"}, {"text", sentence}}.dump() + "\n";
    }
    return text;
  };
  // The run reads a copy of bigbird.json, deleted after training: the checkpoint keeps the file's content.
  std::filesystem::copy_file(shipped("bigbird"), dir / "mine.json");
  const std::string mine = (dir / "mine.json").string();
  const std::string train = topo::testing::write_temp_file("graph_train.jsonl", lines(160, 0));
  const std::string dev = topo::testing::write_temp_file("graph_dev.jsonl", lines(40, 1));
  const std::string test = topo::testing::write_temp_file("graph_test.jsonl", lines(40, 2));
  auto text = parse({"--task", "classify", "--model", "graph", "--topology", mine, "--format", "jsonl",
                     "--train", train, "--dev", dev, "--test", test, "--min-freq", "1", "--epochs", "3", "--hidden", "16",
                     "--progress", "none", "--out", dir.string() + "/text"});
  REQUIRE(text.has_value());
  const TrainResult t = Trainer(*text).run();
  REQUIRE(t.completed);
  // An edit of the description alone is not an edit of the model: the resume is not refused for it.
  {
    nlohmann::ordered_json file = nlohmann::ordered_json::parse(std::ifstream(shipped("bigbird")));
    file["description"] = "my notes";
    std::ofstream(mine) << file.dump(2);
  }
  auto same = *text;
  same.resume = "on";
  const std::string described = error_of([&] { Trainer(same).run(); });
  CAPTURE(described);
  CHECK(described.find("config field 'topology'") == std::string::npos);
  // A resume with an edited file is refused: the checkpoint recorded the content it trained with.
  {
    std::ofstream edit(mine);
    edit << R"({"relations": [{"name": "all", "src": "tok", "dst": "tok", "builder": "full"}]})";
  }
  auto resumed = *text;
  resumed.resume = "on";
  const std::string refused = error_of([&] { Trainer(resumed).run(); });
  CAPTURE(refused);
  CHECK(refused.find("resume: config field 'topology'") != std::string::npos);
  std::filesystem::remove(mine);
  // topo-eval rebuilds the model from the checkpoint's config (the recorded content: no file) and scores a file.
  const std::string eval =
      (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "topo-eval").string() + " --checkpoint " +
      dir.string() + "/text --test " + test + " > " + dir.string() + "/eval.txt 2>&1";
  CHECK(std::system(eval.c_str()) == 0);
  std::ifstream out(dir.string() + "/eval.txt");
  std::stringstream printed;
  printed << out.rdbuf();
  CAPTURE(printed.str());
  CHECK(printed.str().find("graph on " + test + ": acc ") != std::string::npos);
  std::filesystem::remove_all(dir);
}
