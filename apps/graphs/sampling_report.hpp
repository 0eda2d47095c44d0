#pragma once
// The neighbour sampler's throughput on a node-classification graph (`topo-graph sample`; bench/peers/sampling.sh
// puts it beside DGL's MultiLayerNeighborSampler on the same file).
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/tasks/node_classify/node_classify.hpp"

namespace topo::apps {

// {"library", "fanouts", "batch", "batches", "threads", "median_batch_ms", "seeds_per_second",
//  "sampled_edges_per_second", "edges_per_batch", "input_nodes_per_batch"}: sample_blocks timed per batch.
nlohmann::json sampling_report(const NodeDataset& data, const std::vector<std::int64_t>& fanouts, std::int64_t batch,
                               std::int64_t batches, std::uint64_t seed);

}  // namespace topo::apps
