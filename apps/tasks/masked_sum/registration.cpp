// `--task masked-sum`: the Star-Transformer paper's masked-summation probe, its options and their checks.
#include "apps/tasks/masked_sum/masked_sum.hpp"
#include "apps/tasks/registry.hpp"

namespace topo::apps {

namespace {

MaskedSumSpec spec_of(const TaskSettings& s) {
  return {s.option<std::int64_t>("n"), s.option<std::int64_t>("n_min"), s.option<std::int64_t>("k"),
          s.option<std::int64_t>("d"), s.seed};
}

}  // namespace

TaskRegistration masked_sum_registration() {
  TaskRegistration t;
  t.name = "masked-sum";
  t.summary = "masked summation (Guo et al. 2019): regress the sum of the k masked positions' values; MSE";
  t.input = TaskInput::Features;
  t.options = {{"n", 200, "sequence length (the longest when n_min > 0)", {}},
               {"n_min", 0, "shortest length; 0: every sequence has length n", {}},
               {"k", 10, "masked positions per sequence", {}},
               {"d", 10, "features per position: 1 mask + d-1 values", {}}};
  for (const models::Option& o : generated_task_options()) t.options.push_back(o);
  t.validate = [](const TaskSettings& s) {
    const MaskedSumSpec spec = spec_of(s);
    if (spec.n < 1) models::fail_invalid_field("n", spec.n, "must be >= 1");
    if (spec.n_min < 0 || spec.n_min > spec.n)
      models::fail_invalid_field("n_min", spec.n_min, fmt::format("must be in [0, n = {}]", spec.n));
    if (spec.d < 2) models::fail_invalid_field("d", spec.d, "must be >= 2 (one mask feature plus values)");
    const std::int64_t shortest = spec.n_min > 0 ? spec.n_min : spec.n;
    if (spec.k < 1) models::fail_invalid_field("k", spec.k, "must be >= 1");
    if (spec.k > shortest)
      models::fail_invalid_field("k", spec.k, fmt::format("must be <= the shortest sequence length {}", shortest));
    validate_generated_task(s, spec.n);
  };
  t.make = [](const TaskSettings& s) -> std::unique_ptr<Task> {
    return std::make_unique<MaskedSumRegression>(spec_of(s), generated_sizes(s), generated_eval_batch(s),
                                                 s.option<std::int64_t>("max_len"));
  };
  return t;
}

}  // namespace topo::apps
