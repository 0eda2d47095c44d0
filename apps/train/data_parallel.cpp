#include "apps/train/data_parallel.hpp"

#include <cstring>

#include "apps/tasks/rng.hpp"
#include "kernels/error.hpp"
#include "nn/json_number.hpp"

namespace topo::apps {

std::vector<std::int64_t> shard_of(const std::vector<std::int64_t>& batch, int rank, int ranks) {
  TOPO_CHECK(ranks > 0 && rank >= 0 && rank < ranks, "shard {} of {} ranks", rank, ranks);
  const auto n = static_cast<std::int64_t>(batch.size());
  const std::int64_t begin = n * rank / ranks, end = n * (rank + 1) / ranks;
  return {batch.begin() + begin, batch.begin() + end};
}

void share_state_from_root(dist::Communicator& comm, nn::Module& model, nn::Optimizer& optimizer,
                           nlohmann::json& scalars) {
  if (comm.size() == 1) return;
  for (nn::Var& p : model.parameters()) {
    Tensor data = p.data();  // shares the parameter's storage: the broadcast writes into it
    comm.broadcast(data, 0);
  }
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& group : optimizer.state())
    for (const nn::ParamState& s : group) steps.push_back(s.step);
  nlohmann::json shared = {{"scalars", scalars}, {"optimizer_steps", steps}};
  dist::broadcast_json(comm, shared, 0);
  scalars = shared.at("scalars");
  std::size_t i = 0;
  for (auto& group : optimizer.state())
    for (nn::ParamState& s : group) {
      s.step = json_number<std::int64_t>(shared.at("optimizer_steps").at(i++));
      for (Tensor& buffer : s.buffers) comm.broadcast(buffer, 0);
    }
}

void check_ranks_agree(dist::Communicator& comm, const nn::Module& model, std::int64_t step) {
  if (comm.size() == 1) return;
  std::string first_difference;
  for (const auto& [name, p] : model.named_parameters()) {
    const Tensor mine = p.data().to(Device::cpu());
    Tensor roots = mine.clone();
    comm.broadcast(roots, 0);
    if (first_difference.empty() && std::memcmp(mine.raw_data(), roots.raw_data(), mine.nbytes()) != 0)
      first_difference = name;
  }
  std::vector<double> differ = {first_difference.empty() ? 0.0 : 1.0};
  comm.allreduce_sum(differ);
  TOPO_CHECK(differ[0] == 0, "after step {}, {} rank(s) hold parameters that differ from rank 0's{}: the ranks "
             "diverged (every rank must run the same build, config and data)",
             step, differ[0], first_difference.empty() ? "" : " (this rank: first '" + first_difference + "')");
}

std::uint64_t rank_dropout_seed(std::int64_t seed, std::int64_t epoch, int rank) {
  constexpr std::uint64_t kRankDropoutStream = 4;  // apart from data, init (1), dropout (2), shuffle (3)
  return SplitMix64({static_cast<std::uint64_t>(seed), kRankDropoutStream, static_cast<std::uint64_t>(epoch),
                     static_cast<std::uint64_t>(rank)})
      .next();
}

}  // namespace topo::apps
