// topo-eval's reading of a checkpoint's task metadata (vocabulary, labels, read options) on arbitrary JSON,
// then encoding a fixed test file with it. Missing keys, wrong types and inconsistent values must be
// topo::Errors naming the source. TOPO_FUZZ_WRITE_SEED=FILE writes a real task's metadata and exits.
#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "apps/tasks/classify/classify.hpp"
#include "fuzz/fuzz_support.hpp"
#include "kernels/error.hpp"

namespace {

const char* const kTestFile = "1\tgood day\n0\tbad day\n1\tan unseen word\n";

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* seed = std::getenv("TOPO_FUZZ_WRITE_SEED")) {
    topo::apps::ClassifyOptions o;
    o.format = "mtl";
    o.train = topo::fuzz::memory_file("1\tgood fine day\n0\tbad awful day\n1\tgood\n0\tbad\n", 2);
    o.dev_split = 1;
    o.read.max_length = 16;
    const topo::apps::TextClassification task(o);
    std::ofstream(seed) << task.metadata().dump();
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace topo;
  const nlohmann::json metadata = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (metadata.is_discarded()) return 0;  // JSON syntax is the config target's business
  apps::ClassifyOptions o;
  o.format = "mtl";
  o.test = fuzz::memory_file(kTestFile, 1);
  try {
    const auto task = apps::TextClassification::for_evaluation(metadata, o, "fuzzed metadata");
    if (task->size(apps::Split::Test) != 3) std::abort();
    for (std::int64_t i = 0; i < 3; ++i) (void)task->batch(apps::Split::Test, {i});
    (void)task->baseline(apps::Split::Test);
  } catch (const Error&) {
  }
  return 0;
}
