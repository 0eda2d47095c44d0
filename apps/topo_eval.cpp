// topo-eval: scores a saved text classifier on a file and prints (and optionally writes) its accuracy.
//   topo-eval --checkpoint runs/books-star --test ../shared/data/mtl16/books.task.test --json books.json
// Exit codes: 0 done (or --help), 1 a bad argument or unreadable input (the message names it), 2 an
// unexpected internal error.
#include <cstdio>
#include <exception>
#include <iostream>

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
    if (r.value("task", "") == "tag") {
      std::printf("%s on %s (%lld sentences, scheme %s): %s %.4f; majority tag '%s' acc %.4f\n%s",
                  r.at("model").get<std::string>().c_str(), options->test.c_str(),
                  static_cast<long long>(r.at("sentences").get<std::int64_t>()), r.at("scheme").get<std::string>().c_str(),
                  r.at("metric").get<std::string>().c_str(), r.at(r.at("metric").get<std::string>()).get<double>(),
                  r.at("majority_tag").get<std::string>().c_str(), r.at("majority_acc").get<double>(),
                  r.at("table").get<std::string>().c_str());
      if (r.contains("predictions")) std::printf("predictions -> %s\n", r.at("predictions").get<std::string>().c_str());
      if (!options->json.empty()) std::printf("-> %s\n", options->json.c_str());
      return 0;
    }
    std::printf("%s on %s: acc %.4f (%lld examples; majority class %.4f), loss %.4f, %.2f ms per batch of %lld\n",
                r.at("model").get<std::string>().c_str(), options->test.c_str(), r.at("acc").get<double>(),
                static_cast<long long>(r.at("examples").get<std::int64_t>()), r.at("majority_acc").get<double>(),
                r.at("loss").get<double>(), r.at("ms_per_batch").get<double>(),
                static_cast<long long>(r.at("batch").get<std::int64_t>()));
    const auto& data = r.at("data");
    if (data.at("invalid_utf8_lines").get<std::int64_t>() > 0 || data.at("skipped_bad").get<std::int64_t>() > 0)
      std::printf("input: %lld lines with invalid UTF-8 (decoded with U+FFFD%s), %lld malformed lines skipped\n",
                  static_cast<long long>(data.at("invalid_utf8_lines").get<std::int64_t>()),
                  data.value("first_invalid_utf8", "").empty()
                      ? ""
                      : ("; the first at " + data.value("first_invalid_utf8", "")).c_str(),
                  static_cast<long long>(data.at("skipped_bad").get<std::int64_t>()));
    if (!options->json.empty()) std::printf("-> %s\n", options->json.c_str());
    return 0;
  } catch (const topo::Error& e) {
    std::fprintf(stderr, "topo-eval: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "topo-eval: internal error: %s\n", e.what());
    return 2;
  }
}
