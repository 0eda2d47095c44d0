#include "models/transformer/transformer.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::models;

TEST_CASE("Transformer: the full-graph, fused dense and padded paths agree, outputs and every parameter gradient") {
  for (std::int64_t vocab : {0, 11}) {
    CAPTURE(vocab);
    TransformerConfig cfg;
    cfg.encoder.vocab_size = vocab;
    cfg.encoder.input_dim = vocab > 0 ? 0 : 4;
    cfg.encoder.hidden = 12;
    cfg.encoder.heads = 3;
    cfg.encoder.layers = 2;
    cfg.ffn = 10;
    cfg.encoder.max_length = 12;
    Transformer model(cfg);
    model.reset_parameters(7 + vocab);
    SequenceBatch batch;
    batch.lengths = {5, 1, 9, 3};
    const std::int64_t total = batch.num_tokens();
    if (vocab > 0)
      batch.token_ids = testing::random_ids({total}, vocab, 3);
    else
      batch.features = testing::random_uniform({total, 4}, 3);
    const Tensor r1 = testing::random_uniform({total, 12}, 4), r2 = testing::random_uniform({4, 12}, 5);
    auto loss = [&](const Encoding& e) {
      return nn::sum_all(e.tokens * nn::Var(r1)) + nn::sum_all(e.sentences * nn::Var(r2));
    };
    const Encoding graph = model.encode(batch);
    model.zero_grad();
    loss(graph).backward();
    std::vector<std::vector<float>> g1;
    for (const nn::Var& p : model.parameters()) g1.push_back(p.grad().to_vector<float>());
    for (bool padded : {false, true}) {
      CAPTURE(padded);
      const Encoding dense = padded ? model.encode_padded(batch) : model.encode_dense(batch);
      TOPO_CHECK_CLOSE(graph.tokens.data().to_vector<float>(), dense.tokens.data().to_vector<float>(), 2e-5, 1e-4);
      TOPO_CHECK_CLOSE(graph.sentences.data().to_vector<float>(), dense.sentences.data().to_vector<float>(), 2e-5,
                       1e-4);
      model.zero_grad();
      loss(dense).backward();
      const auto names = model.named_parameters();
      for (std::size_t i = 0; i < names.size(); ++i) {
        CAPTURE(names[i].first);
        TOPO_CHECK_CLOSE(names[i].second.grad().to_vector<float>(), g1[i], 1e-4, 1e-3);
      }
    }
  }
}
