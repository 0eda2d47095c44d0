// `--model graph`: the shipped star and multiscale files give --model star's and --model multiscale's outputs
// and gradients bit for bit with the same weights; the band path equals the graph path; a batch encodes each
// sentence as if it were alone.
#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <numeric>
#include <random>

#include "models/multiscale_transformer/multiscale_transformer.hpp"
#include "models/star_transformer/star_transformer.hpp"
#include "models/topology_transformer/topology_transformer.hpp"
#include "tests/models/random_batch.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::models;

namespace {

std::string shipped(const std::string& name) {
  return std::string(TOPO_SOURCE_DIR) + "/configs/topologies/" + name + ".json";
}

using topo::testing::random_batch;

// Copies `from`'s parameters into `to`'s, their names mapped by `rename` (every parameter of `to` once).
void copy_parameters(const nn::Module& from, nn::Module& to, const std::function<std::string(std::string)>& rename) {
  std::map<std::string, nn::Var> target;
  for (const auto& [name, p] : to.named_parameters()) target.emplace(name, p);
  std::size_t copied = 0;
  for (const auto& [key, p] : from.named_parameters()) {
    const std::string& name = key;  // clang 14 cannot capture a structured binding in the lambda INFO makes
    const std::string mapped = rename(name);
    INFO(name << " -> " << mapped);
    REQUIRE(target.count(mapped) == 1);
    REQUIRE(target.at(mapped).shape() == p.shape());
    Tensor storage = target.at(mapped).data();  // a handle on the parameter's storage
    storage.copy_from(p.data());
    ++copied;
  }
  CHECK(copied == target.size());
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const std::size_t at = s.find(from);
  return at == std::string::npos ? s : s.replace(at, from.size(), to);
}

// The encoding and every parameter's gradient (in `model`'s order) of one weighted loss.
struct Run {
  std::vector<float> tokens, sentences;
  std::map<std::string, std::vector<float>> grads;  // by parameter name
};
Run run(nn::Module& model, const std::function<Encoding()>& encode, std::uint64_t seed) {
  model.zero_grad();
  const Encoding e = encode();
  const Tensor r1 = testing::random_uniform(e.tokens.shape(), seed), r2 = testing::random_uniform(e.sentences.shape(), seed + 1);
  (nn::sum_all(e.tokens * nn::Var(r1)) + nn::sum_all(e.sentences * nn::Var(r2))).backward();
  Run r{e.tokens.data().to_vector<float>(), e.sentences.data().to_vector<float>(), {}};
  for (const auto& [name, p] : model.named_parameters())
    r.grads[name] = p.grad().defined() ? p.grad().to_vector<float>() : std::vector<float>(static_cast<std::size_t>(p.numel()), 0.f);
  return r;
}

}  // namespace

TEST_CASE("the star file is --model star: same weights, same outputs and gradients, bit for bit") {
  struct Case {
    bool residual;
    std::int64_t vocab;
    std::vector<std::int64_t> lengths;
  };
  const Case cases[] = {{false, 0, {1, 2, 3, 7}}, {true, 13, {5, 1, 9}}, {false, 13, {4, 12}}};
  std::uint64_t seed = 1;
  for (const Case& c : cases) {
    CAPTURE(c.residual);
    CAPTURE(c.vocab);
    StarConfig star_config;
    star_config.encoder.vocab_size = c.vocab;
    star_config.encoder.input_dim = c.vocab > 0 ? 0 : 5;
    star_config.encoder.hidden = 12;
    star_config.encoder.heads = 3;
    star_config.encoder.layers = 2;
    star_config.encoder.max_length = 16;
    star_config.residual = c.residual;
    StarTransformer star(star_config);
    star.reset_parameters(seed);
    TopologyTransformerConfig graph_config{.encoder = star_config.encoder, .topology = read_topology_file(shipped("star"))};
    graph_config.residual = c.residual;
    TopologyTransformer graph(graph_config);
    CHECK_FALSE(band_runs(graph_config.topology));
    // layers.L.satellite_* are the tokens' weights, layers.L.relay_* the relay's.
    copy_parameters(star, graph, [](std::string name) { return replace(name, "satellite_", "tok_"); });
    const SequenceBatch batch = random_batch(c.lengths, 5, c.vocab, seed + 100);
    const Run a = run(star, [&] { return star.encode(batch); }, seed + 200);
    const Run b = run(graph, [&] { return graph.encode(batch); }, seed + 200);
    CHECK(a.tokens == b.tokens);
    CHECK(a.sentences == b.sentences);
    for (const auto& [key, g] : a.grads) {
      const std::string& name = key;  // clang 14 cannot capture a structured binding in the lambda CAPTURE makes
      CAPTURE(name);
      CHECK(g == b.grads.at(replace(name, "satellite_", "tok_")));
    }
    ++seed;
  }
}

TEST_CASE("the multiscale file is --model multiscale: same weights, same outputs and gradients, both paths") {
  // The file's heads per layer are the alpha rule's for its setting.
  CHECK(head_distribution(0.5, 2, 5, 10) == std::vector<std::vector<std::int64_t>>{{4, 3, 1, 1, 1}, {2, 2, 2, 2, 2}});
  for (const bool band : {false, true}) {
    CAPTURE(band);
    MultiScaleConfig ms_config;
    ms_config.encoder.vocab_size = 40;
    ms_config.encoder.hidden = 20;
    ms_config.encoder.heads = 10;
    ms_config.encoder.layers = 2;
    ms_config.encoder.max_length = 128;
    ms_config.alpha = 0.5;
    ms_config.band = band;
    MultiScaleTransformer ms(ms_config);
    ms.reset_parameters(3);
    TopologyTransformerConfig graph_config{.encoder = ms_config.encoder, .topology = read_topology_file(shipped("multiscale"))};
    graph_config.band = band;
    TopologyTransformer graph(graph_config);
    CHECK(band_runs(graph_config.topology));
    copy_parameters(ms, graph, [](std::string name) {
      if (name == "cls") return std::string("node_cls");
      return replace(replace(name, ".attention.", ".tok_attention."), ".norm.", ".tok_norm.");
    });
    const SequenceBatch batch = random_batch({1, 2, 17, 40, 100}, 0, 40, 7);
    const Run a = run(ms, [&] { return ms.encode(batch); }, 9);
    const Run b = run(graph, [&] { return graph.encode(batch); }, 9);
    CHECK(a.tokens == b.tokens);
    CHECK(a.sentences == b.sentences);
    for (const auto& [key, g] : a.grads) {
      const std::string& name = key;  // clang 14 cannot capture a structured binding in the lambda CAPTURE makes
      CAPTURE(name);
      const std::string mapped =
          name == "cls" ? "node_cls" : replace(replace(name, ".attention.", ".tok_attention."), ".norm.", ".tok_norm.");
      CHECK(g == b.grads.at(mapped));
    }
  }
}

TEST_CASE("the band path equals the graph path for window and full files") {
  const std::string full = testing::write_temp_file(
      "full_topology.json",
      R"({"nodes": {"cls": {"count": 2, "in_sequence": true}}, "relations": [
          {"name": "all", "src": "tok", "dst": "tok", "builder": "full"},
          {"name": "near", "src": "tok", "dst": "tok", "builder": "window", "radius": 2}],
        "head_groups": [{"heads": 1, "relations": ["all"]}, {"heads": 3, "relations": ["near"]}]})");
  for (const std::string& file : {shipped("multiscale"), shipped("longformer"), full}) {
    CAPTURE(file);
    TopologyTransformerConfig config{.encoder = {}, .topology = read_topology_file(file)};
    config.encoder.input_dim = 3;
    config.encoder.hidden = 20;
    config.encoder.heads = file == full ? 4 : 10;
    config.encoder.layers = 2;
    config.encoder.max_length = 64;
    TopologyTransformer model(config);
    model.reset_parameters(11);
    const SequenceBatch batch = random_batch({3, 1, 33, 8}, 3, 0, 12);
    const Run graph = run(model, [&] { return model.encode(batch, build_topology(config.topology, batch.lengths)); }, 13);
    if (!band_runs(config.topology)) {  // longformer's global relation is no band
      CHECK(file == shipped("longformer"));
      continue;
    }
    const Run band = run(model, [&] { return model.encode_band(batch); }, 13);
    TOPO_CHECK_CLOSE(band.tokens, graph.tokens, 1e-5, 1e-4);
    TOPO_CHECK_CLOSE(band.sentences, graph.sentences, 1e-5, 1e-4);
    for (const auto& [key, g] : graph.grads) {
      const std::string& name = key;  // clang 14 cannot capture a structured binding in the lambda CAPTURE makes
      CAPTURE(name);
      TOPO_CHECK_CLOSE(band.grads.at(name), g, 1e-4, 1e-3);
    }
  }
}

TEST_CASE("the graph model encodes each sentence of a batch as if it were alone") {
  // Besides the shipped files: several nodes per type (learned and mean), two lead nodes, a block, sequential.
  const std::string many = testing::write_temp_file(
      "many_nodes.json",
      R"({"nodes": {"cls": {"count": 2, "in_sequence": true}, "mem": {"count": 3, "init": "mean"}, "g": 2},
          "relations": [
            {"name": "blk", "src": "tok", "dst": "tok", "builder": "block", "size": 3},
            {"name": "e", "src": "emb", "dst": "tok", "builder": "self"},
            {"name": "from_mem", "src": "mem", "dst": "tok", "builder": "all"},
            {"name": "to_g", "src": "tok", "dst": "g", "builder": "all"},
            {"name": "g_self", "src": "g", "dst": "g", "builder": "ring"},
            {"name": "g_mem", "src": "g", "dst": "mem", "builder": "all"}],
          "schedule": "sequential"})");
  for (const std::string& name : {shipped("head_groups"), shipped("bigbird"), shipped("star"), shipped("custom_topology"), many}) {
    CAPTURE(name);
    TopologyTransformerConfig config{.encoder = {}, .topology = read_topology_file(name)};
    config.encoder.vocab_size = 30;
    config.encoder.hidden = 16;
    config.encoder.heads = 4;
    config.encoder.layers = 2;
    config.encoder.max_length = 64;
    TopologyTransformer model(config);
    model.reset_parameters(21);
    const std::vector<std::int64_t> lengths = {6, 1, 23, 2};
    const SequenceBatch batch = random_batch(lengths, 0, 30, 22);
    const Encoding together = model.encode(batch);
    const auto ids = batch.token_ids.to_vector<std::int64_t>();
    const auto tokens = together.tokens.data().to_vector<float>(), sentences = together.sentences.data().to_vector<float>();
    std::size_t first = 0;
    for (std::size_t b = 0; b < lengths.size(); ++b) {
      CAPTURE(b);
      SequenceBatch one;
      one.lengths = {lengths[b]};
      const auto n = static_cast<std::size_t>(lengths[b]);
      one.token_ids = Tensor::from_vector(std::vector<std::int64_t>(ids.begin() + static_cast<std::ptrdiff_t>(first),
                                                                    ids.begin() + static_cast<std::ptrdiff_t>(first + n)),
                                          {lengths[b]});
      const Encoding alone = model.encode(one);
      TOPO_CHECK_CLOSE(alone.tokens.data().to_vector<float>(),
                       std::vector<float>(tokens.begin() + static_cast<std::ptrdiff_t>(first * 16),
                                          tokens.begin() + static_cast<std::ptrdiff_t>((first + n) * 16)),
                       1e-5, 1e-4);
      TOPO_CHECK_CLOSE(alone.sentences.data().to_vector<float>(),
                       std::vector<float>(sentences.begin() + static_cast<std::ptrdiff_t>(b * 16),
                                          sentences.begin() + static_cast<std::ptrdiff_t>((b + 1) * 16)),
                       1e-5, 1e-4);
      first += n;
    }
  }
}

TEST_CASE("the graph model's weights: one attention and LayerNorm per destination type and layer") {
  TopologyTransformerConfig config{.encoder = {}, .topology = read_topology_file(shipped("head_groups"))};
  config.encoder.input_dim = 2;
  config.encoder.hidden = 8;
  config.encoder.heads = 4;
  config.encoder.layers = 3;
  TopologyTransformer model(config);
  std::vector<std::string> names;
  for (const auto& [name, p] : model.named_parameters()) names.push_back(name);
  for (const char* expected : {"node_global", "layers.2.tok_attention.q.weight", "layers.2.global_norm.weight",
                               "layers.0.global_attention.o.bias"})
    CHECK(std::find(names.begin(), names.end(), expected) != names.end());
  config.encoder.heads = 2;  // the file's groups hold 4
  CHECK(testing::error_of([&] { TopologyTransformer bad(config); }).find("sum to 4 (2 + 2) in layer 1; this run has --heads 2") !=
        std::string::npos);
}


TEST_CASE("a head group switched off (0 heads in every layer) changes nothing: the file without it gives the same") {
  const std::string body = R"({"nodes": {"hub": 1}, "relations": [
      {"name": "local", "src": "tok", "dst": "tok", "builder": "window", "radius": 1},
      {"name": "up", "src": "tok", "dst": "hub", "builder": "all"},
      {"name": "down", "src": "hub", "dst": "tok", "builder": "all"})";
  const std::string groups = R"("head_groups": [{"heads": [4, 4], "relations": ["local", "up", "down"]})";
  // The switched-off group reaches neither the hub nor, in a 1-token sentence, any token (dilated).
  const std::string with_off = testing::write_temp_file(
      "off_group.json", body + R"(, {"name": "far", "src": "tok", "dst": "tok", "builder": "dilated", "dilation": 2,
      "reach": 1}], )" + groups + R"(, {"heads": [0, 0], "relations": ["far"]}]})");
  const std::string without = testing::write_temp_file("no_off_group.json", body + "], " + groups + "]}");
  auto model_of = [](const std::string& file) {
    TopologyTransformerConfig config{.encoder = {}, .topology = read_topology_file(file)};
    config.encoder.vocab_size = 30, config.encoder.hidden = 16, config.encoder.heads = 4, config.encoder.layers = 2;
    config.encoder.max_length = 64;
    return std::make_unique<TopologyTransformer>(config);
  };
  const auto off = model_of(with_off), plain = model_of(without);
  off->reset_parameters(5);
  copy_parameters(*off, *plain, [](std::string name) { return name; });
  const SequenceBatch batch = random_batch({7, 1, 12}, 0, 30, 6);
  const Run a = run(*off, [&] { return off->encode(batch); }, 8), b = run(*plain, [&] { return plain->encode(batch); }, 8);
  CHECK(a.tokens == b.tokens);
  CHECK(a.sentences == b.sentences);
  CHECK(a.grads == b.grads);
}
