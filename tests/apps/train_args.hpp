#pragma once
// topo-train's command line in a test: the arguments after the program name, parsed as topo-train parses them;
// and the smallest tagger config the tagging tests build models from.
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

// --task tag with a one-layer Star of width 8 (2 heads): shapes and plumbing, not learning.
inline apps::TrainConfig tiny_star_tagger_config() {
  apps::TrainConfig c;
  c.set("task", "tag");
  c.set("model", "star");
  c.hidden = 8;
  c.heads = 2;
  c.layers = 1;
  c.head_hidden = 0;
  return c;
}

}  // namespace topo::testing
