// TrainConfig: JSON and flags (flags win wherever they stand), type checks, and every validation error
// naming its field and value.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "tests/apps/train_args.hpp"
#include "tests/support/testing.hpp"
#include "apps/train/cli.hpp"
#include "apps/train/config.hpp"
#include "models/registry.hpp"
#include "kernels/error.hpp"

using namespace topo;
using namespace topo::apps;

using topo::testing::error_of;

namespace {

std::string temp_file(const std::string& name, const std::string& content) {
  const auto path = std::filesystem::temp_directory_path() / ("topo_cfg_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path) << content;
  return path.string();
}

std::optional<TrainConfig> parse(std::vector<std::string> args) {
  return topo::testing::parse_train_command(std::move(args));
}

}  // namespace

TEST_CASE("config: defaults are the paper's masked-summation setting and valid") {
  TrainConfig c;
  CHECK_NOTHROW(c.validate());
  CHECK(c.option<std::int64_t>("n") == 200);
  CHECK(c.option<std::int64_t>("k") == 10);
  CHECK(c.option<std::int64_t>("d") == 10);
  CHECK(c.option<std::int64_t>("train_size") == 10000);
  // to_json lists every field, and applying it back reproduces the config.
  TrainConfig other;
  other.set("n", 1);
  apply_config_json(other, c.to_json());
  CHECK(other.to_json() == c.to_json());
  // Every key is a field or an option of the chosen task or model, and each of those is a flag.
  const std::vector<ConfigField> fields = config_fields();
  const nlohmann::json all = c.to_json();
  for (const auto& [key, value] : all.items())
    CHECK(std::any_of(fields.begin(), fields.end(), [&k = key](const ConfigField& f) { return f.name == k; }));
  const auto run_fields = std::count_if(fields.begin(), fields.end(), [](const ConfigField& f) {
    return f.group == "training run" || f.group == "task and model";
  });
  CHECK(c.to_json().size() == c.task_options.size() + c.model_options.size() + static_cast<std::size_t>(run_fields));
}

TEST_CASE("config: JSON file, then flags; flags override wherever they stand") {
  const std::string path =
      temp_file("a.json", R"({"n": 20, "k": 3, "d": 4, "lr": 0.01, "model": "deepsets", "resume": true, "out": "x"})");
  const auto c = parse({"--k", "5", "--config", path, "--lr", "0.02", "--train-size", "7"});
  REQUIRE(c.has_value());
  CHECK(c->option<std::int64_t>("n") == 20);               // from the file
  CHECK(c->option<std::int64_t>("d") == 4);
  CHECK(c->option<std::int64_t>("k") == 5);                // the flag beats the file although it came first
  CHECK(c->lr == doctest::Approx(0.02));
  CHECK(c->option<std::int64_t>("train_size") == 7);       // flag only
  CHECK(c->resume == "on");
  CHECK(c->out == "x");
  CHECK(c->epochs == TrainConfig{}.epochs);  // untouched default
  const auto flags_only = parse({"--n", "30", "--k", "2", "--profile", "--variant", "no-ring", "--model", "star"});
  REQUIRE(flags_only.has_value());
  CHECK(flags_only->option<std::int64_t>("n") == 30);
  CHECK(flags_only->profile);
  CHECK(flags_only->model_options.at("variant") == "no-ring");
  CHECK(!parse({"--help"}).has_value());
  std::filesystem::remove(path);
}

TEST_CASE("config: unknown keys, wrong types and unreadable files are errors naming them") {
  TrainConfig c;
  CHECK(error_of([&] { apply_config_json(c, {{"epochz", 3}}); }).find("'epochz'") != std::string::npos);
  // A key twice (nlohmann kept the last silently) and a value nested past nn/json_input.hpp's bound (its error
  // message's dump overflowed the stack) are errors naming the file.
  const std::string twice = temp_file("twice.json", R"({"task": "classify", "hidden": 100, "hidden": 32})");
  CHECK(error_of([&] { (void)read_config_file(twice); })
            .find("config file '" + twice + "' is not valid JSON: [json.exception.parse_error.101] parse error: the "
                  "key \"hidden\" appears twice in one object") != std::string::npos);
  const std::string deep =
      temp_file("deep.json", "{\"hidden\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
  CHECK(error_of([&] { (void)read_config_file(deep); }).find("nested deeper than 256 levels") != std::string::npos);
  const std::string folder = std::filesystem::path(deep).parent_path().string();
  CHECK(error_of([&] { (void)read_config_file(folder); }).find("is a directory, not a JSON file") != std::string::npos);
  CHECK(error_of([&] { apply_config_json(c, {{"n", "20"}}); }).find("'n'") != std::string::npos);
  CHECK(error_of([&] { apply_config_json(c, {{"k", 2.5}}); }).find("'k'") != std::string::npos);
  // Past int64: the value the file has, not the -1 it wrapped to ("seed = -1: must be >= 0").
  for (const char* key : {"seed", "n"})  // a TrainConfig field and a task's option
    CHECK(error_of([&] { apply_config_json(c, {{key, std::uint64_t{18446744073709551615u}}}); })
              .find(std::string("'") + key + "': expected an integer, got 18446744073709551615") != std::string::npos);
  CHECK(error_of([&] { apply_config_json(c, {{"resume", 1}}); }).find("'resume'") != std::string::npos);
  CHECK(error_of([&] { apply_config_json(c, {{"model", 3}}); }).find("'model'") != std::string::npos);
  CHECK(error_of([&] { apply_config_json(c, nlohmann::json::array({1, 2})); }).find("object") != std::string::npos);
  CHECK(error_of([&] { parse({"--n", "abc"}); }).find("'n'") != std::string::npos);
  CHECK(error_of([&] { parse({"--lr", "1e-3x"}); }).find("'lr'") != std::string::npos);
  CHECK(!error_of([&] { parse({"--bogus", "1"}); }).empty());
  // A flag's value CLI11 cannot count escaped as std::invalid_argument "stoll" (found by fuzz_cli).
  CHECK(error_of([&] { parse({"--profile=\xfe\xfe"}); }).find("--profile: '\xfe\xfe' is not a flag value") !=
        std::string::npos);
  CHECK(error_of([&] { parse({"--profile=99999999999999999999"}); }).find("--profile") != std::string::npos);
  // --resume: alone on; auto; the words of a flag; JSON booleans (configs and checkpoints of older runs).
  CHECK(parse({"--resume"})->resume == "on");
  CHECK(parse({"--resume", "--epochs", "2"})->resume == "on");
  CHECK(parse({"--resume", "auto"})->resume == "auto");
  CHECK(parse({"--resume=false"})->resume == "off");
  CHECK(parse({})->resume == "off");
  CHECK(error_of([&] { parse({"--resume", "maybe"}); }).find("invalid config field 'resume' = \"maybe\": expected on, off or auto") !=
        std::string::npos);
  // A value that is not UTF-8 cannot be stored as JSON: an error naming the field, not nlohmann's
  // type_error escaping from the message that quotes it (found by fuzz_cli, "--resume=\xf4").
  CHECK(error_of([&] { parse({"--resume=\xf4"}); }).find("config field 'resume': the value is not valid UTF-8") !=
        std::string::npos);
  CHECK(error_of([&] { parse({"--out", "d\xc3"}); }).find("'out'") != std::string::npos);
  CHECK(parse({"--out", "d\xc3\xa9"})->out == "d\xc3\xa9");
  TrainConfig old;
  apply_config_json(old, {{"resume", true}});
  CHECK(old.resume == "on");
  const std::string broken = temp_file("broken.json", "{\"n\": 20,");
  CHECK(error_of([&] { parse({"--config", broken}); }).find(broken) != std::string::npos);
  CHECK(error_of([&] { parse({"--config", "/nonexistent/topo.json"}); }).find("/nonexistent/topo.json") !=
        std::string::npos);
  std::filesystem::remove(broken);
}

TEST_CASE("config: every validation error names its field and value") {
  struct Bad {
    const char* field;
    nlohmann::json value;
    const char* shown;
  };
  const std::vector<Bad> cases = {
      {"task", "sst", "'sst'"},          {"model", "lstm", "'lstm'"},      {"pooling", "half", "'half'"},
      {"n", 0, "0"},                     {"n_min", -1, "-1"},              {"d", 1, "1"},
      {"k", 0, "0"},                     {"k", 201, "201"},                {"train_size", -5, "-5"},
      {"dev_size", 0, "0"},              {"test_size", -1, "-1"},          {"max_len", -2, "-2"},
      {"layers", 0, "0"},                {"hidden", 0, "0"},               {"head_hidden", -1, "-1"},
      {"pooling", "median", "'median'"}, {"dropout", 1.0, "1"},            {"epochs", 0, "0"},
      {"batch", 0, "0"},                 {"optimizer", "sgd", "'sgd'"},    {"lr", -1e-3, "-0.001"},
      {"schedule", "step", "'step'"},    {"warmup", -1, "-1"},             {"clip", -1.0, "-1"},
      {"weight_decay", -0.1, "-0.1"},    {"seed", -3, "-3"},               {"threads", -1, "-1"},
      {"device", "tpu", "'tpu'"},        {"eval_every", -1, "-1"},         {"log_every", 0, "0"},
      {"progress", "fancy", "'fancy'"},  {"out", "", "''"},                {"stop_after", -1, "-1"},
      {"precision", "fp16", "'fp16'"},
      // upper bounds (a million layers built for minutes and ignored SIGTERM; 1e308 is an infinite float)
      {"layers", 1000000, "1000000"},    {"hidden", 1000000000000, "1000000000000"},
      {"heads", 5000, "5000"},           {"head_hidden", 70000, "70000"}, {"lr", 1e308, "1e+308"},
      // counts that wrapped near 2^63 (a batch crashed the bucketing, epochs planned -4 steps) or crashed libgomp
      {"batch", INT64_MAX, "9223372036854775807"}, {"epochs", INT64_MAX, "9223372036854775807"},
      {"min_steps", INT64_MAX, "9223372036854775807"}, {"threads", 100000, "100000"},
  };
  for (const Bad& bad : cases) {
    TrainConfig c;
    // A choice or a name is checked where it is set; a range where the config is validated.
    const std::string message = error_of([&] {
      set_config_field(c, bad.field, bad.value);
      c.validate();
    });
    INFO(bad.field << " = " << bad.value.dump() << ": " << message);
    CHECK(message.find(std::string("'") + bad.field + "'") != std::string::npos);
    CHECK(message.find(bad.shown) != std::string::npos);
  }
  // Checks that involve two fields.
  TrainConfig c;
  c.set("model", "star");
  c.heads = 7;
  CHECK(error_of([&] { c.validate(); }).find("'heads' = 7") != std::string::npos);
  c = TrainConfig{};
  // Another model's option: named with the models that have it.
  CHECK(error_of([&] { set_config_field(c, "variant", "no-radical"); }).find("'variant' applies only to --model star, big") !=
        std::string::npos);
  CHECK(error_of([&] { set_config_field(c, "tag_scheme", "bioes"); }).find("'tag_scheme' applies only to --task tag") !=
        std::string::npos);
  c = TrainConfig{};
  c.set("n_min", 5);  // k = 10 > the shortest length 5
  CHECK(error_of([&] { c.validate(); }).find("'k' = 10") != std::string::npos);
  c = TrainConfig{};
  c.set("max_len", 100);  // n = 200 > max_len
  CHECK(error_of([&] { c.validate(); }).find("'n' = 200") != std::string::npos);
  // The word-vector switches need --vectors; the bad-line policy is skip or reject.
  c = TrainConfig{};
  c.set("task", "classify");
  c.set("model", "star");
  c.set("format", "mtl");
  c.set("train", "train.txt");
  c.heads = 4;
  c.set("vectors_lowercase", true);
  CHECK(error_of([&] { c.validate(); }).find("'vectors_lowercase'") != std::string::npos);
  c.set("vectors", "glove.txt.gz");
  CHECK(error_of([&] { c.validate(); }).empty());
  // A text task's max_len is the position table's rows: 2^63 - 1 crashed, 10^8 allocated for minutes.
  c.set("max_len", INT64_MAX);
  CHECK(error_of([&] { c.validate(); }).find("'max_len' = 9223372036854775807: must be in [1, 1048576]") !=
        std::string::npos);
  c.set("max_len", 256);
  CHECK(error_of([&] { c.set("vectors_bad_lines", "abort"); }).find("'vectors_bad_lines' = 'abort'") != std::string::npos);
  // The command line's config validates the same way (Trainer::run validates it once).
  CHECK(error_of([&] { parse({"--n", "10", "--k", "11"})->validate(); }).find("'k' = 11") != std::string::npos);
}

TEST_CASE("config: the model's recipe for the task is the default; the file beats it, flags beat both") {
  const auto only_flags = parse({"--task", "classify", "--model", "star", "--format", "mtl", "--train", "x.train"});
  REQUIRE(only_flags.has_value());
  const nlohmann::json star_classify = models::model_recipe("star", "classify");
  CHECK(only_flags->dropout == star_classify.at("dropout").get<double>());  // not TrainConfig's 0
  CHECK(only_flags->batch == star_classify.at("batch").get<std::int64_t>());
  CHECK(only_flags->warmup == star_classify.at("warmup").get<std::int64_t>());
  CHECK(only_flags->sources.at("dropout") == "recipe star/classify");
  CHECK(only_flags->sources.at("train") == "flag");
  CHECK(only_flags->sources.count("seed") == 0);  // a default

  // A bool the recipe turns on, a flag turns off: `--case-feature=false` (Chinese characters with Star's tagger).
  const auto tag_on = parse({"--task", "tag", "--model", "star", "--train", "x", "--dev", "y"});
  const auto tag_off = parse({"--task", "tag", "--model", "star", "--train", "x", "--dev", "y", "--case-feature=false"});
  REQUIRE((tag_on.has_value() && tag_off.has_value()));
  CHECK(tag_on->option<bool>("case_feature"));
  CHECK_FALSE(tag_off->option<bool>("case_feature"));
  CHECK(tag_off->sources.at("case_feature") == "flag");
  CHECK(parse({"--task", "tag", "--model", "star", "--train", "x", "--dev", "y", "--crf"})->option<bool>("crf"));
  // The same flag twice: the last one wins (a script's flag, then the user's).
  const std::vector<std::string> tag = {"--task", "tag", "--model", "star", "--train", "x", "--dev", "y"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> args = tag;
    args.insert(args.end(), more.begin(), more.end());
    return parse(args)->option<bool>("case_feature");
  };
  CHECK(with({"--case-feature=false", "--case-feature"}));
  CHECK_FALSE(with({"--case-feature", "--case-feature=false"}));
  CHECK_FALSE(with({"--case-feature", "--case-feature", "--case-feature=false"}));

  // The file's model chooses the recipe (the Transformer's runs dense); the file beats the recipe, a flag both.
  const std::string path = temp_file("recipe.json", R"({"task": "classify", "model": "transformer", "format": "mtl",
                                                        "train": "x.train", "batch": 8, "lr": 0.002})");
  const auto layered = parse({"--config", path, "--lr", "0.01"});
  REQUIRE(layered.has_value());
  CHECK(layered->model_options.at("attention") == "dense");  // recipe
  CHECK(layered->epochs == models::model_recipe("transformer", "classify").at("epochs").get<std::int64_t>());
  CHECK(layered->batch == 8);                                 // file over recipe
  CHECK(layered->lr == doctest::Approx(0.01));                // flag over file
  CHECK(layered->sources.at("attention") == "recipe transformer/classify");
  CHECK(layered->sources.at("batch") == "config file " + path);
  CHECK(layered->sources.at("lr") == "flag");
  // A flag naming another model takes that model's recipe instead of the file model's.
  const auto switched = parse({"--config", path, "--model", "star"});
  REQUIRE(switched.has_value());
  CHECK_FALSE(switched->model_options.contains("attention"));  // Star has no attention switch
  CHECK(switched->patience == star_classify.at("patience").get<std::int64_t>());
  CHECK(switched->batch == 8);

  // Masked summation with Star gets the residual stack that leaves the k/2 plateau; DeepSets has no recipe.
  const auto masked = parse({"--model", "star"});
  REQUIRE(masked.has_value());
  CHECK(masked->model_options.at("residual") == true);
  const auto deepsets = parse({"--model", "deepsets"});
  REQUIRE(deepsets.has_value());
  CHECK(deepsets->to_json() == TrainConfig{}.to_json());
  std::filesystem::remove(path);
}

TEST_CASE("config: every registered recipe is made of known fields and validates") {
  for (const models::ModelRegistration& m : models::registered_models())
    for (const auto& [task, recipe] : m.recipes) {
      CAPTURE(m.name);
      TOPO_CAPTURE(task);
      TOPO_CAPTURE(recipe.dump());
      TrainConfig c;
      c.set("task", task);
      c.set("model", m.name);
      // The files a recipe cannot know: given as a user would.
      if (c.task_options.contains("format")) c.set("format", task == "tag" ? "conll" : "mtl");
      if (c.task_options.contains("train")) c.set("train", "x.train").set("dev", "x.dev");
      if (c.model_options.contains("topology"))
        c.set("topology", std::string(TOPO_SOURCE_DIR) + "/configs/topologies/star.json");
      CHECK_NOTHROW(apply_config_json(c, recipe));
      CHECK_NOTHROW(c.validate());
    }
}

TEST_CASE("config: every shipped configs/*.json applies and validates (the files it leaves to the command line given)") {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(TOPO_SOURCE_DIR) + "/configs")) {
    if (entry.path().extension() != ".json") continue;
    INFO(entry.path().string());
    ++files;
    TrainConfig c;
    CHECK_NOTHROW(apply_config_json(c, read_config_file(entry.path().string()), entry.path().string()));
    if (c.task_options.contains("train") && c.option<std::string>("train").empty()) c.set("train", "x.train");
    if (c.task_options.contains("dev") && c.option<std::string>("dev").empty() &&
        c.task_options.value("format", "") != "mtl")  // MTL-16's dev is the last 200 training lines
      c.set("dev", "x.dev");
    apply_config_json(c, models::model_recipe(c.model, c.task));
    CHECK_NOTHROW(c.validate());
  }
  CHECK(files >= 7);
}

TEST_CASE("config: options belong to their task or model: their own defaults, errors naming their owners") {
  TrainConfig c;  // masked-sum with deepsets
  CHECK(c.model_options == nlohmann::json({{"pooling", "sum"}}));
  CHECK(c.task_options.at("n") == 200);
  CHECK(error_of([&] { set_config_field(c, "variant", "no-ring"); }).find("applies only to --model star, big") !=
        std::string::npos);
  CHECK(error_of([&] { set_config_field(c, "nonsense", 1); }).find("unknown config field 'nonsense'") != std::string::npos);
  c.set("model", "star");
  CHECK(c.to_json().at("variant") == "full");
  CHECK_FALSE(c.to_json().contains("pooling"));  // the previous model's options went with it
  set_config_field_from_string(c, "residual", "true");
  CHECK(c.model_options.at("residual") == true);
  CHECK(error_of([&] { set_config_field(c, "variant", 2); }).find("'variant'") != std::string::npos);
  CHECK(error_of([&] { set_config_field(c, "variant", "half"); }).find("'variant' = 'half'") != std::string::npos);
  CHECK(error_of([&] { set_config_field_from_string(c, "residual", "maybe"); }).find("'residual'") != std::string::npos);
  CHECK_NOTHROW(c.validate());
  CHECK(c.options_of_model() == nlohmann::json({{"variant", "full"}, {"residual", true}}));
  // One name, two owners, two defaults: the Transformer's attention is the graph path, Multi-Scale's the band.
  c.set("model", "transformer");
  CHECK(c.model_options == nlohmann::json({{"attention", "graph"}}));
  c.set("model", "multiscale");
  CHECK(c.model_options.at("attention") == "band");
  CHECK(error_of([&] { set_config_field(c, "attention", "padded"); }).find("expected one of band, graph") !=
        std::string::npos);
  // Tasks likewise: max_len is a truncation for classify (256) and a position count for masked-sum (0).
  CHECK(c.task_options.at("max_len") == 0);
  c.set("task", "classify");
  CHECK(c.task_options.at("max_len") == 256);
  // A checkpoint's config from before options were scoped holds every owner's options: skipped when asked.
  nlohmann::json old = c.to_json();
  old["variant"] = "full";
  old["n"] = 200;
  TrainConfig loaded;
  CHECK_THROWS(apply_config_json(loaded, old));
  CHECK_NOTHROW(apply_config_json(loaded, old, "checkpoint", /*skip_foreign=*/true));
  CHECK(loaded.to_json() == c.to_json());
}

TEST_CASE("run_tool: a failed allocation is an out-of-memory error (exit 1), not an internal error (exit 2)") {
  // A huge topology file or graph ran out of memory with "internal error: std::bad_alloc" (a probe, 2026-12-05).
  const auto exit_of = [](int (*run)(int, char**)) {
    char name[] = "topo-test";
    char* argv[] = {name, nullptr};
    return topo::apps::run_tool("topo-test", run, 1, argv);
  };
  CHECK(exit_of([](int, char**) -> int { throw std::bad_alloc(); }) == 1);
  CHECK(exit_of([](int, char**) -> int { topo::fail("a bad file"); }) == 1);
  CHECK(exit_of([](int, char**) -> int { throw std::logic_error("a bug"); }) == 2);
  CHECK(exit_of([](int, char**) -> int { return 0; }) == 0);
  CHECK(std::string(topo::apps::kOutOfMemory).starts_with("out of memory"));
}
