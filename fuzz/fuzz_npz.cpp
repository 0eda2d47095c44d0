// A graph as a NumPy archive (topo-train --task node-classify --data FILE.npz) on arbitrary bytes: the zip and
// .npy reader, then the node dataset and its task (splits, features). Truncated or corrupt archives, bad dtypes,
// shapes and ids must be topo::Errors naming the file and member.
#include "apps/tasks/node_classify/node_classify.hpp"
#include "fuzz/fuzz_support.hpp"
#include "kernels/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace topo;
  try {
    const std::string path = fuzz::memory_file(fuzz::as_text(data, size));
    // Dense features up to 16 MiB (a declared shape beyond is the reader's error, as 1 GiB is topo-train's).
    apps::NodeDataset d = apps::read_npz_node_dataset(path, std::int64_t{1} << 24);
    if (!d.features.defined() && d.num_nodes > 2048) return 0;  // one-hot ids: N x N
    apps::NodeClassification task(std::move(d), path, {});
    (void)task.batch(apps::Split::Train, {0});
  } catch (const Error&) {
  }
  return 0;
}
