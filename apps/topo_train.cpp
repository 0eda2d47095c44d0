// topo-train: trains a model on a task and reports the test metric of the best-on-dev parameters.
//   topo-train --task masked-sum --model star --n 200 --k 10 --d 10 --epochs 10 --out runs/star
//   topo-train --task classify --model star --format mtl --train ../shared/data/mtl16/books.task.train
//              --out runs/books-star
//   topo-train --task node-classify --model gat        (Zachary's karate club, GAT vs --model gcn)
// Exit codes: 0 done (or --help), 1 a bad config or a failed run (the message names the cause), 2 an
// unexpected internal error.
#include <cstdio>
#include <exception>
#include <iostream>

#include "apps/tasks/node_classify.hpp"
#include "apps/train/cli.hpp"
#include "apps/train/trainer.hpp"
#include "kernels/error.hpp"
#include "kernels/threads.hpp"
#include "kernels/profile.hpp"

int main(int argc, char** argv) {
  topo::enable_short_spin(argv);  // may re-execute this program once, before anything else runs
  using namespace topo::apps;
  try {
    // One graph, not sentences: node-classify has its own flags and loop (apps/tasks/node_classify.hpp).
    if (wants_node_classify(argc, argv)) return node_classify_main(argc, argv, std::cout);
    const auto config = parse_train_args(argc, argv, std::cout);
    if (!config) return 0;
    Trainer trainer(*config);
    const TrainResult r = trainer.run();
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
    std::fprintf(stderr, "topo-train: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "topo-train: internal error: %s\n", e.what());
    return 2;
  }
}
