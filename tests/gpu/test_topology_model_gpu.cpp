// `--model graph` on CUDA against the CPU: the same weights on both devices, a batch of awkward lengths, the
// outputs and every parameter gradient, for a file on the graph path (head groups, a global node, random keys)
// and one on the band path (the multiscale file). Runs only with a CUDA device.
#include <doctest/doctest.h>

#include "models/topology_transformer/topology_transformer.hpp"
#include "nn/ops.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::models;

TEST_CASE("gpu: the graph model on CUDA equals the CPU one, outputs and gradients, graph and band paths") {
  for (const char* name : {"head_groups", "multiscale", "star"}) {
    CAPTURE(name);
    TopologyTransformerConfig config{
        .encoder = {}, .topology = read_topology_file(std::string(TOPO_SOURCE_DIR) + "/configs/topologies/" + name + ".json")};
    config.encoder.vocab_size = 50;
    config.encoder.hidden = 40;
    config.encoder.heads = std::string(name) == "head_groups" ? 4 : 10;
    config.encoder.layers = 2;
    config.encoder.max_length = 128;
    TopologyTransformer cpu(config), gpu(config);
    cpu.reset_parameters(5), gpu.reset_parameters(5);
    gpu.to(Device::cuda());
    SequenceBatch batch;
    batch.lengths = {1, 2, 17, 100, 33};
    batch.token_ids = topo::testing::random_ids({batch.num_tokens()}, 50, 6);
    const Encoding c = cpu.encode(batch), g = gpu.encode(batch.to(Device::cuda()));
    REQUIRE(g.tokens.device().is_cuda());
    const Tensor r1 = topo::testing::random_uniform(c.tokens.shape(), 7),
                 r2 = topo::testing::random_uniform(c.sentences.shape(), 8);
    (nn::sum_all(c.tokens * nn::Var(r1)) + nn::sum_all(c.sentences * nn::Var(r2))).backward();
    (nn::sum_all(g.tokens * nn::Var(r1.to(Device::cuda()))) + nn::sum_all(g.sentences * nn::Var(r2.to(Device::cuda())))).backward();
    TOPO_CHECK_CLOSE(g.tokens.data().to_vector<float>(), c.tokens.data().to_vector<float>(), 1e-4, 1e-3);
    TOPO_CHECK_CLOSE(g.sentences.data().to_vector<float>(), c.sentences.data().to_vector<float>(), 1e-4, 1e-3);
    const auto pc = cpu.named_parameters(), pg = gpu.named_parameters();
    REQUIRE(pc.size() == pg.size());
    for (std::size_t i = 0; i < pc.size(); ++i) {
      CAPTURE(pc[i].first);
      TOPO_CHECK_CLOSE(pg[i].second.grad().to_vector<float>(), pc[i].second.grad().to_vector<float>(), 1e-3, 1e-2);
    }
  }
}
