// `--model graph --topology FILE.json`: the shared attention layer stack over a topology file's graph; its
// options and working recipes. The file's head groups, when they fix the heads (and, as lists, the layers),
// set --heads and --layers over the recipe (implied_settings); a value the user types must agree with them.
#include <algorithm>

#include "models/registry.hpp"
#include "models/topology_transformer/topology_transformer.hpp"
#include "nn/json_input.hpp"

namespace topo::models {

namespace {

// The longest sentence the in-edge check builds up front (longer ones are checked batch by batch).
constexpr std::int64_t kCheckedLength = 64;

// --topology is a file, or the file's content itself (a JSON object: what a checkpoint records).
bool inline_json(const std::string& value) {
  const std::size_t first = value.find_first_not_of(" \t\r\n");
  return first != std::string::npos && value[first] == '{';
}

// The topology's JSON as --topology gives it: the file's (read once), or the inline object; `source` names it.
nlohmann::ordered_json topology_json(const std::string& value, std::string* source) {
  if (!inline_json(value)) {
    *source = value;
    return read_topology_json(value);
  }
  *source = "--topology (inline JSON)";
  return parse_json_text<nlohmann::ordered_json>(value, *source);
}

std::string topology_value(const nlohmann::json& options) {
  const std::string value = option_value<std::string>(options, "topology", "model graph");
  TOPO_CHECK(!value.empty(),
             "--model graph needs --topology FILE.json: the attention graph as a file (docs/topologies.md; shipped "
             "ones in configs/topologies/)");
  return value;
}

TopologySpec topology_of(const nlohmann::json& options) {
  std::string source;
  const nlohmann::ordered_json file = topology_json(topology_value(options), &source);
  return parse_topology(file, source);
}

}  // namespace

ModelRegistration star_transformer_registration();  // models/star_transformer/registration.cpp
ModelRegistration multiscale_transformer_registration();

ModelRegistration topology_transformer_registration() {
  ModelRegistration m;
  m.name = "graph";
  m.summary = "attention over the graph a topology file describes (--topology FILE.json, docs/topologies.md)";
  m.options = {
      {"topology", "",
       "the topology file (JSON: node types, relations, head groups; docs/topologies.md), or its content inline "
       "('{...}': what a checkpoint records)",
       {}},
      {"residual", true, "LayerNorm(x + ReLU(attention)) (false: LayerNorm(ReLU(attention)), Star's paper form)", {}},
      {"attention", "auto",
       "graph attention: auto (the fused band kernel when each head group is one window or full relation over "
       "tok) | graph (the sparse kernels always)",
       {"auto", "graph"}},
  };
  m.validate = [](const EncoderSpec& spec) {
    const TopologySpec topology = topology_of(spec.options);
    topology.check_heads(spec.heads, spec.layers);
    // Heads the file's groups fix must divide the recipe's width too; said here, naming the file, since the run's
    // own check ("'heads' = 3: must divide hidden = 100") names a --heads the user may never have typed.
    if (!topology.head_groups.front().heads.empty() && spec.heads > 0 && spec.hidden % spec.heads != 0)
      fail("{}: head_groups: the groups' heads sum to {}, which does not divide --hidden {} (each head attends over "
           "hidden / heads features); give --hidden a multiple of {}, or heads that divide {}",
           topology.source, spec.heads, spec.hidden, spec.heads, spec.hidden);
    check_topology_lengths(topology, kCheckedLength);
  };
  m.implied_settings = [](const nlohmann::json& options) {
    nlohmann::json implied = nlohmann::json::object();
    if (option_value<std::string>(options, "topology", "model graph").empty()) return implied;
    const TopologySpec topology = topology_of(options);
    if (topology.head_groups.front().heads.empty()) return implied;  // no head groups: any heads
    std::int64_t heads = 0;
    for (const TopologyHeadGroup& g : topology.head_groups) heads += g.heads.front();
    implied["heads"] = heads;
    for (const TopologyHeadGroup& g : topology.head_groups)
      if (g.per_layer) implied["layers"] = static_cast<std::int64_t>(g.heads.size());
    return implied;
  };
  m.recorded_options = [](const nlohmann::json& options) {
    nlohmann::json recorded = options;
    const std::string value = option_value<std::string>(options, "topology", "model graph");
    if (value.empty() || inline_json(value)) return recorded;
    std::string source;
    nlohmann::ordered_json file = topology_json(value, &source);
    (void)parse_topology(file, source);  // a file that does not parse is not recorded silently
    // The description is text for people: an edit of it alone changes no model, so it stays out of the record
    // a --resume compares (it refused such a run) and that topo-eval rebuilds the model from.
    file.erase("description");
    recorded["topology"] = file.dump();
    return recorded;
  };
  m.make = [](const EncoderSpec& spec) {
    TopologyTransformerConfig config{.encoder = encoder_config(spec), .topology = topology_of(spec.options)};
    config.residual = spec.option<bool>("residual");
    config.band = spec.option<std::string>("attention") == "auto";
    check_topology_lengths(config.topology, std::min(spec.max_length, kCheckedLength));
    return std::make_shared<TopologyTransformer>(config);
  };
  // The recipes of the models the shipped files reproduce: Star's for the text tasks and masked summation
  // (width 100, 4 heads; a file whose head groups fix the heads sets them instead, the multiscale file 10),
  // Multi-Scale's for mirrored summation without its own options (the file gives the windows).
  m.recipes = star_transformer_registration().recipes;
  nlohmann::json mirrored = multiscale_transformer_registration().recipes.at("mirrored-sum");
  mirrored.erase("scales");
  mirrored.erase("alpha");
  m.recipes["mirrored-sum"] = mirrored;
  return m;
}

}  // namespace topo::models
