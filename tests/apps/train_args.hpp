#pragma once
// topo-train's command line in a test: the arguments after the program name, parsed as topo-train parses them.
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "apps/train/cli.hpp"

namespace topo::testing {

// parse_train_args over {"topo-train", args...}; what --help prints goes to *help when given.
inline std::optional<apps::TrainConfig> parse_train_command(std::vector<std::string> args, std::string* help = nullptr) {
  args.insert(args.begin(), "topo-train");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out;
  auto config = apps::parse_train_args(static_cast<int>(argv.size()), argv.data(), out);
  if (help) *help = out.str();
  return config;
}

}  // namespace topo::testing
