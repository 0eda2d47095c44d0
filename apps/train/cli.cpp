#include "apps/train/cli.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "kernels/error.hpp"

namespace topo::apps {

bool parse_command_line(CLI::App& app, int argc, const char* const* argv, std::ostream& out) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return false;
  } catch (const CLI::ParseError& e) {
    fail("{}: {} (see --help)", app.get_name(), e.what());
  }
  return true;
}

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
    if (field.kind == "bool") {
      app.add_flag_function(flag, [&overrides, name = field.name](std::int64_t) { overrides.emplace_back(name, "true"); },
                            field.help);
    } else {
      app.add_option_function<std::string>(
             flag, [&overrides, name = field.name](const std::string& v) { overrides.emplace_back(name, v); },
             field.help)
          ->type_name(field.kind == "int" ? "INT" : field.kind == "float" ? "FLOAT" : "TEXT");
    }
  }
  if (!parse_command_line(app, argc, argv, out)) return std::nullopt;
  TrainConfig config;
  if (!config_path.empty()) apply_config_file(config, config_path);
  for (const auto& [name, value] : overrides) {
    try {
      set_config_field_from_string(config, name, value);
    } catch (const Error& e) {
      fail("command line: {}", e.what());
    }
  }
  config.validate();
  return config;
}

}  // namespace topo::apps
