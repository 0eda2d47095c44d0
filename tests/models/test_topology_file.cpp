// Topology files: every builder's edges on small sentences (by hand), the head groups' de-duplication and
// padding, random edges fixed per seed and length, and every kind of bad file as an error naming the file and
// the JSON path.
#include <doctest/doctest.h>
#include <fmt/core.h>

#include <algorithm>
#include <set>

#include "models/topology_transformer/topology_graph.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::models;
using topo::testing::error_of;

namespace {

TopologySpec spec_of(const std::string& text) { return parse_topology(nlohmann::ordered_json::parse(text), "test.json"); }

// A file of one relation over tok (plus the given nodes).
TopologySpec one_relation(const std::string& relation, const std::string& nodes = "{}") {
  return spec_of(R"({"nodes": )" + nodes + R"(, "relations": [)" + relation + "]}");
}

// The sources of destination `d` in one sentence.
std::vector<std::int64_t> sources(const SentenceEdges& e, std::int64_t d) {
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < e.size(); ++i)
    if (e.dst[i] == d) out.push_back(e.src[i]);
  return out;
}

using Ids = std::vector<std::int64_t>;

}  // namespace

TEST_CASE("topology builders: each relation's edges in one sentence, by hand") {
  auto edges = [](const std::string& relation, std::int64_t n, const std::string& nodes = "{}") {
    const TopologySpec spec = one_relation(relation, nodes);
    return relation_edges(spec, spec.relations[0], n);
  };
  const std::string tok = R"("name": "r", "src": "tok", "dst": "tok", )";
  {
    const auto e = edges("{" + tok + R"("builder": "window", "radius": 1})", 5);
    CHECK(e.size() == 13);
    CHECK(sources(e, 0) == Ids{0, 1});
    CHECK(sources(e, 2) == Ids{1, 2, 3});
    CHECK(sources(e, 4) == Ids{3, 4});
  }
  // "N/2" at n = 5: ceil(5/2) = 3 -> radius 1; at n = 8: 4 -> 5 -> radius 2.
  CHECK(edges("{" + tok + R"("builder": "window", "width": "N/2"})", 5).size() == 13);
  CHECK(sources(edges("{" + tok + R"("builder": "window", "width": "N/2"})", 8), 4) == Ids{2, 3, 4, 5, 6});
  CHECK(sources(edges("{" + tok + R"("builder": "window", "width": 5})", 8), 0) == Ids{0, 1, 2});
  {
    const auto e = edges("{" + tok + R"("builder": "dilated", "dilation": 2, "reach": 2})", 7);
    CHECK(sources(e, 3) == Ids{1, 5});
    CHECK(sources(e, 0) == Ids{2, 4});
    CHECK(sources(e, 6) == Ids{2, 4});
  }
  CHECK(edges("{" + tok + R"("builder": "ring"})", 1).size() == 0);
  CHECK(edges("{" + tok + R"("builder": "ring"})", 2).size() == 2);
  {
    const auto e = edges("{" + tok + R"("builder": "ring"})", 5);
    CHECK(e.size() == 10);
    CHECK(sources(e, 0) == Ids{4, 1});  // the predecessor, then the successor
    CHECK(sources(e, 4) == Ids{3, 0});
  }
  {
    const auto e = edges("{" + tok + R"("builder": "block", "size": 2})", 5);
    CHECK(sources(e, 1) == Ids{0, 1});
    CHECK(sources(e, 4) == Ids{4});
    CHECK(e.size() == 9);
  }
  CHECK(edges("{" + tok + R"("builder": "self"})", 3).size() == 3);
  {
    const auto e = edges("{" + tok + R"("builder": "global", "positions": [0, 9]})", 4);  // 9: past the sentence
    CHECK(sources(e, 0) == Ids{0, 1, 2, 3});
    CHECK(sources(e, 2) == Ids{0});
    CHECK(e.size() == 7);
  }
  CHECK(edges("{" + tok + R"("builder": "full"})", 4).size() == 16);
  // Values far past the sentence are clipped, not looped over: the whole sentence, or nothing.
  CHECK(edges("{" + tok + R"("builder": "window", "radius": 1000000000000})", 4).size() == 16);
  CHECK(edges("{" + tok + R"("builder": "dilated", "dilation": 1000000000000, "reach": 1000000000000})", 4).size() == 0);
  CHECK(edges("{" + tok + R"("builder": "dilated", "dilation": 1, "reach": 1000000000000})", 4).size() == 12);
  CHECK(edges("{" + tok + R"("builder": "block", "size": 1000000000000})", 4).size() == 16);
  // Another type: the relay reads every token (all); the tokens' embeddings beside a [CLS] lead node.
  {
    const TopologySpec spec = spec_of(R"({"nodes": {"relay": 1}, "relations": [
        {"name": "read", "src": "tok", "dst": "relay", "builder": "all"},
        {"name": "bcast", "src": "relay", "dst": "tok", "builder": "all"}]})");
    CHECK(sources(relation_edges(spec, spec.relations[0], 4), 0) == Ids{0, 1, 2, 3});
    CHECK(sources(relation_edges(spec, spec.relations[1], 4), 3) == Ids{0});
  }
  {
    const TopologySpec spec = spec_of(R"({"nodes": {"cls": {"count": 1, "in_sequence": true}}, "relations": [
        {"name": "w", "src": "tok", "dst": "tok", "builder": "window", "radius": 1},
        {"name": "e", "src": "emb", "dst": "tok", "builder": "self"}]})");
    CHECK(spec.lead_count() == 1);
    const auto w = relation_edges(spec, spec.relations[0], 3);  // positions [CLS] 0, tokens 1..3
    CHECK(sources(w, 0) == Ids{0, 1});
    CHECK(sources(w, 1) == Ids{0, 1, 2});
    const auto e = relation_edges(spec, spec.relations[1], 3);  // emb j sits beside token j (tok node j + 1)
    CHECK(sources(e, 0).empty());
    CHECK(sources(e, 1) == Ids{0});
    CHECK(sources(e, 3) == Ids{2});
  }
}

TEST_CASE("topology builders: random edges are distinct, fixed per seed and sentence length") {
  auto edges = [](std::int64_t seed, std::int64_t per_node, std::int64_t n) {
    const TopologySpec spec = one_relation(R"({"name": "r", "src": "tok", "dst": "tok", "builder": "random", "per_node": )" +
                                           std::to_string(per_node) + R"(, "seed": )" + std::to_string(seed) + "}");
    return relation_edges(spec, spec.relations[0], n);
  };
  bool differs = false;
  for (std::int64_t n = 1; n <= 20; ++n) {
    const auto a = edges(7, 3, n), b = edges(7, 3, n), c = edges(8, 3, n);
    CHECK(a.src == b.src);
    CHECK(a.dst == b.dst);
    differs |= a.src != c.src;
    for (std::int64_t d = 0; d < n; ++d) {
      const Ids s = sources(a, d);
      CHECK(static_cast<std::int64_t>(s.size()) == std::min<std::int64_t>(3, n));
      CHECK(std::is_sorted(s.begin(), s.end()));
      CHECK(std::adjacent_find(s.begin(), s.end()) == s.end());
      CHECK(s.front() >= 0);
      CHECK(s.back() < n);
    }
  }
  CHECK(differs);  // another seed, another pattern
  // Every source is drawn: over many destinations each position appears.
  std::set<std::int64_t> seen;
  const auto wide = edges(1, 2, 40);
  seen.insert(wide.src.begin(), wide.src.end());
  CHECK(seen.size() > 30);
  // Any 64-bit seed is a seed (the docs ask only >= 0); the largest draws as well as any.
  const TopologySpec big = one_relation(
      R"({"name": "r", "src": "tok", "dst": "tok", "builder": "random", "per_node": 2, "seed": 18446744073709551615})");
  CHECK(big.relations[0].seed == 18446744073709551615ull);
  CHECK(relation_edges(big, big.relations[0], 5).size() == 10);
  CHECK(error_of([] { (void)one_relation(R"({"name": "r", "src": "tok", "dst": "tok", "builder": "random", "per_node": 2, "seed": -1})"); })
            .find("relations[0].seed: must be >= 0, got -1") != std::string::npos);
}

TEST_CASE("head groups: a pair two relations hold is one edge; groups into a type share their source types") {
  const TopologySpec spec = spec_of(R"({"nodes": {"g": 1}, "relations": [
      {"name": "local", "src": "tok", "dst": "tok", "builder": "window", "radius": 1},
      {"name": "me", "src": "tok", "dst": "tok", "builder": "self"},
      {"name": "read", "src": "tok", "dst": "g", "builder": "all"},
      {"name": "bcast", "src": "g", "dst": "tok", "builder": "all"}],
    "head_groups": [{"heads": 1, "relations": ["local", "me", "read", "bcast"]},
                    {"heads": 1, "relations": ["me", "read"]}]})");
  const TopologyGraph t = build_topology(spec, {5, 1});
  REQUIRE(t.dst_types == std::vector<std::string>{"tok", "g"});
  REQUIRE(t.blocks.size() == 2);
  REQUIRE(t.blocks[0].size() == 2);
  // Group 0 into tok: the window's 13 + 1 edges, self's pairs all dropped, the global node's 6.
  CHECK(t.graph.num_edges("g0:local") == 13 + 1);
  CHECK(t.graph.num_edges("g0:me") == 0);
  CHECK(t.graph.num_edges("g0:bcast") == 6);
  CHECK(t.blocks[0][0].num_edges() == 20);
  // Group 1 into tok: self only, padded with an empty relation from g so both blocks read [tok; g].
  CHECK(t.graph.num_edges("g1:me") == 6);
  CHECK(t.graph.num_edges("g1:pad:g:tok") == 0);
  CHECK(t.blocks[0][1].same_nodes(t.blocks[0][0]));
  CHECK(t.blocks[0][1].src_types == std::vector<std::string>{"tok", "g"});
  CHECK(t.blocks[1][0].num_edges() == 6);
  // The origins name each graph relation's group and file relation.
  for (int r = 0; r < t.graph.num_relations(); ++r) {
    const auto& o = t.origins[static_cast<std::size_t>(r)];
    const std::string name = t.graph.canonical_etype(r).etype;
    if (o.relation < 0)
      CHECK(name.find("pad:") != std::string::npos);
    else
      CHECK(name == fmt::format("g{}:{}", o.group, spec.relations[static_cast<std::size_t>(o.relation)].name));
  }
}

TEST_CASE("topology files: every bad file is an error naming the file and the JSON path") {
  struct Bad {
    std::string text, expected;
  };
  const std::string head = R"({"relations": [)";
  const std::string local = R"({"name": "local", "src": "tok", "dst": "tok", "builder": "window", "radius": 1})";
  const Bad cases[] = {
      {head + R"({"name": "a", "src": "tok", "dst": "tok", "builder": "windw", "radius": 1}]})",
       "relations[0].builder: unknown builder \"windw\""},
      {head + R"({"name": "a", "src": "tok", "dst": "tok", "builder": "window"}]})",
       "relations[0]: a window takes exactly one of radius"},
      {head + R"({"name": "a", "src": "tok", "dst": "tok", "builder": "window", "radius": "1"}]})",
       "relations[0].radius: expected an integer, got \"1\""},
      {head + R"({"name": "a", "src": "tok", "dst": "tok", "builder": "window", "radius": -1}]})",
       "relations[0].radius: must be >= 0, got -1"},
      {head + R"({"name": "a", "src": "tok", "dst": "tok", "builder": "window", "raduis": 1}]})",
       "relations[0].raduis: unknown field"},
      {head + R"({"name": "a", "src": "tok", "dst": "tok", "builder": "window", "width": 4}]})",
       "relations[0].width: must be odd"},
      {head + R"({"name": "a", "src": "tok", "dst": "tok", "builder": "window", "width": "N/0"}]})",
       "relations[0].width: expected an odd integer or \"N/k\""},
      {head + local + R"(, {"name": "b", "src": "glob", "dst": "tok", "builder": "all"}]})",
       "relations[1].src: unknown node type 'glob' (known: tok, emb)"},
      {head + local + R"(, {"name": "b", "src": "tok", "dst": "emb", "builder": "self"}]})",
       "relations[1].dst: 'emb' (the tokens' input embeddings) is a source only"},
      {head + local + R"(, {"name": "local", "src": "tok", "dst": "tok", "builder": "self"}]})",
       "relations[1].name: relation 'local' is named twice"},
      {head + R"({"src": "tok", "dst": "tok", "builder": "self"}]})", "relations[0].name: missing"},
      {head + R"({"name": "a", "src": "tok", "dst": "tok", "builder": "dilated", "dilation": 2}]})",
       "relations[0].reach: missing"},
      {head + R"({"name": "a", "src": "tok", "dst": "tok", "builder": "random", "per_node": 2}]})",
       "relations[0].seed: missing"},
      {head + R"({"name": "a", "src": "tok", "dst": "tok", "builder": "block", "size": 0}]})",
       "relations[0].size: must be >= 1, got 0"},
      {R"({"nodes": {"g": 1}, "relations": [)" + local + R"(, {"name": "b", "src": "tok", "dst": "g", "builder": "window", "radius": 1}]})",
       "relations[1].builder: window pairs nodes by position"},
      {R"({"nodes": {"g": 1}, "relations": [)" + local + R"(, {"name": "b", "src": "g", "dst": "tok", "builder": "full"}]})",
       "relations[1].builder: full is every pair within one type"},
      {R"({"nodes": {"cls": {"count": 1, "in_sequence": true}}, "relations": [)" + local +
           R"(, {"name": "b", "src": "cls", "dst": "tok", "builder": "all"}]})",
       "relations[1].src: 'cls' is in_sequence"},
      {R"({"nodes": {"cls": {"count": 1, "in_sequence": true, "init": "mean"}}, "relations": [)" + local + "]}",
       "nodes.cls.init: an in_sequence type"},
      {R"({"nodes": {"g": 0}, "relations": [)" + local + "]}", "nodes.g: must be >= 1, got 0"},
      {R"({"nodes": {"g": 1}, "relations": [)" + local + "]}", "nodes.g: node type 'g' is in no relation"},
      {R"({"nodes": {"tok": 1}, "relations": [)" + local + "]}", "nodes.tok: 'tok' is built in"},
      {head + local + R"(], "head_groups": [{"heads": 2, "relations": ["local", "far"]}]})",
       "head_groups[0].relations[1]: unknown relation 'far' (the file's relations: local)"},
      {head + local + R"(, {"name": "b", "src": "tok", "dst": "tok", "builder": "self"}], "head_groups": [{"heads": 2, "relations": ["local"]}]})",
       "relations[1]: relation 'b' is in no head group"},
      {head + local + R"(], "head_groups": [{"heads": 2, "relations": ["local"]}, {"heads": [1], "relations": ["local"]}, {"heads": [1, 2], "relations": ["local"]}]})",
       "head_groups[2].heads: lists 2 layers, an earlier group 1"},
      {head + local + R"(], "head_groups": [{"heads": -1, "relations": ["local"]}]})", "head_groups[0].heads: must be >= 0"},
      {head + local + R"(], "head_groups": [{"heads": 0, "relations": ["local"]}]})",
       "head_groups: every group has 0 heads: at least one head must attend"},
      {head + local + R"(], "head_groups": [{"heads": [2, 0], "relations": ["local"]}, {"heads": [1, 0], "relations": ["local"]}]})",
       "head_groups: every group has 0 heads in layer 2"},
      {R"({"nodes": {"g": 1}, "relations": [)" + local + R"(, {"name": "read", "src": "tok", "dst": "g", "builder": "all"}],
         "head_groups": [{"heads": 1, "relations": ["local", "read"]}, {"heads": 1, "relations": ["local"]}]})",
       "head_groups[1].relations: no relation into 'g'"},
      {R"({"nodes": {"g": 1}, "relations": [{"name": "read", "src": "tok", "dst": "g", "builder": "all"}]})",
       "relations: no relation has dst 'tok'"},
      {R"({"relation": [])", "not valid JSON"},
      {R"({"relations": [], "schedule": "parallel"})", "relations: expected a non-empty list"},
      {head + local + R"(], "schedule": "lazy"})", "schedule: expected \"parallel\" or \"sequential\""},
      {head + local + R"(], "head_group": []})", "(top).head_group: unknown field"},
      {R"([1, 2])", "(top): expected a JSON object"},
      {head + local + R"(], "relations": []})", "the key \"relations\" appears twice in one object"},
      {R"({"description": )" + std::string(100000, '[') + std::string(100000, ']') + "}", "nested deeper than 256"},
      {R"({"nodes": {"g": 5000}, "relations": [)" + local + "]}", "nodes.g: must be <= 4096, got 5000"},
      {head + local + R"(], "head_groups": [{"heads": 100000, "relations": ["local"]}]})", "head_groups[0].heads: must be <= 4096"},
      {head + R"({"name": "a", "src": "tok", "dst": "tok", "builder": "window", "radius": 18446744073709551615}]})",
       "relations[0].radius: must be <= "},
      // Layers whose heads sum differently fit no run: said of the file, not of an implied --heads.
      {head + local + R"(], "head_groups": [{"heads": [1, 2], "relations": ["local"]}]})",
       "head_groups: the groups' heads sum to 1 in layer 1 but 2 in layer 2"},
      {head + local + R"(], "head_groups": [{"heads": 4096, "relations": ["local"]}, {"heads": 1, "relations": ["local"]}]})",
       "head_groups: the groups' heads sum to 4097; a run has at most 4096 heads"},
      // An in_sequence type named as an end: the error gives the type's own positions on tok.
      {R"({"nodes": {"reg": {"count": 3, "in_sequence": true}, "cls": {"count": 2, "in_sequence": true}}, "relations": [)" +
           local + R"(, {"name": "b", "src": "tok", "dst": "cls", "builder": "all"}]})",
       "relations[1].dst: 'cls' is in_sequence: its nodes are tok's positions 3..4, so relations reach them as 'tok'"},
  };
  for (const Bad& c : cases) {
    CAPTURE(c.text);
    const std::string path = topo::testing::write_temp_file("bad_topology.json", c.text);
    const std::string message = error_of([&] { (void)read_topology_file(path); });
    CAPTURE(message);
    CHECK(message.find(c.expected) != std::string::npos);
    CHECK(message.find(path) != std::string::npos);
  }
  CHECK(error_of([] { (void)read_topology_file("/nonexistent/t.json"); }).find("topology file '/nonexistent/t.json' cannot be opened") !=
        std::string::npos);
  CHECK(error_of([] { (void)read_topology_file("/tmp"); }).find("topology file '/tmp' is a directory") != std::string::npos);

  // Heads that do not sum to --heads, per-layer lists of another depth.
  const TopologySpec groups = spec_of(head + local + R"(, {"name": "me", "src": "tok", "dst": "tok", "builder": "self"}],
      "head_groups": [{"heads": 2, "relations": ["local"]}, {"heads": [1, 1], "relations": ["me"]}]})");
  CHECK(error_of([&] { groups.check_heads(4, 2); }).find("sum to 3 (2 + 1) in layer 1; this run has --heads 4") !=
        std::string::npos);
  CHECK_NOTHROW(groups.check_heads(3, 2));
  CHECK(error_of([&] { groups.check_heads(3, 3); }).find("head_groups[1].heads: lists the heads of 2 layers; this run has --layers 3") !=
        std::string::npos);
  const TopologySpec all_heads = spec_of(head + local + "]}");
  CHECK_NOTHROW(all_heads.check_heads(7, 5));

  // A destination without an in-edge: dilated alone leaves a one-token sentence without context.
  const TopologySpec dilated = spec_of(head + R"({"name": "far", "src": "tok", "dst": "tok", "builder": "dilated", "dilation": 2, "reach": 1}]})");
  const std::string empty = error_of([&] { check_topology_lengths(dilated, 8); });
  CHECK(empty.find("test.json: (all heads) (far): node 0 of 'tok' in a sentence of 1 token has no in-edge") != std::string::npos);
  CHECK(error_of([&] { build_topology(dilated, {5, 1, 4}); }).find("sentence of 1 token has no in-edge") != std::string::npos);
  CHECK_NOTHROW(build_topology(dilated, {5, 4}));

  // A group switched off (0 heads in every layer: an ablation) takes no softmax: it need not reach every updated
  // type nor every node of one. It was refused for the empty softmax it never takes.
  const std::string hub = R"({"nodes": {"hub": 1}, "relations": [)" + local + R"(,
      {"name": "up", "src": "tok", "dst": "hub", "builder": "all"},
      {"name": "far", "src": "tok", "dst": "tok", "builder": "dilated", "dilation": 2, "reach": 1}],
    "head_groups": [{"heads": )";
  const auto with_heads = [&](const std::string& on, const std::string& off) {
    return hub + on + R"(, "relations": ["local", "up"]}, {"heads": )" + off + R"(, "relations": ["far"]}]})";
  };
  const TopologySpec off = spec_of(with_heads("[2, 2]", "[0, 0]"));
  CHECK(!off.head_groups[1].attends());
  CHECK(off.head_groups[0].attends());
  CHECK_NOTHROW(check_topology_lengths(off, 8));
  CHECK(error_of([&] { (void)spec_of(with_heads("[2, 1]", "[0, 1]")); })
            .find("test.json: head_groups[1].relations: no relation into 'hub'") != std::string::npos);
}

TEST_CASE("topology files past the size bounds: errors naming the file and the field, not out-of-memory") {
  const std::string local = R"({"name": "local", "src": "tok", "dst": "tok", "builder": "window", "radius": 1})";
  // A probe (2026-12-06): each of these ran out of memory ("out of memory (an allocation failed)", no file named)
  // or ran for minutes; "N/ 4" and "N/+4" were taken as "N/4".
  CHECK(error_of([&] { (void)spec_of(R"({"nodes": {"a": 4096, "b": 4096}, "relations": [)" + local +
                                      R"(, {"name": "r", "src": "a", "dst": "tok", "builder": "all"},
                                            {"name": "s", "src": "b", "dst": "tok", "builder": "all"}]})"); })
            .find("test.json: nodes: the types' counts sum to 8192 nodes per sentence; at most 4096 in all") !=
        std::string::npos);
  CHECK_NOTHROW(spec_of(R"({"nodes": {"a": 4000, "b": {"count": 96, "in_sequence": true}}, "relations": [)" + local +
                        R"(, {"name": "r", "src": "a", "dst": "tok", "builder": "all"}]})"));
  for (const std::string width : {"N/ 4", "N/+4", "N/-4", "N/", "N/4 "}) {
    CAPTURE(width);
    CHECK(error_of([&] {
            (void)spec_of(fmt::format(R"({{"relations": [{{"name": "w", "src": "tok", "dst": "tok", "builder": "window", "width": "{}"}}]}})", width));
          }).find("relations[0].width: expected an odd integer or \"N/k\" with k >= 1") != std::string::npos);
  }
  // A per-layer list of 3200 layers set --layers 3200, and the config refused "'layers' = 3200", naming no file.
  CHECK(error_of([&] {
          (void)spec_of(R"({"relations": [)" + local + R"(], "head_groups": [{"heads": [)" +
                        fmt::format("{}", fmt::join(std::vector<int>(3200, 1), ", ")) + R"(], "relations": ["local"]}]})");
        }).find("test.json: head_groups[0].heads: lists the heads of 3200 layers; a run has at most 1024 layers") !=
        std::string::npos);
  // Names and keys of 1 MB were quoted whole (a 1 MB error line), a key with a newline or a terminal escape as
  // it was; 20,000 relations ran for minutes.
  const std::string big(1 << 20, 'x');
  for (const std::string& text :
       {R"({"relations": [)" + local + R"(], ")" + big + R"(": 1})",
        R"({"relations": [)" + local + R"(], "head_groups": [{"heads": 1, "relations": [")" + big + R"("]}]})",
        R"({"nodes": {")" + big + R"(!": 1}, "relations": [)" + local + "]}",
        R"({"relations": [{"name": ")" + big + R"(", "src": "tok", "dst": "tok", "builder": "self"}]})"}) {
    const std::string m = error_of([&] { (void)spec_of(text); });
    CAPTURE(m.substr(0, 300));
    CHECK(m.size() < 400);
    CHECK(m.find("... (1048") != std::string::npos);
  }
  CHECK(error_of([&] { (void)spec_of(R"({"relations": [)" + local + R"(], "a\nb\u001b[31m": 1})"); })
            .find(R"(test.json: (top)."a\nb\u001b[31m": unknown field)") != std::string::npos);
  CHECK(error_of([&] {
          (void)spec_of(R"({"relations": [{"name": ")" + std::string(101, 'r') +
                        R"(", "src": "tok", "dst": "tok", "builder": "self"}]})");
        }).find("relations[0].name: \"rrrr") != std::string::npos);
  {
    std::vector<std::string> many;
    for (int i = 0; i < 20000; ++i)
      many.push_back(fmt::format(R"({{"name": "r{}", "src": "tok", "dst": "tok", "builder": "self"}})", i));
    CHECK(error_of([&] { (void)spec_of(fmt::format(R"({{"relations": [{}]}})", fmt::join(many, ", "))); })
              .find("test.json: relations: 20000 relations; a file holds at most 256") != std::string::npos);
  }
  // 'full' over a type of 4096 nodes: 2^24 edges in every sentence.
  const TopologySpec dense = spec_of(R"({"nodes": {"g": 4096}, "relations": [)" + local +
                                     R"(, {"name": "gg", "src": "g", "dst": "g", "builder": "full"},
                                          {"name": "b", "src": "g", "dst": "tok", "builder": "all"}]})");
  const std::string message = error_of([&] { check_topology_lengths(dense, 64); });
  CAPTURE(message);
  CHECK(message.find("test.json: relations[1]: a sentence of 1 token would hold up to 16781313 edges (16777216 of "
                     "them 'gg', full g -> g); a sentence's graph holds at most 4194304") != std::string::npos);
  // [CLS]-like leading nodes under full attention; and full attention past 2048 tokens (only the graph path: the
  // band kernel builds no graph).
  CHECK(error_of([&] {
          check_topology_lengths(
              spec_of(R"({"nodes": {"c": {"count": 4096, "in_sequence": true}}, "relations": [{"name": "f", "src": "tok", "dst": "tok", "builder": "full"}]})"),
              64);
        }).find("relations[0]: a sentence of 1 token would hold up to 16785409 edges") != std::string::npos);
  const TopologySpec full = spec_of(R"({"relations": [{"name": "f", "src": "tok", "dst": "tok", "builder": "full"}]})");
  const std::string long_full = error_of([&] { build_topology(full, {8, 2049}); });
  CHECK(long_full.find("a sentence of 2049 tokens would hold up to 4198401 edges") != std::string::npos);
  // ... and it names the path that has no such bound; 'full' between other types has none, so no hint there.
  CHECK(long_full.find("with --attention auto, head groups of one window or full relation over the tokens") !=
        std::string::npos);
  CHECK(message.find("--attention auto") == std::string::npos);
  // Nor where the band kernel cannot take the whole file (a second destination type): auto builds its graph too.
  const TopologySpec full_and_hub = spec_of(R"({"nodes": {"h": 1}, "relations": [
      {"name": "f", "src": "tok", "dst": "tok", "builder": "full"},
      {"name": "up", "src": "tok", "dst": "h", "builder": "all"}]})");
  const std::string no_band = error_of([&] { build_topology(full_and_hub, {2049}); });
  CHECK(no_band.find("would hold up to") != std::string::npos);
  CHECK(no_band.find("--attention auto") == std::string::npos);
  // The bound counts what the builders can build, not their fields: a radius or block of 2^40 is the sentence.
  CHECK_NOTHROW(check_topology_lengths(
      spec_of(R"({"relations": [{"name": "b", "src": "tok", "dst": "tok", "builder": "block", "size": 1099511627776},
                                {"name": "g", "src": "tok", "dst": "tok", "builder": "global", "positions": [0, 1099511627776]},
                                {"name": "r", "src": "tok", "dst": "tok", "builder": "random", "per_node": 1099511627776, "seed": 1}]})"),
      64));
  CHECK_NOTHROW(build_topology(spec_of(R"({"nodes": {"c": {"count": 1, "in_sequence": true}}, "relations": [)" + local +
                                       R"(, {"name": "g", "src": "tok", "dst": "tok", "builder": "global", "positions": [0]}]})"),
                               {4096}));  // Longformer over 4096 tokens
}

TEST_CASE("the shipped topology files parse, build for every short length, and say what they claim") {
  const std::string dir = std::string(TOPO_SOURCE_DIR) + "/configs/topologies/";
  for (const char* name : {"star", "multiscale", "longformer", "bigbird", "custom_topology", "head_groups"}) {
    CAPTURE(name);
    const TopologySpec spec = read_topology_file(dir + name + ".json");
    CHECK_NOTHROW(check_topology_lengths(spec, 64));
  }
  // custom_topology's pattern is examples/custom_topology's: window 1, dilated 3 x 3, token 0 global, disjoint.
  const TopologySpec custom = read_topology_file(dir + "custom_topology.json");
  const TopologyGraph t = build_topology(custom, {20});
  const auto& in = t.blocks[0][0].in;
  const auto indptr = in.indptr.to_vector<std::int32_t>(), indices = in.indices.to_vector<std::int32_t>();
  for (std::int64_t i = 0; i < 20; ++i) {
    std::set<std::int64_t> expected;
    for (std::int64_t j = 0; j < 20; ++j) {
      const std::int64_t d = std::abs(i - j);
      if (d <= 1 || (d % 3 == 0 && d / 3 <= 3) || i == 0 || j == 0) expected.insert(j);
    }
    std::set<std::int64_t> got(indices.begin() + indptr[static_cast<std::size_t>(i)], indices.begin() + indptr[static_cast<std::size_t>(i) + 1]);
    CAPTURE(i);
    CHECK(got == expected);
    CHECK(static_cast<std::size_t>(indptr[static_cast<std::size_t>(i) + 1] - indptr[static_cast<std::size_t>(i)]) == expected.size());  // no pair twice
  }
}
