#include "apps/train/cli.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <new>
#include <exception>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "kernels/error.hpp"
#include "apps/tasks/registry.hpp"
#include "models/registry.hpp"

namespace topo::apps {

namespace {

// A value CLI11 2.1 turns into a flag count: a word it knows or a 64-bit integer.
bool flag_word(std::string_view v) {
  for (const char* w : {"true", "false", "on", "off", "yes", "no", "enable", "disable"})
    if (v == w) return true;
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  return !v.empty() && ec == std::errc() && end == v.data() + v.size();
}

}  // namespace

bool parse_command_line(CLI::App& app, int argc, const char* const* argv, std::ostream& out) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return false;
  } catch (const CLI::ParseError& e) {
    fail("{}: {} (see --help)", app.get_name(), e.what());
  } catch (const std::logic_error& e) {
    // CLI11 2.1 converts a flag's `--flag=value` with std::stoll inside its callbacks, and lets the
    // std::invalid_argument / std::out_of_range ("stoll") escape: name the flag and its value instead.
    for (int i = 1; i < argc; ++i) {
      const std::string_view arg = argv[i];
      const std::size_t eq = arg.find('=');
      if (!arg.starts_with("--") || eq == std::string_view::npos) continue;
      const std::string name(arg.substr(0, eq));
      const CLI::Option* option = app.get_option_no_throw(name);
      // flags expect no value of their own
      if (option != nullptr && option->get_expected_min() == 0 && !flag_word(arg.substr(eq + 1)))
        fail("{}: {}: '{}' is not a flag value (true/false, on/off, yes/no or an integer; see --help)",
             app.get_name(), name, arg.substr(eq + 1));
    }
    fail("{}: cannot parse the command line: {} (see --help)", app.get_name(), e.what());
  }
  return true;
}

namespace {

// Applies one source of settings (a recipe, a config file) over `config`, noting it as their source.
void apply_config_layer(TrainConfig& config, const nlohmann::json& settings, const std::string& source) {
  apply_config_json(config, settings, source);
  for (const auto& [name, value] : settings.items()) config.sources[name] = source;
}

// A recipe's settings derived from the size of training (min_steps raises the epochs of a small training set)
// yield to the size the user asked for: `--epochs 1` runs one epoch, not the recipe's minimum of steps; its
// word dropout yields to a run without word vectors.
// Settings the model's options imply take the place of defaults and recipe values.
void yield_derived_recipe_settings(TrainConfig& config) {
  const auto from_recipe = [&](const std::string& field) {
    const auto it = config.sources.find(field);
    return it != config.sources.end() && it->second.starts_with("recipe");
  };
  const auto from_user = [&](const std::string& field) {
    return config.sources.contains(field) && !from_recipe(field);
  };
  if (from_recipe("min_steps") && config.min_steps > 0 && from_user("epochs")) {
    config.min_steps = 0;
    config.sources["min_steps"] = "the recipe's min_steps, dropped for --epochs from " + config.sources.at("epochs");
  }
  // A recipe's word dropout is for words with pre-trained vectors (models/star_transformer/registration.cpp:
  // measured to help with GloVe, to cost dev F1 on characters trained from scratch).
  if (from_recipe("word_dropout") && config.word_dropout > 0.0 && config.task_options.contains("vectors") &&
      config.option<std::string>("vectors").empty()) {
    config.word_dropout = 0.0;
    config.sources["word_dropout"] = "the recipe's word_dropout, dropped: no --vectors";
  }
  // What the model's options imply (a topology file's head groups fix --heads and --layers) beats the defaults
  // and the recipe; a value the user gave stays, and validation reports it if it disagrees.
  const models::ModelRegistration& model = models::find_model(config.model);
  if (!model.implied_settings) return;
  const nlohmann::json implied = model.implied_settings(config.options_of_model());
  for (const auto& [name, value] : implied.items())
    if (!from_user(name)) {
      config.set(name, value);
      config.sources[name] = "the model's options";  // the log: "settings from the model's options: heads=3"
    }
}

}  // namespace

std::optional<TrainConfig> parse_train_args(int argc, const char* const* argv, std::ostream& out) {
  CLI::App app{"topo-train: train a sequence model on a task, keep the best-on-dev model, report test metrics",
               "topo-train"};
  std::string config_path;
  app.add_option("--config", config_path, "JSON file of config fields (flags override it)");
  // Flag values are collected as strings and applied after the file, through the same per-field parser
  // that checks JSON values.
  std::vector<std::pair<std::string, std::string>> overrides;
  for (const ConfigField& field : config_fields()) {
    std::string flag = "--" + field.name;
    std::replace(flag.begin(), flag.end(), '_', '-');
    CLI::Option* option = nullptr;
    if (field.kind == "bool") {
      // `--flag` sets true; `--flag=false` (CLI11 passes a negative count) turns off what a recipe turned on.
      // Given twice, the last one wins: CLI11 sums a flag's occurrences, so `--flag=false --flag` counted 0 (off).
      option = app.add_flag_function(
                      flag,
                      [&overrides, name = field.name](std::int64_t count) {
                        overrides.emplace_back(name, count > 0 ? "true" : "false");
                      },
                      field.help + " (" + flag + "=false: off)")
                   ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    } else if (field.name == "resume") {
      // `--resume` alone is `--resume on`; `--resume auto` resumes only when there is a checkpoint.
      option = app.add_option_function<std::string>(
                      flag, [&overrides](const std::string& v) { overrides.emplace_back("resume", v.empty() ? "on" : v); },
                      field.help)
                   ->expected(0, 1)
                   ->type_name("[on|auto|off]");
    } else {
      option = app.add_option_function<std::string>(
                      flag, [&overrides, name = field.name](const std::string& v) { overrides.emplace_back(name, v); },
                      field.help)
                   ->type_name(field.kind == "int" ? "INT" : field.kind == "float" ? "FLOAT" : "TEXT");
    }
    option->group("Options of " + field.group);
  }
  std::string footer = "Tasks (--task NAME; their options are grouped above):";
  for (const TaskRegistration& t : registered_tasks())
    footer += fmt::format("\n  {:<14} {} [reads {}]", t.name, t.summary, task_input_name(t.input));
  footer += "\nModels (--model NAME) and the tasks they bring a recipe for (their defaults there):";
  for (const models::ModelRegistration& m : models::registered_models()) {
    std::string tasks;
    for (const auto& [task, recipe] : m.recipes) tasks += (tasks.empty() ? "" : ", ") + task;
    footer += fmt::format("\n  {:<14} {} [recipes: {}]", m.name, m.summary, tasks.empty() ? "none" : tasks);
  }
  footer += "\nPrecedence, later wins: defaults, the model's recipe for the task, --config FILE, flags. A recipe's "
            "min_steps (which raises the epochs of a small training set) yields to --epochs given by you.";
  app.footer(footer);
  if (!parse_command_line(app, argc, argv, out)) return std::nullopt;
  const nlohmann::json file = config_path.empty() ? nlohmann::json::object() : read_config_file(config_path);
  TOPO_CHECK(file.is_object(), "config file '{}': expected a JSON object of config fields, got {}", config_path,
             std::string(file.type_name()));
  // Task and model choose the recipe, so they are read first: a flag beats the file, the file the default.
  auto chosen = [&](const std::string& name, const std::string& fallback) {
    std::string value = fallback;
    if (file.contains(name) && file.at(name).is_string()) value = file.at(name).get<std::string>();
    for (const auto& [flag, text] : overrides)
      if (flag == name) value = text;
    return value;
  };
  TrainConfig config;
  const std::string task = chosen("task", config.task), model = chosen("model", config.model);
  try {
    config.set("task", task).set("model", model);
  } catch (const Error& e) {
    fail("command line: {}", e.what());
  }
  apply_config_layer(config, models::model_recipe(model, task),
                     fmt::format("recipe {}/{}", model, task));
  apply_config_layer(config, file, "config file " + config_path);
  for (const auto& [name, value] : overrides) {
    try {
      set_config_field_from_string(config, name, value);
    } catch (const Error& e) {
      fail("command line: {}", e.what());
    }
    config.sources[name] = "flag";
  }
  yield_derived_recipe_settings(config);
  return config;
}

int run_tool(std::string_view program, int (*run)(int, char**), int argc, char** argv) {
  const int name_length = static_cast<int>(program.size());
  try {
    return run(argc, argv);
  } catch (const Error& e) {
    std::string_view what = e.what();
    if (what.starts_with(program) && what.substr(program.size()).starts_with(": "))
      what.remove_prefix(program.size() + 2);
    std::fprintf(stderr, "%.*s: %.*s\n", name_length, program.data(), static_cast<int>(what.size()), what.data());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%.*s: error: %s\n", name_length, program.data(), kOutOfMemory);
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%.*s: internal error: %s\n", name_length, program.data(), e.what());
    return 2;
  }
}

}  // namespace topo::apps
