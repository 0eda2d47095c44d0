// Two threads of one process calling the library at once, as Python users will (the ops release the GIL): each
// ends bit for bit as the same work run sequentially on the test's own thread. What makes it so (docs/api.md,
// "Threads"): grad mode, the default generator and the profiler's scope state are per thread, the thread count is
// per process, a graph's lazily built formats are built once under std::call_once. scripts/sanitize.sh thread
// runs these under ThreadSanitizer.
#include <barrier>
#include <exception>
#include <functional>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "graph/heterograph.hpp"
#include "kernels/profile.hpp"
#include "models/star_transformer/star_transformer.hpp"
#include "nn/graph_layers.hpp"
#include "nn/optim.hpp"
#include "tests/support/testing.hpp"

using namespace topo;

namespace {

// What a training leaves behind, compared bit for bit.
struct TrainingTrace {
  std::vector<float> losses;                   // one per step
  std::vector<std::vector<float>> evaluations;  // a forward under NoGradGuard after each step
  std::vector<std::vector<float>> parameters;   // after the last step
  bool operator==(const TrainingTrace&) const = default;
};

std::vector<std::vector<float>> parameter_values(const nn::Module& model) {
  std::vector<std::vector<float>> values;
  for (const nn::Var& p : model.parameters()) values.push_back(p.data().to_vector<float>());
  return values;
}

// A job calls `next_step` before each of its steps (the same number in every job). Run concurrently, that is a
// barrier of all jobs: the steps interleave even on a loaded machine, where a job this short could otherwise
// finish within one time slice before the other starts.
using Job = std::function<TrainingTrace(const std::function<void()>& next_step)>;

// Each job on a thread of its own; the results in job order. A job that throws leaves the barrier, so the others
// finish, and its exception is rethrown here (uncaught in its thread, it would end the process).
std::vector<TrainingTrace> run_concurrently(const std::vector<Job>& jobs) {
  std::vector<TrainingTrace> results(jobs.size());
  std::vector<std::exception_ptr> errors(jobs.size());
  std::barrier step_barrier(static_cast<std::ptrdiff_t>(jobs.size()));
  const std::function<void()> next_step = [&step_barrier] { step_barrier.arrive_and_wait(); };
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < jobs.size(); ++i)
    threads.emplace_back([&jobs, &results, &errors, &step_barrier, &next_step, i] {
      try {
        results[i] = jobs[i](next_step);
      } catch (...) {
        errors[i] = std::current_exception();
        step_barrier.arrive_and_drop();
      }
    });
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return results;
}

std::vector<TrainingTrace> run_sequentially(const std::vector<Job>& jobs) {
  std::vector<TrainingTrace> results;
  for (const Job& job : jobs) results.push_back(job([] {}));
  return results;
}

models::StarConfig small_star_config() {
  models::StarConfig config;
  config.encoder.vocab_size = 50;
  config.encoder.hidden = 16;
  config.encoder.heads = 2;
  config.encoder.layers = 2;
  config.encoder.max_length = 24;
  config.encoder.dropout = 0.3f;
  return config;
}

const std::vector<std::int64_t> kConcurrentLengths = {7, 3, 12, 5};
constexpr std::int64_t kTokens = 27;  // the sum of kConcurrentLengths

models::SequenceBatch random_sentences(std::uint64_t seed) {
  models::SequenceBatch batch;
  batch.lengths = kConcurrentLengths;
  batch.token_ids = testing::random_ids({kTokens}, small_star_config().encoder.vocab_size, seed);
  return batch;
}

// A few Adam steps of a Star-Transformer with embedding dropout drawn from the default generator, which this
// thread seeds (nn::set_seed) as a single-threaded program would; after each step an evaluation under
// NoGradGuard, which must not switch off the other thread's taping.
TrainingTrace train_star(std::uint64_t seed, const std::function<void()>& next_step) {
  nn::set_seed(seed);
  const models::StarConfig config = small_star_config();
  models::StarTransformer model(config);
  model.reset_parameters(seed);
  nn::Adam optimizer(model.parameters(), nn::AdamOptions{.lr = 1e-2f});
  const models::SequenceBatch eval_batch = random_sentences(seed + 1);
  TrainingTrace trace;
  for (std::uint64_t step = 0; step < 4; ++step) {
    next_step();
    const models::SequenceBatch batch = random_sentences(seed * 100 + step);
    const Tensor token_weights = testing::random_uniform({kTokens, config.encoder.hidden}, seed * 100 + 50 + step);
    const Tensor sentence_weights = testing::random_uniform({4, config.encoder.hidden}, seed * 100 + 90 + step);
    model.train();
    const models::Encoding encoding = model.encode(batch);
    nn::Var loss = nn::sum_all(encoding.tokens * nn::Var(token_weights)) +
                   nn::sum_all(encoding.sentences * nn::Var(sentence_weights));
    loss.backward();
    optimizer.step();
    optimizer.zero_grad();
    trace.losses.push_back(loss.data().to_vector<float>()[0]);
    nn::NoGradGuard no_grad;
    model.eval();
    trace.evaluations.push_back(model.encode(eval_batch).sentences.data().to_vector<float>());
  }
  trace.parameters = parameter_values(model);
  return trace;
}

// An irregular graph of 1500 nodes, every node with a self loop, over 2^16 edges so that building its CSR / CSC
// is itself an OpenMP region (kernels/sparse/format.cpp); built fresh by each call, formats not yet built.
HeteroGraph irregular_graph() {
  constexpr std::int64_t kNodes = 1500, kEdges = (1 << 16) + 4000;
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::int64_t> node(0, kNodes - 1);
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
  for (std::int64_t v = 0; v < kNodes; ++v) pairs.emplace_back(v, v);
  while (static_cast<std::int64_t>(pairs.size()) < kEdges) pairs.emplace_back(node(rng), node(rng));
  return HeteroGraph::from_edges(EdgeList::from_pairs(pairs), kNodes);
}

// A GCN layer then a GAT layer (feature and attention dropout from this job's own generator) trained for a few
// steps on node classification over `graph`, which other threads use at the same time.
TrainingTrace train_gcn_gat(const HeteroGraph& graph, std::uint64_t seed, const std::function<void()>& next_step) {
  constexpr std::int64_t kFeatures = 64, kHidden = 32, kClasses = 4, kHeads = 2;  // the GCN's GEMM above the single-thread size
  const std::int64_t nodes = graph.num_nodes(0);
  nn::Generator generator(seed);
  nn::GraphConv gcn(kFeatures, kHidden, {.activation = nn::Activation::Relu});
  nn::GATConv gat(kHidden, kClasses, kHeads, {.feat_drop = 0.2f, .attn_drop = 0.2f}, &generator);
  gcn.reset_parameters(seed);
  gat.reset_parameters(seed + 1);
  std::vector<nn::Var> parameters = gcn.parameters();
  for (const nn::Var& p : gat.parameters()) parameters.push_back(p);
  nn::Adam optimizer(parameters, nn::AdamOptions{.lr = 1e-2f});
  const nn::Var features(testing::random_uniform({nodes, kFeatures}, seed + 2));
  const Tensor labels = testing::random_ids({nodes}, kClasses, seed + 3);
  const auto logits = [&] {
    const nn::Var hidden = gcn.forward(graph, "_E", features);
    return nn::mean(gat.forward(graph, "_E", hidden, hidden), 1);  // [N, H, C] -> [N, C]
  };
  TrainingTrace trace;
  for (int step = 0; step < 3; ++step) {
    next_step();
    gat.train();
    nn::Var loss = nn::cross_entropy(logits(), labels);
    loss.backward();
    optimizer.step();
    optimizer.zero_grad();
    trace.losses.push_back(loss.data().to_vector<float>()[0]);
    nn::NoGradGuard no_grad;
    gat.eval();
    trace.evaluations.push_back(logits().data().to_vector<float>());
  }
  trace.parameters = parameter_values(gcn);
  for (auto& values : parameter_values(gat)) trace.parameters.push_back(std::move(values));
  return trace;
}

std::int64_t profiled_calls(const profile::Table& table) {
  std::int64_t calls = 0;
  for (const auto& phase : table)
    for (const profile::Entry& entry : phase) calls += entry.calls;
  return calls;
}

}  // namespace

TEST_CASE("two threads training Star-Transformers at once end bit for bit as the same trainings run one after "
          "the other, and the profiler counts both") {
  const std::vector<Job> jobs = {[](const auto& next_step) { return train_star(11, next_step); },
                                 [](const auto& next_step) { return train_star(12, next_step); }};
  profile::reset();
  profile::enable();
  const std::vector<TrainingTrace> sequential = run_sequentially(jobs);
  const std::int64_t sequential_calls = profiled_calls(profile::snapshot());
  profile::reset();
  const std::vector<TrainingTrace> concurrent = run_concurrently(jobs);
  const std::int64_t concurrent_calls = profiled_calls(profile::snapshot());
  profile::enable(false);
  profile::reset();
  REQUIRE(sequential.size() == 2);
  REQUIRE(concurrent.size() == 2);
  CHECK(sequential[0] != sequential[1]);  // two different trainings, or the comparison proves little
  CHECK(concurrent[0] == sequential[0]);
  CHECK(concurrent[1] == sequential[1]);
  CHECK(sequential_calls > 0);
  CHECK(concurrent_calls == sequential_calls);  // each thread's outermost scopes, none lost or nested across
}

TEST_CASE("two threads training graph layers over one shared graph (formats built on first use by either) end "
          "bit for bit as sequential runs") {
  const auto jobs_on = [](const HeteroGraph& graph) {
    return std::vector<Job>{[&graph](const auto& next_step) { return train_gcn_gat(graph, 21, next_step); },
                            [&graph](const auto& next_step) { return train_gcn_gat(graph, 22, next_step); }};
  };
  const HeteroGraph graph_for_sequential = irregular_graph();
  const std::vector<TrainingTrace> sequential = run_sequentially(jobs_on(graph_for_sequential));
  const HeteroGraph shared_graph = irregular_graph();  // fresh: no format built yet
  const std::vector<TrainingTrace> concurrent = run_concurrently(jobs_on(shared_graph));
  CHECK(sequential[0] != sequential[1]);
  CHECK(concurrent[0] == sequential[0]);
  CHECK(concurrent[1] == sequential[1]);
}

TEST_CASE("one Star-Transformer evaluated by two threads at once under NoGradGuard gives each its sequential "
          "output") {
  models::StarTransformer model(small_star_config());
  model.reset_parameters(5);
  model.eval();
  const auto evaluate = [&model](std::uint64_t seed, const std::function<void()>& next_step) {
    nn::NoGradGuard no_grad;
    TrainingTrace trace;
    for (std::uint64_t batch = 0; batch < 3; ++batch) {
      next_step();
      trace.evaluations.push_back(model.encode(random_sentences(seed + batch)).tokens.data().to_vector<float>());
    }
    return trace;
  };
  const std::vector<Job> jobs = {[&evaluate](const auto& next_step) { return evaluate(31, next_step); },
                                 [&evaluate](const auto& next_step) { return evaluate(41, next_step); }};
  const std::vector<TrainingTrace> sequential = run_sequentially(jobs);
  const std::vector<TrainingTrace> concurrent = run_concurrently(jobs);
  CHECK(sequential[0] != sequential[1]);
  CHECK(concurrent[0] == sequential[0]);
  CHECK(concurrent[1] == sequential[1]);
}
