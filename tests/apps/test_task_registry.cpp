// The task registry: a task added from outside apps/ (this file stands for a new task's folder) gets its flags,
// its --help group, its validation and the common trainer, touching no other file; every registered task's
// options are well formed; a flag the user types beats a recipe's derived settings, and the log says whence.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "apps/tasks/generated_regression.hpp"
#include "apps/tasks/registry.hpp"
#include "apps/train/cli.hpp"
#include "apps/train/config.hpp"
#include "apps/train/trainer.hpp"
#include "models/registry.hpp"
#include "tests/apps/train_args.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::apps;
using topo::testing::error_of;

namespace {

// A toy task's generator: `length` positions of one feature in [0, 1); the target is their sum.
class ToySum final : public ExampleGenerator {
 public:
  ToySum(std::int64_t length, std::uint64_t seed) : length_(length), seed_(seed) {}
  GeneratedExample example(Split split, std::int64_t index) const override {
    GeneratedExample ex;
    ex.length = length_;
    float sum = 0;
    for (std::int64_t i = 0; i < length_; ++i) {
      // A small hash of (seed, split, index, i): deterministic, spread over [0, 1).
      const std::uint64_t h = (seed_ * 0x9E3779B97F4A7C15ull) ^ (static_cast<std::uint64_t>(split) << 40) ^
                              (static_cast<std::uint64_t>(index) * 0xBF58476D1CE4E5B9ull) ^ static_cast<std::uint64_t>(i);
      const float v = static_cast<float>((h * 0x94D049BB133111EBull) >> 40) / static_cast<float>(1ull << 24);
      ex.x.push_back(v);
      sum += v;
    }
    ex.y = {sum};
    return ex;
  }
  std::int64_t input_dim() const override { return 1; }
  std::int64_t output_dim() const override { return 1; }
  std::int64_t max_length() const override { return length_; }
  float constant_guess() const override { return static_cast<float>(length_) / 2.f; }
  std::string constant_guess_name() const override { return "length / 2"; }

 private:
  std::int64_t length_;
  std::uint64_t seed_;
};

// What a new task's registration.cpp holds: a name, its options, their checks and a factory.
TaskRegistration toy_registration() {
  TaskRegistration t;
  t.name = "toy-sum";
  t.summary = "toy: regress the sum of --length values";
  t.input = TaskInput::Features;
  t.options = {{"length", 6, "values per sequence", {}}, {"examples", 256, "training examples", {}}};
  t.validate = [](const TaskSettings& s) {
    if (s.option<std::int64_t>("length") < 1)
      models::fail_invalid_field("length", s.option<std::int64_t>("length"), "must be >= 1");
  };
  t.make = [](const TaskSettings& s) -> std::unique_ptr<Task> {
    return std::make_unique<GeneratedRegression>(std::make_shared<ToySum>(s.option<std::int64_t>("length"), s.seed),
                                                 GeneratedRegression::Sizes{s.option<std::int64_t>("examples"), 64, 64},
                                                 64, "toy-sum");
  };
  return t;
}

std::optional<TrainConfig> parse(std::vector<std::string> args, std::string* help = nullptr) {
  return topo::testing::parse_train_command(std::move(args), help);
}

}  // namespace

TEST_CASE("task registry: a toy task registered from outside gets flags, help, validation and the trainer") {
  if (std::none_of(registered_tasks().begin(), registered_tasks().end(), [](const auto& t) { return t.name == "toy-sum"; }))
    register_task(toy_registration());
  CHECK(error_of([] { register_task(toy_registration()); }).find("task 'toy-sum' is registered twice") !=
        std::string::npos);
  std::string help;
  CHECK_FALSE(parse({"--help"}, &help).has_value());
  CHECK(help.find("toy-sum") != std::string::npos);
  CHECK(help.find("Options of task toy-sum:") != std::string::npos);
  CHECK(help.find("--length INT") != std::string::npos);

  const auto bad = parse({"--task", "toy-sum", "--length", "0"});
  REQUIRE(bad.has_value());
  CHECK(error_of([&] { bad->validate(); }).find("invalid config field 'length' = 0: must be >= 1") != std::string::npos);
  CHECK(error_of([] { parse({"--task", "masked-sum", "--length", "3"}); }).find("applies only to --task toy-sum") !=
        std::string::npos);

  const auto dir = topo::testing::fresh_temp_dir("toy_task");
  auto config = parse({"--task", "toy-sum", "--model", "deepsets", "--length", "5", "--epochs", "3", "--hidden", "16",
                       "--head-hidden", "16", "--progress", "none", "--out", dir.string()});
  REQUIRE(config.has_value());
  const TrainResult r = Trainer(*config).run();
  REQUIRE(r.completed);
  CHECK(r.metric == "mse");
  CHECK(r.steps == 3 * 4);  // 256 examples in batches of 64
  std::ifstream in(Trainer::result_path(dir.string()));
  const auto result = nlohmann::json::parse(in);
  CHECK(result.at("task") == "toy-sum");
  CHECK(result.at("config").at("length") == 5);
  std::filesystem::remove_all(dir);
}

TEST_CASE("task registry: names, inputs and options are well formed; no option shadows a run field") {
  std::vector<std::string> run_fields;
  for (const ConfigField& f : config_fields())
    if (f.group == "training run" || f.group == "task and model") run_fields.push_back(f.name);
  for (const TaskRegistration& t : registered_tasks()) {
    CAPTURE(t.name);
    CHECK(!t.summary.empty());
    CHECK(find_task(t.name).name == t.name);
    for (const models::Option& o : t.options) {
      CAPTURE(o.name);
      CHECK(std::find(run_fields.begin(), run_fields.end(), o.name) == run_fields.end());
      CHECK(!o.help.empty());
      // A task's option and a model's of one name are one flag: they agree on the type.
      for (const models::ModelRegistration& m : models::registered_models())
        for (const models::Option& mo : m.options)
          if (mo.name == o.name) CHECK(models::value_kind(mo.default_value) == models::value_kind(o.default_value));
    }
    // Every task of the list has a model with a recipe for it (the toy task above is this file's own).
    if (t.name != "toy-sum")
      CHECK(std::any_of(models::registered_models().begin(), models::registered_models().end(),
                      [&](const models::ModelRegistration& m) { return m.recipes.contains(t.name); }));
  }
  CHECK(error_of([] { find_task("translate"); }).find("unknown task 'translate': expected one of masked-sum") !=
        std::string::npos);
  CHECK(tasks_declaring("format") == "classify, tag");
}

TEST_CASE("a flag beats the recipe's derived settings, and the log's first lines say where each came from") {
  const auto recipe = models::model_recipe("star", "tag");
  REQUIRE(recipe.at("min_steps").get<std::int64_t>() > 0);
  const auto with_recipe = parse({"--task", "tag", "--model", "star", "--train", "x", "--dev", "y"});
  REQUIRE(with_recipe.has_value());
  CHECK(with_recipe->min_steps == recipe.at("min_steps").get<std::int64_t>());
  const auto one_epoch = parse({"--task", "tag", "--model", "star", "--train", "x", "--dev", "y", "--epochs", "1"});
  REQUIRE(one_epoch.has_value());
  CHECK(one_epoch->epochs == 1);
  CHECK(one_epoch->min_steps == 0);
  CHECK(one_epoch->sources.at("min_steps").find("dropped for --epochs") != std::string::npos);
  // Both typed: both win.
  const auto both = parse({"--task", "tag", "--model", "star", "--train", "x", "--dev", "y", "--epochs", "1",
                           "--min-steps", "7"});
  CHECK(both->min_steps == 7);

  // The recipe's word dropout needs word vectors; a --word-dropout the user types stays without them.
  REQUIRE(recipe.at("word_dropout").get<double>() > 0.0);
  CHECK(with_recipe->word_dropout == 0.0);
  CHECK(with_recipe->sources.at("word_dropout").find("dropped: no --vectors") != std::string::npos);
  const auto vectors = parse({"--task", "tag", "--model", "star", "--train", "x", "--dev", "y", "--vectors", "v"});
  REQUIRE(vectors.has_value());
  CHECK(vectors->word_dropout == recipe.at("word_dropout").get<double>());
  const auto typed = parse({"--task", "tag", "--model", "star", "--train", "x", "--dev", "y", "--word-dropout", "0.2"});
  REQUIRE(typed.has_value());
  CHECK(typed->word_dropout == 0.2);

  // A real run: the first lines of the log name the task, the model and each setting's source.
  const auto dir = topo::testing::fresh_temp_dir("sources_log");
  const std::string log = dir.string() + "/log.txt";
  const std::string command =
      (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "topo-train").string() +
      " --task masked-sum --model star --n 8 --k 2 --train-size 64 --dev-size 32 --test-size 32 --epochs 1"
      " --progress lines --out " + dir.string() + "/run > " + log + " 2>&1";
  REQUIRE(std::system(command.c_str()) == 0);
  std::ifstream in(log);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line) && lines.size() < 4;) lines.push_back(line);
  REQUIRE(lines.size() == 4u);
  CHECK(lines[0].starts_with("task masked-sum"));
  CHECK(lines[0].find("model star") != std::string::npos);
  bool flags = false, recipe_line = false;
  for (const std::string& l : lines) {
    flags |= l.starts_with("settings from flag:") && l.find("epochs=1") != std::string::npos;
    recipe_line |= l.starts_with("settings from recipe star/masked-sum:") && l.find("residual=true") != std::string::npos;
  }
  CHECK(flags);
  CHECK(recipe_line);
  std::filesystem::remove_all(dir);
}
