// No surprises at the limit (issue #36 item 4): a node-classify run whose graph or training step would not fit
// stops before allocating, naming what it needs, what there is and the flag that lowers it; the allocator's peak
// counter; the memory readers and the size parser; the models' step estimates against the measured peak.
#include <doctest/doctest.h>

#include <sys/resource.h>

#include <algorithm>

#include "apps/graphs/generate.hpp"
#include "apps/tasks/node_classify/node_classify.hpp"
#include "apps/train/config.hpp"
#include "apps/train/model_factory.hpp"
#include "apps/train/trainer.hpp"
#include "kernels/memory.hpp"
#include "kernels/storage.hpp"
#include "models/registry.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::apps;
using topo::testing::error_of;

namespace {

TrainConfig run_config(const std::string& model, const std::string& data, const std::string& out) {
  TrainConfig c;
  c.set("task", "node-classify").set("model", model);
  apply_config_json(c, models::model_recipe(model, "node-classify"), "recipe");
  c.set("data", data).set("epochs", 2);
  c.progress = "none";
  c.out = out;
  return c;
}

}  // namespace

TEST_CASE("memory: sizes parse and print; the process's RSS and the machine's headroom are read") {
  CHECK(parse_byte_size("512M", "memory_limit") == std::int64_t{512} << 20);
  CHECK(parse_byte_size("8G", "memory_limit") == std::int64_t{8} << 30);
  CHECK(parse_byte_size("1.5GiB", "memory_limit") == std::int64_t{3} << 29);
  CHECK(parse_byte_size("1000", "memory_limit") == 1000);
  for (const std::string bad : {"", "-1G", "8Q", "G", "0"})
    CHECK(error_of([&] { (void)parse_byte_size(bad, "memory_limit"); }).find("invalid config field 'memory_limit'") !=
          std::string::npos);
  CHECK(format_bytes(3.0 * (1 << 29)) == "1.5 GiB");
  // The high-water mark read after the resident size: RSS may grow between two reads, the mark never falls.
  const std::int64_t resident = rss_bytes();
  CHECK(resident > 0);
  CHECK(peak_rss_bytes() >= resident);
  const AvailableMemory machine = available_memory();
  CHECK(machine.bytes > 0);
  // The cap is the limit less the RSS read inside the call, which may differ from the reads around it (under
  // ASan its allocator returns memory to the system from a thread of its own: 19 MB once): bound it by the
  // lower of the two.
  const std::int64_t rss_before = rss_bytes(), limit = rss_before + (std::int64_t{64} << 20);
  const AvailableMemory capped = available_memory(limit);
  const std::int64_t rss_after = rss_bytes();
  CHECK(capped.bytes <= limit - std::min(rss_before, rss_after));
  CHECK(capped.bytes < machine.bytes);
  CHECK(capped.source.find("--memory-limit") != std::string::npos);
  // ulimit -v: the headroom is the limit less what is mapped (a scheduler's or a shell's cap, not a cgroup's).
  rlimit saved{};
  REQUIRE(getrlimit(RLIMIT_AS, &saved) == 0);
  const std::int64_t mapped = mapped_bytes();
  REQUIRE(mapped > 0);
  rlimit tight = saved;
  tight.rlim_cur = static_cast<rlim_t>(mapped + (std::int64_t{64} << 20));
  if (saved.rlim_cur == RLIM_INFINITY || tight.rlim_cur < saved.rlim_cur) {
    REQUIRE(setrlimit(RLIMIT_AS, &tight) == 0);
    const AvailableMemory as_capped = available_memory();
    REQUIRE(setrlimit(RLIMIT_AS, &saved) == 0);
    CHECK(as_capped.bytes <= std::int64_t{64} << 20);
    CHECK(as_capped.source.find("address-space limit (ulimit -v)") != std::string::npos);
  }
}

TEST_CASE("memory: the allocator counts its live bytes and their peak") {
  host_memory::reset_peak();
  const auto before = host_memory::stats();
  CHECK(before.peak_bytes_in_use == before.bytes_in_use);
  {
    const Tensor big = Tensor::zeros({16 << 20});  // 64 MiB
    CHECK(host_memory::stats().bytes_in_use >= before.bytes_in_use + (std::size_t{64} << 20));
  }
  const auto after = host_memory::stats();
  CHECK(after.bytes_in_use == before.bytes_in_use);  // freed (parked in the cache, not in use)
  CHECK(after.peak_bytes_in_use >= before.bytes_in_use + (std::size_t{64} << 20));
  host_memory::reset_peak();
  CHECK(host_memory::stats().peak_bytes_in_use == after.bytes_in_use);
}

TEST_CASE("memory: a graph too big for the budget stops before it is generated, naming sizes and flags") {
  const auto dir = topo::testing::fresh_temp_dir("memory_graph");
  TrainConfig c = run_config("gcn", "csbm:nodes=1000000,degree=20,features=128", dir.string());
  c.set("memory_limit", "256M");
  const std::int64_t rss_before = rss_bytes();
  const std::string error = error_of([&] { Trainer(c).run(); });
  INFO(error);
  CHECK(error.find("node-classify: not enough memory: generating csbm (1000000 nodes, ~20000000 edges, 128 features)") !=
        std::string::npos);
  // 0.4 GiB of draws and edges, 0.5 of features, 0.5 of graph structures.
  CHECK(error.find("and its graph needs about 1.4 GiB") != std::string::npos);
  CHECK(error.find("is available (--memory-limit 256.0 MiB") != std::string::npos);
  CHECK(error.find("nodes=, a lower degree= or fewer features= in --data") != std::string::npos);
  CHECK(rss_bytes() < rss_before + (std::int64_t{64} << 20));  // nothing was allocated
  // Bad limits are named.
  c.set("memory_limit", "lots");
  CHECK(error_of([&] { c.validate(); }).find("invalid config field 'memory_limit' = 'lots'") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("memory: a training step too big stops before the first step, naming the model's flags") {
  // The graph (20,000 nodes, ~1M edges) fits in 400 MiB; GAT's 128 heads of 8 want ~8 node tensors of
  // 20,000 x 1,024 floats (80 MiB each) in the first layer alone.
  const auto dir = topo::testing::fresh_temp_dir("memory_step");
  TrainConfig c = run_config("gat", "csbm:nodes=20000,degree=50,classes=4,features=16", dir.string());
  c.set("heads", 128);
  const std::int64_t budget = rss_bytes() + (std::int64_t{400} << 20);
  c.set("memory_limit", std::to_string(budget));
  const std::string error = error_of([&] { Trainer(c).run(); });
  INFO(error);
  CHECK(error.find("node-classify: not enough memory: a full-graph training step (gat: 2 layers of 128 heads") !=
        std::string::npos);
  CHECK(error.find("Lower it with --heads, --hidden, --layers, or a smaller graph") != std::string::npos);
  // With 2 heads the same budget trains.
  c.set("heads", 2);
  const TrainResult r = Trainer(c).run();
  CHECK(r.completed);
  std::filesystem::remove_all(dir);
}

TEST_CASE("memory: each graph model's step estimate is within 2x of the allocator's measured step peak") {
  const std::string data = "csbm:nodes=20000,degree=20,classes=4,features=64";
  for (const std::string model : {"gcn", "gat", "sage"}) {
    CAPTURE(model);
    const auto dir = topo::testing::fresh_temp_dir("memory_estimate_" + model);
    TrainConfig c = run_config(model, data, dir.string());
    c.validate();
    const std::unique_ptr<Task> task = make_task(c);
    const auto net = make_task_model(c, *task, nullptr);
    const TaskBatch batch = task->batch(Split::Train, {0});
    const models::StepMemoryEstimate estimate = net->encoder()->step_memory(batch.inputs);
    // One training step's forward and backward, measured from the bytes live before it.
    host_memory::reset_peak();
    const std::size_t live = host_memory::stats().bytes_in_use;
    net->train();
    nn::Var loss = task->loss(net->forward(batch.inputs), batch.targets);
    loss.backward();
    const double measured = double(host_memory::stats().peak_bytes_in_use - live);
    INFO("estimate " << estimate.bytes << ", measured " << measured);
    CHECK(double(estimate.bytes) >= 0.8 * measured);
    CHECK(double(estimate.bytes) <= 2.0 * measured);
    std::filesystem::remove_all(dir);
  }
}
