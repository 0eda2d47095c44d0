// `--task mirrored-sum`: the Multi-Scale Transformer paper's mirrored-summation probe, its options and checks.
#include "apps/tasks/mirrored_sum/mirrored_sum.hpp"
#include "apps/tasks/registry.hpp"

namespace topo::apps {

namespace {

MirroredSumSpec spec_of(const TaskSettings& s) {
  return {s.option<std::int64_t>("n"), s.option<std::int64_t>("d"), s.option<std::int64_t>("k"), s.seed};
}

}  // namespace

TaskRegistration mirrored_sum_registration() {
  TaskRegistration t;
  t.name = "mirrored-sum";
  t.summary = "mirrored summation (Guo et al. 2020): regress the sum of K mirrored position pairs; MSE";
  t.input = TaskInput::Features;
  t.options = {{"n", 200, "sequence length N", {}},
               {"k", 10, "mirrored pairs summed (K, 1 <= K <= N)", {}},
               {"d", 10, "features per position", {}}};
  for (const models::Option& o : generated_task_options()) t.options.push_back(o);
  t.validate = [](const TaskSettings& s) {
    const MirroredSumSpec spec = spec_of(s);
    if (spec.n < 1) models::fail_invalid_field("n", spec.n, "must be >= 1");
    if (spec.d < 1) models::fail_invalid_field("d", spec.d, "must be >= 1");
    if (spec.k < 1 || spec.k > spec.n) models::fail_invalid_field("k", spec.k, fmt::format("must be in [1, n = {}]", spec.n));
    validate_generated_task(s, spec.n);
  };
  t.make = [](const TaskSettings& s) -> std::unique_ptr<Task> {
    return std::make_unique<MirroredSumRegression>(spec_of(s), generated_sizes(s), generated_eval_batch(s),
                                                   s.option<std::int64_t>("max_len"));
  };
  return t;
}

}  // namespace topo::apps
