// The model registry: every model is found by name with its options, builds from a spec through its
// factory, and the registration's bookkeeping (unknown names, option lookups, recipes) is checked.
#include "models/multiscale_transformer/multiscale_transformer.hpp"
#include "models/registry.hpp"
#include "models/star_transformer/star_transformer.hpp"
#include "models/transformer/transformer.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::models;

TEST_CASE("registry: every model, each building an encoder of its inputs from a spec") {
  CHECK(registered_model_names() == "deepsets, star, transformer, multiscale, big, graph, gcn, gat, sage");
  for (const ModelRegistration& m : registered_models()) {
    CAPTURE(m.name);
    CHECK(&find_model(m.name) == &m);
    for (const bool token_ids : {false, true}) {
      if (!(token_ids ? m.reads_token_ids : m.reads_features)) continue;
      CAPTURE(token_ids);
      EncoderSpec spec;
      spec.hidden = 8;
      spec.heads = 2;
      spec.layers = 1;
      spec.max_length = 9;
      (token_ids ? spec.vocab_size : spec.input_dim) = token_ids ? 13 : 4;
      for (const ModelOption& o : m.options) spec.options[o.name] = o.default_value;
      if (token_ids)  // what a text task gives: every id's string (BiG matches its lexicon on them)
        for (std::int64_t id = 0; id < 13; ++id) spec.vocabulary.push_back(std::string(1, static_cast<char>('a' + id)));
      if (m.name == "big") spec.options["lexicon"] = testing::write_temp_file("registry_words.txt", "abc 1 n\nde 2 n\n");
      if (m.name == "graph") spec.options["topology"] = std::string(TOPO_SOURCE_DIR) + "/configs/topologies/star.json";
      const std::shared_ptr<SequenceEncoder> encoder = m.make(spec);
      encoder->reset_parameters(3);
      SequenceBatch batch;
      batch.lengths = {4, 1, 9};
      if (token_ids)
        batch.token_ids = testing::random_ids({14}, 13, 5);
      else
        batch.features = testing::random_uniform({14, 4}, 5);
      const Encoding e = encoder->encode(batch);
      CHECK(e.tokens.data().shape() == std::vector<std::int64_t>{14, 8});
      CHECK(e.sentences.data().shape() == std::vector<std::int64_t>{3, 8});
      CHECK(encoder->hidden_size() == 8);
    }
  }
}

TEST_CASE("registry: model options reach the factory; unknown names and missing options are errors naming them") {
  EncoderSpec spec;
  spec.hidden = 8;
  spec.heads = 2;
  spec.input_dim = 3;
  spec.options = {{"variant", "no-ring"}, {"residual", true}};
  const auto star = std::dynamic_pointer_cast<StarTransformer>(find_model("star").make(spec));
  REQUIRE(star != nullptr);
  CHECK(star->config().variant == StarVariant::NoRing);
  CHECK(star->config().residual);
  spec.options = {{"attention", "dense"}};
  const auto transformer = std::dynamic_pointer_cast<Transformer>(find_model("transformer").make(spec));
  REQUIRE(transformer != nullptr);
  CHECK(transformer->config().dense);
  CHECK(!transformer->config().padded);
  spec.options = {{"attention", "padded"}};
  const auto padded = std::dynamic_pointer_cast<Transformer>(find_model("transformer").make(spec));
  REQUIRE(padded != nullptr);
  CHECK((padded->config().dense && padded->config().padded));

  const std::string unknown = testing::error_of([] { find_model("lstm"); });
  CHECK(unknown.find("'lstm'") != std::string::npos);
  CHECK(unknown.find("deepsets, star, transformer, multiscale, big, graph, gcn, gat") != std::string::npos);
  spec.options = nlohmann::json::object();
  CHECK(testing::error_of([&] { find_model("star").make(spec); }).find("'variant'") != std::string::npos);
  spec.options = {{"variant", 3}, {"residual", false}};
  CHECK(testing::error_of([&] { find_model("star").make(spec); }).find("'variant'") != std::string::npos);

  CHECK(models_declaring("attention") == "transformer, multiscale, graph");
  CHECK(models_declaring("residual") == "star, graph");
  spec.options = {{"scales", "1,N/4"}, {"alpha", 0.0}, {"attention", "band"}, {"sentence_summary", "cls"}};
  spec.heads = 4;
  const auto ms = std::dynamic_pointer_cast<MultiScaleTransformer>(find_model("multiscale").make(spec));
  REQUIRE(ms != nullptr);
  CHECK(scales_str(ms->config().scales) == "1,N/4");
  CHECK(ms->head_counts() == std::vector<std::vector<std::int64_t>>{{2, 2}, {2, 2}});
  CHECK(ms->config().band);
  CHECK(ms->config().summary == SentenceSummary::Cls);
  spec.options["sentence_summary"] = "mean";
  CHECK(std::dynamic_pointer_cast<MultiScaleTransformer>(find_model("multiscale").make(spec))->config().summary ==
        SentenceSummary::Mean);
  spec.options["sentence_summary"] = "cls";
  spec.options["attention"] = "graph";
  CHECK_FALSE(std::dynamic_pointer_cast<MultiScaleTransformer>(find_model("multiscale").make(spec))->config().band);
  // One key, two defaults: each model declares its own (Multi-Scale's is its config's band path), and no
  // recipe has to repeat it.
  const auto default_of = [](const std::string& model, const std::string& option) {
    for (const ModelOption& o : find_model(model).options)
      if (o.name == option) return o.default_value;
    return nlohmann::json();
  };
  CHECK(default_of("multiscale", "attention") == "band");
  CHECK(default_of("transformer", "attention") == "graph");
  for (const char* task : {"classify", "tag", "mirrored-sum"}) CHECK_FALSE(model_recipe("multiscale", task).contains("attention"));
  spec.heads = 2;
  CHECK(model_recipe("star", "classify").at("dropout") == 0.3);
  CHECK(model_recipe("star", "no-such-task").empty());
  CHECK(model_recipe("deepsets", "masked-sum").empty());
  CHECK(model_recipe("lstm", "classify").empty());
}
