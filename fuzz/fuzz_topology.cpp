// A topology file (topo-train --model graph --topology) on arbitrary bytes: parsed, its heads checked against a
// run's, and its graph built for a batch of short sentences. Malformed JSON, unknown or mistyped fields, bad
// values and empty softmaxes must be topo::Errors naming the file; a file that builds must give every
// destination of every head group an in-edge (build_topology's own check), so a built block with an empty
// row is a finding.
#include <cstdlib>

#include "fuzz/fuzz_support.hpp"
#include "kernels/error.hpp"
#include "models/topology_transformer/topology_graph.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace topo;
  try {
    const std::string path = fuzz::memory_file(fuzz::as_text(data, size));
    const models::TopologySpec spec = models::read_topology_file(path);
    try {
      spec.check_heads(4, 2);
    } catch (const Error&) {
    }
    const models::TopologyGraph t = models::build_topology(spec, {1, 3, 2, 9});
    for (const auto& per_type : t.blocks)
      for (const Block& b : per_type) {
        const auto indptr = b.in.indptr.to_vector<std::int32_t>();
        for (std::size_t i = 0; i + 1 < indptr.size(); ++i)
          if (indptr[i + 1] == indptr[i]) std::abort();
      }
  } catch (const Error&) {
  }
  return 0;
}
