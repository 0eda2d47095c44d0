#pragma once
// The trainer's data-parallel pieces (issue #18; dist/ holds the communicator and the gradient reducer).
//
// `mpirun -np N topo-train ...`: every rank builds the same task and model; each global batch (--batch
// examples, cut exactly as one process cuts it) is split into N contiguous shards, rank r taking
// shard_of(batch, r, N). Gradients are weighted by the shard's share of the batch and summed over the ranks
// (dist::GradientReducer), so the step is the one a single process takes on the whole batch, up to the
// order of float sums (docs/performance/threads.md states the tolerance the tests hold). Flags: --dist-reduce
// overlap|after-backward, --dist-bucket-mb, --dist-timeout. Rank 0 alone reads and
// writes the run directory (checkpoints, metrics, result.json) and evaluates; what the others need of it
// (the resumed state, the early-stopping count) is broadcast.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dist/communicator.hpp"
#include "nn/module.hpp"
#include "nn/optim.hpp"

namespace topo::apps {

// Rank `rank`'s contiguous part of a global batch: examples [rank*B/N, (rank+1)*B/N). Empty when B < N.
std::vector<std::int64_t> shard_of(const std::vector<std::int64_t>& batch, int rank, int ranks);

// Root's parameters, optimizer state (buffers and step counts) and `scalars` onto every rank: after a fresh
// initialisation (identical bits whatever each rank computed) and after root loaded a checkpoint.
void share_state_from_root(dist::Communicator& comm, nn::Module& model, nn::Optimizer& optimizer,
                           nlohmann::json& scalars);

// Every rank must hold root's parameters bit for bit (the collectives give every rank the same sums). A
// topo::Error on every rank names the first parameter that differs and the step.
void check_ranks_agree(dist::Communicator& comm, const nn::Module& model, std::int64_t step);

// The dropout stream of rank `rank` in epoch `epoch` of a multi-rank run (ranks draw different masks;
// a resumed run with the same rank count draws the same ones).
std::uint64_t rank_dropout_seed(std::int64_t seed, std::int64_t epoch, int rank);

}  // namespace topo::apps
