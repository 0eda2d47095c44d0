// topo-eval: scores a saved model on a file (the tasks that read files: classify, tag) and prints (and optionally
// writes) the task's figures.
//   topo-eval --checkpoint runs/books-star --test ../shared/data/mtl16/books.task.test --json books.json
// Exit codes: 0 done (or --help), 1 a bad argument or unreadable input (the message names it), 2 an
// unexpected internal error.
#include <cstdio>
#include <exception>
#include <iostream>
#include <new>

#include "apps/train/cli.hpp"
#include "apps/train/evaluate.hpp"
#include "kernels/error.hpp"
#include "kernels/threads.hpp"

int main(int argc, char** argv) {
  topo::prepare_runtime(argv);  // may re-execute this program once, before anything else runs
  using namespace topo::apps;
  try {
    const auto options = parse_eval_args(argc, argv, std::cout);
    if (!options) return 0;
    const nlohmann::json r = evaluate_checkpoint(*options);
    std::fprintf(stderr, "%s\n", r.at("precision_note").get<std::string>().c_str());
    std::printf("%s", r.at("report").get<std::string>().c_str());  // the task's own report (apps/tasks/<task>)
    if (!options->json.empty()) std::printf("-> %s\n", options->json.c_str());
    return 0;
  } catch (const topo::Error& e) {
    std::fprintf(stderr, "topo-eval: error: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "topo-eval: error: %s\n", kOutOfMemory);
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "topo-eval: internal error: %s\n", e.what());
    return 2;
  }
}
