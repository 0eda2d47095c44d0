#include "models/topology_transformer/topology_file.hpp"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <set>

#include "kernels/error.hpp"
#include "models/encoder_config.hpp"
#include "nn/json_input.hpp"

namespace topo::models {

namespace {

using Json = nlohmann::ordered_json;

// Every error of a file: "FILE: PATH: WHY".
[[noreturn]] void bad(const std::string& source, const std::string& path, const std::string& why) {
  fail("{}: {}: {}", source, path, why);
}

std::string shown(const Json& value) { return shown_json(value); }

// The longest name of a type or relation. Errors quote names (unknown ones too) and the graph's relation labels
// hold them: a name of 1 MB made a 1 MB error line.
constexpr std::size_t kMaxNameLength = 100;

bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

// An object's key as an error's JSON path shows it: itself when it could be a name, else its JSON (quoted,
// control characters escaped), cut: a key of 1 MB, or one holding a newline or a terminal escape, was printed
// as it was.
std::string key_text(const std::string& key) {
  if (!key.empty() && key.size() <= kMaxNameLength && std::all_of(key.begin(), key.end(), name_char)) return key;
  return shown_json(Json(key), 60);
}

// A name used in relation and type lists: letters, digits, '_' and '-', at most kMaxNameLength of them.
void check_name(const std::string& source, const std::string& path, const Json& value) {
  if (!value.is_string()) bad(source, path, "expected a name (a string), got " + shown(value));
  const std::string name = value.get<std::string>();
  if (name.empty()) bad(source, path, "the name is empty");
  if (!std::all_of(name.begin(), name.end(), name_char))
    bad(source, path, fmt::format("{}: a name holds letters, digits, '_' and '-' only", shown_json(value, 60)));
  if (name.size() > kMaxNameLength)
    bad(source, path,
        fmt::format("{}: a name is at most {} characters, got {}", shown_json(value, 60), kMaxNameLength, name.size()));
}

// Relations a file may hold: a head group's de-duplication merges each relation's edges into those of the
// earlier ones, so its work grows with the square of their count; 20,000 ran for minutes.
constexpr std::size_t kMaxRelations = 256;

// Larger values are clipped where they are used (a radius past the sentence) or refused (node counts, heads).
constexpr std::int64_t kMaxInteger = std::int64_t{1} << 40;

std::int64_t integer(const std::string& source, const std::string& path, const Json& value, std::int64_t min,
                     std::int64_t max = kMaxInteger) {
  if (!value.is_number_integer()) bad(source, path, "expected an integer, got " + shown(value));
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(max))
    bad(source, path, fmt::format("must be <= {}, got {}", max, shown(value)));
  const std::int64_t v = value.get<std::int64_t>();
  if (v < min) bad(source, path, fmt::format("must be >= {}, got {}", min, v));
  if (v > max) bad(source, path, fmt::format("must be <= {}, got {}", max, v));
  return v;
}

// Nodes of a type per sentence, and heads of a group (the encoders' kMaxHeads): beyond these a file is a
// mistake, not a model.
constexpr std::int64_t kMaxNodes = 4096;

// The keys `object` may hold; any other is an error naming it and the known ones.
void check_keys(const std::string& source, const std::string& path, const Json& object,
                const std::vector<std::string>& known) {
  for (const auto& [key, value] : object.items())
    if (std::find(known.begin(), known.end(), key) == known.end())
      bad(source, path + "." + key_text(key),
          fmt::format("unknown field (expected {})", known.empty() ? std::string("none") : fmt::format("{}", fmt::join(known, ", "))));
}

const Json& required(const std::string& source, const std::string& path, const Json& object, const std::string& key,
                     const std::string& what) {
  if (!object.contains(key)) bad(source, path + "." + key, "missing: " + what);
  return object.at(key);
}

TopologyBuilderKind parse_builder(const std::string& source, const std::string& path, const Json& value) {
  static const std::vector<std::pair<std::string, TopologyBuilderKind>> kinds = {
      {"window", TopologyBuilderKind::Window}, {"dilated", TopologyBuilderKind::Dilated},
      {"ring", TopologyBuilderKind::Ring},     {"random", TopologyBuilderKind::Random},
      {"block", TopologyBuilderKind::Block},   {"all", TopologyBuilderKind::All},
      {"self", TopologyBuilderKind::Self},     {"full", TopologyBuilderKind::Full},
      {"global", TopologyBuilderKind::Global}};
  if (value.is_string())
    for (const auto& [name, kind] : kinds)
      if (name == value.get<std::string>()) return kind;
  bad(source, path,
      fmt::format("unknown builder {} (expected window, dilated, ring, random, block, all, self, full or global)",
                  shown(value)));
}

// The builders that pair nodes by their position in the sentence.
bool positional(TopologyBuilderKind kind) {
  return kind == TopologyBuilderKind::Window || kind == TopologyBuilderKind::Dilated ||
         kind == TopologyBuilderKind::Ring || kind == TopologyBuilderKind::Block || kind == TopologyBuilderKind::Self ||
         kind == TopologyBuilderKind::Global;
}

// The fields a relation with this builder holds.
std::vector<std::string> builder_keys(TopologyBuilderKind kind) {
  std::vector<std::string> keys = {"name", "src", "dst", "builder"};
  switch (kind) {
    case TopologyBuilderKind::Window: keys.insert(keys.end(), {"radius", "width"}); break;
    case TopologyBuilderKind::Dilated: keys.insert(keys.end(), {"dilation", "reach"}); break;
    case TopologyBuilderKind::Random: keys.insert(keys.end(), {"per_node", "seed"}); break;
    case TopologyBuilderKind::Block: keys.push_back("size"); break;
    case TopologyBuilderKind::Global: keys.push_back("positions"); break;
    default: break;
  }
  return keys;
}

bool on_token_axis(const std::string& type) { return type == kTokenType || type == kEmbeddingType; }

void parse_nodes(TopologySpec& spec, const Json& nodes) {
  const std::string& source = spec.source;
  if (!nodes.is_object()) bad(source, "nodes", "expected an object {\"TYPE\": count, ...}, got " + shown(nodes));
  for (const auto& [name, value] : nodes.items()) {
    const std::string path = "nodes." + key_text(name);
    check_name(source, path, Json(name));
    if (name == kTokenType || name == kEmbeddingType)
      bad(source, path, fmt::format("'{}' is built in (the sentence's tokens / their embeddings); name another type", name));
    TopologyNodeType type{.name = name};
    if (value.is_object()) {
      check_keys(source, path, value, {"count", "init", "in_sequence"});
      type.count = integer(source, path + ".count", required(source, path, value, "count", "nodes per sentence"), 1, kMaxNodes);
      if (value.contains("init")) {
        const Json& init = value.at("init");
        if (init != "learned" && init != "mean")
          bad(source, path + ".init", "expected \"learned\" or \"mean\", got " + shown(init));
        type.learned = init == "learned";
      }
      if (value.contains("in_sequence")) {
        if (!value.at("in_sequence").is_boolean())
          bad(source, path + ".in_sequence", "expected true or false, got " + shown(value.at("in_sequence")));
        type.in_sequence = value.at("in_sequence").get<bool>();
      }
      if (type.in_sequence && !type.learned)
        bad(source, path + ".init", "an in_sequence type leads the tokens as learned vectors ([CLS]); \"mean\" is for types of their own");
    } else {
      type.count = integer(source, path, value, 1, kMaxNodes);
    }
    spec.node_types.push_back(type);
  }
  // Each type's count is bounded, and so is their sum: 300 types of 4096 nodes (or 200 in_sequence ones, 819,200
  // positions before every sentence's tokens) ran out of memory, or ran for minutes in topo-topology, naming no
  // file.
  std::int64_t total = 0;
  for (const TopologyNodeType& t : spec.node_types) total += t.count;
  if (total > kMaxNodes)
    bad(source, "nodes",
        fmt::format("the types' counts sum to {} nodes per sentence; at most {} in all", total, kMaxNodes));
}

// The type a relation end names: tok, emb or a declared type that is not in the token sequence.
void check_end(const TopologySpec& spec, const std::string& path, const Json& value, bool destination) {
  check_name(spec.source, path, value);
  const std::string name = value.get<std::string>();
  if (destination && name == kEmbeddingType)
    bad(spec.source, path, "'emb' (the tokens' input embeddings) is a source only: it is never updated");
  if (on_token_axis(name)) return;
  const TopologyNodeType* type = spec.node_type(name);
  if (type == nullptr) {
    std::vector<std::string> known = {kTokenType, kEmbeddingType};
    for (const TopologyNodeType& t : spec.node_types)
      if (!t.in_sequence) known.push_back(t.name);
    bad(spec.source, path, fmt::format("unknown node type '{}' (known: {})", name, fmt::join(known, ", ")));
  }
  if (type->in_sequence) {
    std::int64_t first = 0;  // the type's first position on tok: the in_sequence types before it lead
    for (const TopologyNodeType& t : spec.node_types) {
      if (&t == type) break;
      if (t.in_sequence) first += t.count;
    }
    const std::string positions = type->count == 1 ? fmt::format("position {}", first)
                                                   : fmt::format("positions {}..{}", first, first + type->count - 1);
    bad(spec.source, path,
        fmt::format("'{}' is in_sequence: its nodes are tok's {}, so relations reach them as 'tok'", name, positions));
  }
}

TopologyRelation parse_relation(const TopologySpec& spec, const Json& value, std::size_t index) {
  const std::string& source = spec.source;
  TopologyRelation r;
  r.path = fmt::format("relations[{}]", index);
  if (!value.is_object()) bad(source, r.path, "expected an object {\"name\", \"src\", \"dst\", \"builder\", ...}, got " + shown(value));
  const Json& name = required(source, r.path, value, "name", "the relation's name");
  check_name(source, r.path + ".name", name);
  r.name = name.get<std::string>();
  check_end(spec, r.path + ".src", required(source, r.path, value, "src", "the attended node type"), false);
  check_end(spec, r.path + ".dst", required(source, r.path, value, "dst", "the attending node type"), true);
  r.src = value.at("src").get<std::string>();
  r.dst = value.at("dst").get<std::string>();
  r.builder = parse_builder(source, r.path + ".builder", required(source, r.path, value, "builder", "how its edges are built"));
  const std::string kind = builder_name(r.builder);
  check_keys(source, r.path, value, builder_keys(r.builder));
  auto field = [&](const std::string& key, const std::string& what) -> const Json& {
    return required(source, r.path, value, key, what + " (builder " + kind + ")");
  };
  switch (r.builder) {
    case TopologyBuilderKind::Window: {
      if (value.contains("radius") == value.contains("width"))
        bad(source, r.path, "a window takes exactly one of radius (>= 0) or width (odd, or \"N/k\")");
      if (value.contains("radius")) {
        r.radius = integer(source, r.path + ".radius", value.at("radius"), 0);
        break;
      }
      const Json& width = value.at("width");
      if (width.is_string()) {
        const std::string text = width.get<std::string>();
        std::size_t used = 0;
        long long divisor = 0;
        // Digits only after "N/": stoll alone also took "N/ 4" and "N/+4".
        if (text.rfind("N/", 0) == 0 && text.size() > 2 && std::isdigit(static_cast<unsigned char>(text[2]))) try {
            divisor = std::stoll(text.substr(2), &used);
          } catch (const std::exception&) {
            used = 0;
          }
        if (used == 0 || 2 + used != text.size() || divisor < 1)
          bad(source, r.path + ".width", fmt::format("expected an odd integer or \"N/k\" with k >= 1, got {}", shown(width)));
        r.width_divisor = divisor;
      } else {
        r.width = integer(source, r.path + ".width", width, 1);
        if (r.width % 2 == 0) bad(source, r.path + ".width", fmt::format("must be odd (a window centred on its node), got {}", r.width));
      }
      break;
    }
    case TopologyBuilderKind::Dilated:
      r.dilation = integer(source, r.path + ".dilation", field("dilation", "the step between attended positions"), 1);
      r.reach = integer(source, r.path + ".reach", field("reach", "how many steps each way"), 1);
      break;
    case TopologyBuilderKind::Random:
      r.per_node = integer(source, r.path + ".per_node", field("per_node", "sources per destination"), 1);
      {
        // Any 64-bit seed (the docs ask only >= 0): the draws hash it, so no value is too large.
        const Json& seed = field("seed", "the pattern's seed");
        r.seed = seed.is_number_unsigned() ? seed.get<std::uint64_t>()
                                           : static_cast<std::uint64_t>(integer(source, r.path + ".seed", seed, 0));
      }
      break;
    case TopologyBuilderKind::Block:
      r.size = integer(source, r.path + ".size", field("size", "positions per block"), 1);
      break;
    case TopologyBuilderKind::Global: {
      const Json& positions = field("positions", "the global positions, e.g. [0]");
      if (!positions.is_array() || positions.empty())
        bad(source, r.path + ".positions", "expected a non-empty list of positions, got " + shown(positions));
      for (std::size_t i = 0; i < positions.size(); ++i)
        r.positions.push_back(integer(source, fmt::format("{}.positions[{}]", r.path, i), positions[i], 0));
      break;
    }
    case TopologyBuilderKind::Full:
      if (r.src != r.dst)
        bad(source, r.path + ".builder",
            fmt::format("full is every pair within one type; '{}' -> '{}' takes builder all", r.src, r.dst));
      break;
    default:
      break;
  }
  if (positional(r.builder) && r.src != r.dst && !(on_token_axis(r.src) && on_token_axis(r.dst)))
    bad(source, r.path + ".builder",
        fmt::format("{} pairs nodes by position, so src and dst must be the same type or both tok/emb; '{}' -> '{}' "
                    "is neither (all or random pair any types)",
                    kind, r.src, r.dst));
  return r;
}

TopologyHeadGroup parse_head_group(const TopologySpec& spec, const Json& value, std::size_t index) {
  const std::string& source = spec.source;
  TopologyHeadGroup g;
  g.path = fmt::format("head_groups[{}]", index);
  if (!value.is_object()) bad(source, g.path, "expected an object {\"heads\", \"relations\"}, got " + shown(value));
  check_keys(source, g.path, value, {"heads", "relations"});
  const Json& heads = required(source, g.path, value, "heads", "the group's heads (an integer, or one per layer)");
  if (heads.is_array()) {
    if (heads.empty()) bad(source, g.path + ".heads", "an empty list: give the heads of each layer");
    // A longer list set --layers to its length, and the config's check then named a field the user never typed.
    if (heads.size() > static_cast<std::size_t>(kMaxLayers))
      bad(source, g.path + ".heads",
          fmt::format("lists the heads of {} layers; a run has at most {} layers", heads.size(), kMaxLayers));
    g.per_layer = true;
    for (std::size_t l = 0; l < heads.size(); ++l)
      g.heads.push_back(integer(source, fmt::format("{}.heads[{}]", g.path, l), heads[l], 0, kMaxHeads));
  } else {
    g.heads.push_back(integer(source, g.path + ".heads", heads, 0, kMaxHeads));
  }
  const Json& relations = required(source, g.path, value, "relations", "the relations its heads attend over");
  if (!relations.is_array() || relations.empty())
    bad(source, g.path + ".relations", "expected a non-empty list of relation names, got " + shown(relations));
  for (std::size_t i = 0; i < relations.size(); ++i) {
    const std::string path = fmt::format("{}.relations[{}]", g.path, i);
    check_name(source, path, relations[i]);
    const std::string name = relations[i].get<std::string>();
    int found = -1;
    for (std::size_t r = 0; r < spec.relations.size(); ++r)
      if (spec.relations[r].name == name) found = static_cast<int>(r);
    if (found < 0) {
      std::vector<std::string> known;
      for (const TopologyRelation& r : spec.relations) known.push_back(r.name);
      bad(source, path, fmt::format("unknown relation '{}' (the file's relations: {})", name, fmt::join(known, ", ")));
    }
    if (std::find(g.relations.begin(), g.relations.end(), found) != g.relations.end())
      bad(source, path, fmt::format("relation '{}' is listed twice", name));
    g.relations.push_back(found);
  }
  return g;
}

}  // namespace

std::string builder_name(TopologyBuilderKind kind) {
  switch (kind) {
    case TopologyBuilderKind::Window: return "window";
    case TopologyBuilderKind::Dilated: return "dilated";
    case TopologyBuilderKind::Ring: return "ring";
    case TopologyBuilderKind::Random: return "random";
    case TopologyBuilderKind::Block: return "block";
    case TopologyBuilderKind::All: return "all";
    case TopologyBuilderKind::Self: return "self";
    case TopologyBuilderKind::Full: return "full";
    case TopologyBuilderKind::Global: return "global";
  }
  return "?";
}

std::int64_t TopologyHeadGroup::heads_in_layer(std::size_t l, std::int64_t total) const {
  if (heads.empty()) return total;
  return per_layer ? heads.at(l) : heads.front();
}

bool TopologyHeadGroup::attends() const {
  return heads.empty() || std::any_of(heads.begin(), heads.end(), [](std::int64_t h) { return h > 0; });
}

std::int64_t TopologySpec::lead_count() const {
  std::int64_t c = 0;
  for (const TopologyNodeType& t : node_types)
    if (t.in_sequence) c += t.count;
  return c;
}

const TopologyNodeType* TopologySpec::node_type(const std::string& name) const {
  for (const TopologyNodeType& t : node_types)
    if (t.name == name) return &t;
  return nullptr;
}

std::int64_t TopologySpec::nodes_in_sentence(const std::string& type, std::int64_t tokens) const {
  if (type == kTokenType) return lead_count() + tokens;
  if (type == kEmbeddingType) return tokens;
  const TopologyNodeType* t = node_type(type);
  TOPO_CHECK(t != nullptr && !t->in_sequence, "{}: no node type '{}' outside the token sequence", source, type);
  return t->count;
}

std::vector<std::string> TopologySpec::destination_types() const {
  std::vector<std::string> out = {kTokenType};
  for (const TopologyNodeType& t : node_types)
    for (const TopologyRelation& r : relations)
      if (r.dst == t.name) {
        out.push_back(t.name);
        break;
      }
  return out;
}

std::vector<std::string> TopologySpec::graph_types() const {
  std::vector<std::string> out = {kTokenType};
  for (const TopologyRelation& r : relations)
    if (r.src == kEmbeddingType) {
      out.push_back(kEmbeddingType);
      break;
    }
  for (const TopologyNodeType& t : node_types)
    if (!t.in_sequence) out.push_back(t.name);
  return out;
}

void TopologySpec::check_heads(std::int64_t heads, std::int64_t layers) const {
  for (const TopologyHeadGroup& g : head_groups)
    if (g.per_layer && static_cast<std::int64_t>(g.heads.size()) != layers)
      bad(source, g.path + ".heads",
          fmt::format("lists the heads of {} layers; this run has --layers {}", g.heads.size(), layers));
  for (std::int64_t l = 0; l < layers; ++l) {
    std::int64_t sum = 0;
    std::vector<std::string> parts;
    for (const TopologyHeadGroup& g : head_groups) {
      const std::int64_t h = g.heads_in_layer(static_cast<std::size_t>(l), heads);
      sum += h;
      parts.push_back(std::to_string(h));
    }
    if (sum != heads)
      bad(source, "head_groups",
          fmt::format("the groups' heads sum to {} ({}) in layer {}; this run has --heads {}", sum,
                      fmt::join(parts, " + "), l + 1, heads));
  }
}

TopologySpec parse_topology(const nlohmann::ordered_json& file, const std::string& source) {
  TopologySpec spec;
  spec.source = source;
  if (!file.is_object()) bad(source, "(top)", "expected a JSON object with \"relations\", got " + shown(file));
  check_keys(source, "(top)", file, {"description", "nodes", "relations", "head_groups", "schedule"});
  if (file.contains("description") && !file.at("description").is_string())
    bad(source, "description", "expected a string, got " + shown(file.at("description")));
  if (file.contains("nodes")) parse_nodes(spec, file.at("nodes"));
  const Json& relations = required(source, "(top)", file, "relations", "the list of relations");
  if (!relations.is_array() || relations.empty())
    bad(source, "relations", "expected a non-empty list of relations, got " + shown(relations));
  if (relations.size() > kMaxRelations)
    bad(source, "relations", fmt::format("{} relations; a file holds at most {}", relations.size(), kMaxRelations));
  for (std::size_t i = 0; i < relations.size(); ++i) {
    TopologyRelation r = parse_relation(spec, relations[i], i);
    for (const TopologyRelation& other : spec.relations)
      if (other.name == r.name) bad(source, r.path + ".name", fmt::format("relation '{}' is named twice", r.name));
    spec.relations.push_back(std::move(r));
  }
  if (file.contains("schedule")) {
    const Json& s = file.at("schedule");
    if (s != "parallel" && s != "sequential")
      bad(source, "schedule", "expected \"parallel\" or \"sequential\", got " + shown(s));
    spec.schedule = s == "parallel" ? UpdateSchedule::Parallel : UpdateSchedule::Sequential;
  }
  if (file.contains("head_groups")) {
    const Json& groups = file.at("head_groups");
    if (!groups.is_array() || groups.empty())
      bad(source, "head_groups", "expected a non-empty list of {\"heads\", \"relations\"} (or no head_groups: every head over every relation), got " + shown(groups));
    if (groups.size() > kMaxRelations)  // each builds its own copy of its relations' edges
      bad(source, "head_groups", fmt::format("{} groups; a file holds at most {}", groups.size(), kMaxRelations));
    for (std::size_t i = 0; i < groups.size(); ++i) spec.head_groups.push_back(parse_head_group(spec, groups[i], i));
    std::size_t layers = 0;
    for (const TopologyHeadGroup& g : spec.head_groups)
      if (g.per_layer) {
        if (layers != 0 && g.heads.size() != layers)
          bad(source, g.path + ".heads",
              fmt::format("lists {} layers, an earlier group {}: every per-layer list covers the same layers",
                          g.heads.size(), layers));
        layers = g.heads.size();
      }
    // Every layer runs the same --heads (1 .. kMaxHeads) heads, so each layer's groups sum to one count in that
    // range; checked here, the error names the file rather than an implied --heads the user never typed.
    std::vector<std::int64_t> sums;  // per layer
    for (std::size_t l = 0; l < std::max<std::size_t>(layers, 1); ++l) {
      std::int64_t sum = 0;
      for (const TopologyHeadGroup& g : spec.head_groups) sum += g.heads_in_layer(l, 0);
      if (sum == 0)
        bad(source, "head_groups",
            layers == 0 ? std::string("every group has 0 heads: at least one head must attend")
                        : fmt::format("every group has 0 heads in layer {}: at least one head must attend", l + 1));
      sums.push_back(sum);
      if (sum != sums.front())
        bad(source, "head_groups",
            fmt::format("the groups' heads sum to {} in layer 1 but {} in layer {}: every layer runs --heads "
                        "heads, so every layer's heads must sum to the same count",
                        sums.front(), sum, l + 1));
    }
    if (sums.front() > kMaxHeads)
      bad(source, "head_groups",
          fmt::format("the groups' heads sum to {}; a run has at most {} heads", sums.front(), kMaxHeads));
  } else {
    TopologyHeadGroup all;
    all.path = "(all heads)";
    all.relations.resize(spec.relations.size());
    std::iota(all.relations.begin(), all.relations.end(), 0);
    spec.head_groups.push_back(all);
  }
  // Nothing declared goes unused, and the tokens are updated.
  for (std::size_t r = 0; r < spec.relations.size(); ++r) {
    bool used = false;
    for (const TopologyHeadGroup& g : spec.head_groups)
      used |= std::find(g.relations.begin(), g.relations.end(), static_cast<int>(r)) != g.relations.end();
    if (!used)
      bad(source, spec.relations[r].path,
          fmt::format("relation '{}' is in no head group: no head would attend over it", spec.relations[r].name));
  }
  for (const TopologyNodeType& t : spec.node_types) {
    if (t.in_sequence) continue;
    bool used = false;
    for (const TopologyRelation& r : spec.relations) used |= r.src == t.name || r.dst == t.name;
    if (!used) bad(source, "nodes." + t.name, fmt::format("node type '{}' is in no relation", t.name));
  }
  bool tokens_updated = false;
  for (const TopologyRelation& r : spec.relations) tokens_updated |= r.dst == kTokenType;
  if (!tokens_updated) bad(source, "relations", "no relation has dst 'tok': the tokens would never be updated");
  // Every type that is updated is updated by every head group that attends (a group's heads attend at each
  // destination); a group switched off (0 heads in every layer) was refused for an empty softmax it never takes.
  for (const TopologyHeadGroup& g : spec.head_groups) {
    if (!g.attends()) continue;
    for (const std::string& type : spec.destination_types()) {
      bool feeds = false;
      for (int r : g.relations) feeds |= spec.relations[static_cast<std::size_t>(r)].dst == type;
      if (!feeds)
        bad(source, g.path + ".relations",
            fmt::format("no relation into '{}', which other relations update: this group's heads would have an "
                        "empty softmax at every '{}' node",
                        type, type));
    }
  }
  return spec;
}

nlohmann::ordered_json read_topology_json(const std::string& path) {
  return read_json_file<nlohmann::ordered_json>(path, "topology file");
}

TopologySpec read_topology_file(const std::string& path) { return parse_topology(read_topology_json(path), path); }

bool band_runs(const TopologySpec& spec) {
  if (spec.destination_types().size() != 1) return false;
  for (const TopologyHeadGroup& g : spec.head_groups) {
    if (g.relations.size() != 1) return false;
    const TopologyRelation& r = spec.relations[static_cast<std::size_t>(g.relations[0])];
    const bool dense = r.builder == TopologyBuilderKind::Full || r.builder == TopologyBuilderKind::All;
    if (r.src != kTokenType || (r.builder != TopologyBuilderKind::Window && !dense)) return false;
  }
  return true;
}

}  // namespace topo::models
