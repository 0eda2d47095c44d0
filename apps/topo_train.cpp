// topo-train: trains a model on a task and reports the test metric of the best-on-dev parameters.
//   topo-train --task masked-sum --model star --n 200 --k 10 --d 10 --epochs 10 --out runs/star
//   topo-train --task classify --model star --format mtl --train ../shared/data/mtl16/books.task.train
//              --out runs/books-star
//   topo-train --task node-classify --model gat        (Zachary's karate club; --model gcn likewise)
//   mpirun -np 2 topo-train ...   data parallel: each rank trains on its shard of every batch (dist/)
// Exit codes: 0 done (or --help), 1 a bad config or a failed run (the message names the cause), 2 an
// unexpected internal error, 75 (EX_TEMPFAIL) stopped by SIGTERM or SIGINT after a step whose checkpoint
// `--resume` continues (a second signal ends the process at once). Under several ranks an error on any rank ends the whole job (MPI_Abort), so no
// rank is left waiting for a collective its peer will never join.
#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <new>
#include <string>

#include "apps/train/cli.hpp"
#include "apps/train/trainer.hpp"
#include "kernels/error.hpp"
#include "kernels/threads.hpp"
#include "kernels/profile.hpp"

namespace {
constexpr int kStoppedExit = 75;  // EX_TEMPFAIL: run again (with --resume) to finish

// "topo-train: error: ..." alone, "topo-train: rank 1 of 2: error: ..." among several ranks; then the job ends.
int report_failure(topo::dist::Communicator* world, const char* kind, const char* what, int exit_code) {
  const std::string who = world && world->size() > 1
                              ? " rank " + std::to_string(world->rank()) + " of " + std::to_string(world->size()) + ":"
                              : "";
  std::fprintf(stderr, "topo-train:%s %s: %s\n", who.c_str(), kind, what);
  std::fflush(stderr);
  if (world && world->size() > 1) world->abort(exit_code);
  return exit_code;
}
}  // namespace

int main(int argc, char** argv) {
  topo::prepare_runtime(argv);  // may re-execute this program once, before anything else runs
  using namespace topo::apps;
  std::unique_ptr<topo::dist::Communicator> world;
  try {
    world = topo::dist::init_world(&argc, &argv);  // MPI under mpirun/srun; this process alone otherwise
    const bool root = world->is_root();
    std::ostream silent(nullptr);  // --help is printed once, by rank 0
    const auto config = parse_train_args(argc, argv, root ? std::cout : silent);
    if (!config) return 0;
    Trainer trainer(*config, world.get());
    const TrainResult r = trainer.run();
    if (r.stop_signal != 0) {  // every rank stopped after the same step
      const char* name = r.stop_signal == SIGINT ? "SIGINT" : "SIGTERM";
      if (root && r.losses.empty())  // before this process trained a step: nothing new to keep
        std::fprintf(stderr,
                     "topo-train: stopped by %s before training a step; nothing new to keep: run the same command "
                     "(with --resume auto) to start or continue\n",
                     name);
      else if (root)
        std::fprintf(stderr,
                     "topo-train: stopped by %s after step %lld (epoch %lld); %s/checkpoint.ckpt holds it: run the "
                     "same command with --resume (or --resume auto) to continue\n",
                     name, static_cast<long long>(r.steps), static_cast<long long>(r.epochs_done + 1),
                     config->out.c_str());
      return kStoppedExit;
    }
    if (!root) return 0;  // rank 0 reports
    if (!r.completed) {
      std::printf("stopped after epoch %lld (stop_after); continue with --resume --out %s\n",
                  static_cast<long long>(r.epochs_done), config->out.c_str());
      return 0;
    }
    std::printf("%s\n", summary_line(*config, r).c_str());
    if (config->profile && r.result.contains("profile_seconds")) {
      std::printf("profile (wall seconds per phase):\n");
      for (const auto& [phase, seconds] : r.result.at("profile_seconds").items())
        std::printf("  %-10s %9.3f\n", phase.c_str(), seconds.get<double>());
      std::printf("kernel time by op category (training steps):\n%s\n", topo::profile::report().c_str());
    }
    return 0;
  } catch (const topo::Error& e) {
    return report_failure(world.get(), "error", e.what(), 1);
  } catch (const std::bad_alloc&) {
    return report_failure(world.get(), "error", topo::apps::kOutOfMemory, 1);
  } catch (const std::exception& e) {
    return report_failure(world.get(), "internal error", e.what(), 2);
  }
}
