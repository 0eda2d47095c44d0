// DeepSets as `--model deepsets`: an order-blind baseline over feature inputs (masked summation).
#include "models/baselines/deepsets.hpp"
#include "models/registry.hpp"

namespace topo::models {

ModelRegistration deepsets_registration() {
  ModelRegistration m;
  m.name = "deepsets";
  m.summary = "DeepSets (Zaheer et al. 2017): per-position MLP and pooling, order-blind, feature inputs only";
  m.reads_token_ids = false;
  m.heads_divide_hidden = false;
  m.options = {{"pooling", "sum", "DeepSets pooling: sum | mean | max", {"sum", "mean", "max"}}};
  m.make = [](const EncoderSpec& spec) {
    TOPO_CHECK(spec.case_classes == 0 && spec.word_dropout == 0.f,
               "DeepSets reads features only: it takes no per-token case feature or word dropout");
    DeepSetsOptions options;
    options.in_dim = spec.input_dim;
    options.hidden = spec.hidden;
    options.layers = spec.layers;
    options.pooling = nn::parse_readout(spec.option<std::string>("pooling"));
    options.dropout = spec.dropout;
    return std::make_shared<DeepSetsEncoder>(options, spec.generator);
  };
  // No recipe yet: it runs with topo-train's defaults.
  return m;
}

}  // namespace topo::models
