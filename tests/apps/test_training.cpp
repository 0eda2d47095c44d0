// topo-train end to end: a short real run learns masked summation, resume continues bitwise identically,
// result.json is complete and written atomically, and the binary fails cleanly on malformed configs.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include "apps/tasks/masked_sum/masked_sum.hpp"
#include "apps/train/io.hpp"
#include "kernels/atomic_file.hpp"
#include "apps/train/model_factory.hpp"
#include "apps/train/trainer.hpp"
#include "kernels/dense/gemm.hpp"
#include "kernels/error.hpp"
#include "nn/checkpoint.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::apps;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) { return testing::fresh_temp_dir(name); }

TrainConfig small_config(const fs::path& out) {
  TrainConfig c;
  c.set("n", 20);
  c.set("k", 3);
  c.set("d", 4);
  c.set("train_size", 2000);
  c.set("dev_size", 500);
  c.set("test_size", 1000);
  c.epochs = 5;
  c.hidden = 32;
  c.head_hidden = 32;
  c.batch = 32;
  c.lr = 3e-3;
  c.progress = "none";
  c.out = out.string();
  return c;
}

// Three short epochs (30 steps) where every piece of state matters to a resume: dropout, weight decay, warm-up and a
// linear decay read the dropout generator, the Adam moments, the step the schedule reads and the shuffle of the
// next epoch; evaluations every 7 steps straddle the epoch boundaries.
TrainConfig resumable_config(const fs::path& dir) {
  TrainConfig c = small_config(dir);
  c.set("train_size", 320);
  c.set("dev_size", 64);
  c.set("test_size", 64);
  c.epochs = 3;
  c.hidden = 16;
  c.head_hidden = 16;
  c.dropout = 0.1;
  c.weight_decay = 1e-4;
  c.warmup = 5;
  c.schedule = "linear";
  c.eval_every = 7;
  return c;
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

// Runs a shell command, returning its exit status and combined output.
std::pair<int, std::string> run_command(const std::string& command) {
  std::FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe)) output += buffer;
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

fs::path topo_train_binary() {
  // The test executable and topo-train share the build's bin/ directory.
  return fs::read_symlink("/proc/self/exe").parent_path() / "topo-train";
}

}  // namespace

TEST_CASE("training: DeepSets learns masked summation (n = 20, k = 3) far below the k/2 baseline") {
  const fs::path dir = fresh_dir("learn");
  const TrainConfig c = small_config(dir);
  const TrainResult r = Trainer(c).run();
  REQUIRE(r.completed);
  // The baseline is measured on the test set; a sum of 3 U[0,1) has variance 3/12.
  CHECK(r.baseline.at("baseline_mse").get<double>() == doctest::Approx(MaskedSumTask({20, 0, 3, 4, 1}).constant_guess_mse(Split::Test, 1000)));
  CHECK(r.baseline.at("baseline_mse").get<double>() == doctest::Approx(0.25).epsilon(0.15));
  INFO("test mse " << r.test_metric << " baseline " << r.baseline.at("baseline_mse").get<double>());
  CHECK(r.test_metric < 0.25 * r.baseline.at("baseline_mse").get<double>());
  CHECK(r.steps == 5 * 63);
  CHECK(r.losses.size() == 315u);
  CHECK(r.losses.back() < r.losses.front());

  // result.json: complete, and no temp file left behind by the atomic write.
  const nlohmann::json result = read_json(Trainer::result_path(c.out));
  for (const char* key : {"task", "model", "pooling", "test_mse", "baseline_mse", "epochs", "train_seconds", "params",
                          "config", "best_dev_mse", "best_step", "steps"})
    CHECK_MESSAGE(result.contains(key), key);
  CHECK(result.at("task") == "masked-sum");
  CHECK(result.at("model") == "deepsets");
  CHECK(result.at("test_mse").get<double>() == r.test_metric);
  CHECK(result.at("params").get<std::int64_t>() == r.params);
  CHECK(result.at("config") == c.to_json());
  for (const auto& entry : fs::directory_iterator(dir))
    CHECK_MESSAGE(entry.path().filename().string().find(".tmp") == std::string::npos, entry.path().string());

  // metrics.jsonl: one dev evaluation per epoch, the best one is what was tested.
  const auto lines = read_json_lines(Trainer::metrics_path(c.out));
  REQUIRE(lines.size() == 5u);
  double best = 1e30;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    CHECK(lines[i].at("step").get<std::int64_t>() == 63 * static_cast<std::int64_t>(i + 1));
    best = std::min(best, lines[i].at("mse").get<double>());
  }
  CHECK(r.best_dev_metric == best);
  // The test evaluation used the best-on-dev parameters (best.ckpt): a fresh model loaded from them agrees.
  const auto reloaded = make_task_model(c, *make_task(c));
  nn::load_checkpoint(Trainer::best_path(c.out), *reloaded, nullptr, nullptr);
  const MaskedSumTask task({c.option<std::int64_t>("n"), 0, c.option<std::int64_t>("k"), c.option<std::int64_t>("d"),
                            static_cast<std::uint64_t>(c.seed)});
  CHECK(evaluate_mse(*reloaded, task, Split::Test, c.option<std::int64_t>("test_size"), 256, Device::cpu()) ==
        r.test_metric);
  CHECK(evaluate_mse(*reloaded, task, Split::Dev, c.option<std::int64_t>("dev_size"), 256, Device::cpu()) ==
        r.best_dev_metric);
  fs::remove_all(dir);
}

TEST_CASE("training: Star-Transformer learns masked summation (n = 20, k = 3) far below the k/2 baseline") {
  // The paper's probe at toy size: 1 layer, 32 hidden, 4 heads. Star sits on a plateau near the baseline for
  // a few hundred steps, then drops (to ~0.015-0.04 x baseline over seeds 1-3 at these settings): 2500 steps.
  const fs::path dir = fresh_dir("star_learn");
  TrainConfig c = small_config(dir);
  c.set("model", "star");
  c.set("d", 10);
  c.set("train_size", 1000);
  c.set("dev_size", 200);
  c.set("test_size", 500);
  c.batch = 16;
  c.epochs = 40;
  c.layers = 1;
  c.heads = 4;
  c.seed = 2;
  const TrainResult r = Trainer(c).run();
  REQUIRE(r.completed);
  INFO("test mse " << r.test_metric << " baseline " << r.baseline.at("baseline_mse").get<double>());
  CHECK(r.test_metric < 0.25 * r.baseline.at("baseline_mse").get<double>());
  fs::remove_all(dir);
}

TEST_CASE("training: --precision bf16 learns masked summation as fp32 does (DeepSets and Star), and says so") {
  // bf16 GEMM inputs with fp32 weights, accumulation and optimizer: the same short runs at both precisions
  // (same seeds, same data) must all beat the baseline by far and end at test MSEs of the same size. Star's
  // probe leaves its plateau after ~1000 of its 2500 steps, sooner or later by seed and by the GEMMs' rounding:
  // one seed's MSE moved 0.010 -> 0.036 between two bf16 GEMM kernels of equal accuracy (and 0.013 -> 0.041
  // with fp32 against bf16), so precisions are compared by the median over three seeds.
  const bool bf16_cpu = bf16_gemm_supported();
  if (!bf16_cpu) MESSAGE("this CPU does not report AVX512_BF16: bf16 runs fall back to fp32 (checked below)");
  for (const std::string model : {"deepsets", "star"}) {
    CAPTURE(model);
    const std::vector<std::int64_t> seeds = model == "star" ? std::vector<std::int64_t>{2, 3, 4} : std::vector<std::int64_t>{1};
    std::vector<double> mse[2];
    for (int p = 0; p < 2; ++p)
      for (const std::int64_t seed : seeds) {
        const fs::path dir = fresh_dir("bf16_" + model + std::to_string(p));
        TrainConfig c = small_config(dir);
        c.precision = p == 0 ? "fp32" : "bf16";
        if (model == "star") {  // the Star test's toy probe above (2500 steps: it leaves its plateau after ~1000)
          c.set("model", "star").set("d", 10).set("train_size", 1000).set("dev_size", 200).set("test_size", 500);
          c.batch = 16;
          c.epochs = 40, c.layers = 1, c.heads = 4;
        }
        c.seed = seed;
        const TrainResult r = Trainer(c).run();
        REQUIRE(r.completed);
        CHECK(gemm_precision() == Precision::fp32);  // the run restored the process's precision
        mse[p].push_back(r.test_metric);
        const nlohmann::json result = read_json(Trainer::result_path(c.out));
        CHECK(result.at("config").at("precision") == c.precision);
        CHECK(result.at("precision") == (p == 1 && bf16_cpu ? "bf16" : "fp32"));
        INFO("precision " << c.precision << " seed " << seed << " test mse " << r.test_metric << " baseline "
                          << r.baseline.at("baseline_mse").get<double>() << " first loss " << r.losses.front()
                          << " last loss " << r.losses.back());
        CHECK(r.test_metric < 0.25 * r.baseline.at("baseline_mse").get<double>());
        CHECK(r.losses.back() < 0.25 * r.losses.front());
        fs::remove_all(dir);
      }
    for (auto& v : mse) std::sort(v.begin(), v.end());
    const double fp32 = mse[0][mse[0].size() / 2], bf16 = mse[1][mse[1].size() / 2];
    INFO("median test mse fp32 " << fp32 << " bf16 " << bf16);
    CHECK(bf16 < 2.0 * fp32 + 0.01);  // close to fp32's: bf16 noise, not a different result
  }
}

TEST_CASE("training: min_steps raises the epochs of a small training set and early stopping waits for it") {
  // 200 examples in batches of 32: 7 steps per epoch. An lr far below float resolution leaves the parameters, so
  // the dev error, unchanged: every evaluation after the first is "no better", and patience 1 would stop after
  // epoch 2 without min_steps.
  const fs::path dir = fresh_dir("min_steps");
  TrainConfig c = small_config(dir);
  c.set("train_size", 200);
  c.epochs = 10;
  c.patience = 1;
  c.lr = 1e-30;
  SUBCASE("early stopping alone") {
    const TrainResult r = Trainer(c).run();
    CHECK(r.stopped_early);
    CHECK(r.steps == 2 * 7);
  }
  SUBCASE("early stopping waits for min_steps") {
    c.min_steps = 30;  // reached in epoch 5 (35 steps)
    const TrainResult r = Trainer(c).run();
    CHECK(r.stopped_early);
    CHECK(r.steps == 5 * 7);
  }
  SUBCASE("the epochs are raised to reach min_steps") {
    c.epochs = 1;
    c.patience = 0;
    c.min_steps = 30;
    const TrainResult r = Trainer(c).run();
    CHECK_FALSE(r.stopped_early);
    CHECK(r.steps == 5 * 7);
    CHECK(read_json(Trainer::result_path(c.out)).at("epochs").get<std::int64_t>() == 5);
    CHECK(read_json_lines(Trainer::metrics_path(c.out)).size() == 5u);
  }
  fs::remove_all(dir);
}

TEST_CASE("training: resume from the epoch checkpoint continues the identical loss curve") {
  const auto config = resumable_config;
  const fs::path a_dir = fresh_dir("resume_a"), b_dir = fresh_dir("resume_b");
  const TrainResult full = Trainer(config(a_dir)).run();
  REQUIRE(full.completed);
  REQUIRE(full.losses.size() == 30u);

  TrainConfig first = config(b_dir);
  first.stop_after = 1;
  const TrainResult part1 = Trainer(first).run();
  CHECK(!part1.completed);
  REQUIRE(part1.losses.size() == 10u);
  CHECK(!fs::exists(Trainer::result_path(first.out)));
  // An interrupted run may have logged past its checkpoint; resume must drop such lines.
  append_json_line(Trainer::metrics_path(first.out), {{"step", 999}, {"split", "dev"}, {"mse", 0.0}});
  // A kill during an append leaves a torn last line (no '\n'); resume must drop it, not stop on it.
  std::ofstream(Trainer::metrics_path(first.out), std::ios::app) << R"({"step":1000,"split":"de)";

  TrainConfig second = config(b_dir);
  second.resume = "on";
  const TrainResult part2 = Trainer(second).run();
  REQUIRE(part2.completed);
  REQUIRE(part2.losses.size() == 20u);
  for (std::size_t i = 0; i < 30; ++i) {
    const float resumed = i < 10 ? part1.losses[i] : part2.losses[i - 10];
    INFO("step " << i);
    CHECK(resumed == full.losses[i]);  // bitwise
  }
  CHECK(part2.test_metric == full.test_metric);
  CHECK(part2.best_step == full.best_step);
  const auto lines_a = read_json_lines(Trainer::metrics_path(full.result.at("config").at("out")));
  const auto lines_b = read_json_lines(Trainer::metrics_path(second.out));
  REQUIRE(lines_a.size() == lines_b.size());
  for (std::size_t i = 0; i < lines_a.size(); ++i) {
    CHECK(lines_a[i].at("step") == lines_b[i].at("step"));
    CHECK(lines_a[i].at("mse") == lines_b[i].at("mse"));
    CHECK(lines_a[i].at("train_loss") == lines_b[i].at("train_loss"));
  }

  // Resuming with different settings, or without a checkpoint, is refused with the reason.
  TrainConfig changed = config(b_dir);
  changed.resume = "on";
  changed.lr = 1e-2;
  try {
    Trainer(changed).run();
    FAIL("resume with a changed lr did not throw");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("'lr'") != std::string::npos);
  }
  // Another model's run names the model, not the first option only one of the two models has.
  TrainConfig other_model = config(b_dir);
  other_model.resume = "on";
  other_model.set("model", other_model.model == "star" ? "transformer" : "star");
  other_model.heads = 4;  // dividing hidden 16
  const std::string model_error = testing::error_of([&] { Trainer(other_model).run(); });
  INFO(model_error);
  CHECK(model_error.find("resume: --model " + other_model.model + " differs from the checkpoint's") !=
        std::string::npos);
  TrainConfig missing = config(fresh_dir("resume_missing"));
  missing.resume = "on";
  CHECK_THROWS_AS(Trainer(missing).run(), Error);
  // A metrics record without an integer step is a damaged file named as such, not nlohmann's "internal error".
  append_json_line(Trainer::metrics_path(second.out), {{"step", "x"}});
  const std::string damaged = testing::error_of([&] { Trainer(second).run(); });
  INFO(damaged);
  CHECK(damaged.find("metrics.jsonl' record ") != std::string::npos);
  CHECK(damaged.find("is not a metrics line with an integer step: {\"step\":\"x\"}") != std::string::npos);
  // --out naming a file: an error naming it, not std::filesystem_error's "internal error".
  TrainConfig onto_file = config(fresh_dir("resume_onto_file"));
  fs::remove_all(onto_file.out);
  std::ofstream(onto_file.out) << "a file\n";
  CHECK(testing::error_of([&] { Trainer(onto_file).run(); }).find("cannot create the run directory --out '" +
                                                                   onto_file.out + "'") != std::string::npos);
  fs::remove(onto_file.out);
  fs::remove_all(a_dir);
  fs::remove_all(b_dir);
  fs::remove_all(missing.out);
}

TEST_CASE("training: --ema-decay evaluates the averaged weights, keeps them as best.ckpt and resumes them exactly") {
  auto config = [](const fs::path& dir, double ema) {
    TrainConfig c = resumable_config(dir);
    c.ema_decay = ema;
    return c;
  };
  const fs::path plain_dir = fresh_dir("ema_plain"), a_dir = fresh_dir("ema_a"), b_dir = fresh_dir("ema_b");
  const TrainResult plain = Trainer(config(plain_dir, 0.0)).run();
  const TrainResult full = Trainer(config(a_dir, 0.9)).run();
  REQUIRE(full.completed);
  // The average does not touch training: the same losses; dev sees other weights: other figures.
  CHECK(full.losses == plain.losses);
  const auto lines_plain = read_json_lines(Trainer::metrics_path(plain_dir));
  const auto lines_a = read_json_lines(Trainer::metrics_path(a_dir));
  REQUIRE(lines_plain.size() == lines_a.size());
  CHECK(lines_plain.back().at("mse") != lines_a.back().at("mse"));
  CHECK(topo::nn::read_checkpoint_index(Trainer::checkpoint_path(a_dir.string()))["average"]["updates"] == 30);
  CHECK(!topo::nn::read_checkpoint_index(Trainer::checkpoint_path(plain_dir.string())).contains("average"));

  // Interrupted after an epoch and resumed: the dev figures (of the averages) and the test are the same bits.
  TrainConfig first = config(b_dir, 0.9);
  first.stop_after = 1;
  REQUIRE(!Trainer(first).run().completed);
  TrainConfig second = config(b_dir, 0.9);
  second.resume = "on";
  const TrainResult resumed = Trainer(second).run();
  REQUIRE(resumed.completed);
  const auto lines_b = read_json_lines(Trainer::metrics_path(b_dir));
  REQUIRE(lines_a.size() == lines_b.size());
  for (std::size_t i = 0; i < lines_a.size(); ++i) {
    INFO("evaluation " << i);
    CHECK(lines_a[i].at("mse") == lines_b[i].at("mse"));
  }
  CHECK(resumed.test_metric == full.test_metric);
  CHECK(resumed.best_step == full.best_step);
  // best.ckpt holds what dev scored: topo-eval's parameters are the averages, not the last step's.
  CHECK(full.test_metric != plain.test_metric);
  TrainConfig changed = config(b_dir, 0.99);
  changed.resume = "on";
  CHECK(testing::contains(testing::error_of([&] { Trainer(changed).run(); }), "'ema_decay'"));
  for (const fs::path& d : {plain_dir, a_dir, b_dir}) fs::remove_all(d);
}

TEST_CASE("read_json_lines: a torn last line is dropped only when asked; a bad line inside is an error") {
  const fs::path dir = fresh_dir("jsonl");
  const std::string path = (dir / "metrics.jsonl").string();
  std::ofstream(path) << "{\"step\": 1}\n{\"step\": 2}\n{\"step\": 3, \"lo";
  CHECK(read_json_lines(path, /*drop_torn_tail=*/true).size() == 2u);
  CHECK(testing::error_of([&] { read_json_lines(path); }).find("line 3") != std::string::npos);
  std::ofstream(path) << "{\"step\": 1}\n{\"step\": 2, \"lo\n{\"step\": 3}\n";  // complete but malformed
  const std::string err = testing::error_of([&] { read_json_lines(path, true); });
  CHECK(err.find(path) != std::string::npos);
  CHECK(err.find("line 2") != std::string::npos);
  std::ofstream(path) << "{\"step\": 1}\n{\"step\": 2}";  // last line complete, only its '\n' missing
  CHECK(read_json_lines(path, true).size() == 2u);
  fs::remove_all(dir);
}

TEST_CASE("write_file_atomically replaces a file whole and reports unwritable paths") {
  const fs::path dir = fresh_dir("atomic");
  fs::create_directories(dir);
  const std::string path = (dir / "result.json").string();
  write_file_atomically(path, "old\n");
  write_file_atomically(path, "new content\n");
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "new content\n");
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
  try {
    write_file_atomically((dir / "no_such_dir" / "x.json").string(), "x");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("no_such_dir") != std::string::npos);
  }
  // A FIFO (as /dev/stdout in a pipe, /dev/null) is written in place: the rename made such a path a regular
  // file (/dev/null, when run as root).
  const std::string fifo = (dir / "fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // first, so the writer's open does not wait
  REQUIRE(reader >= 0);
  write_file_atomically(fifo, "through the pipe\n");
  char buffer[64] = {};
  const ssize_t got = ::read(reader, buffer, sizeof buffer);
  ::close(reader);
  CHECK(std::string(buffer, got > 0 ? static_cast<std::size_t>(got) : 0) == "through the pipe\n");
  CHECK(fs::is_fifo(fifo));
  // A symlink keeps pointing at the file, which is replaced; a directory is an error saying so.
  const std::string link = (dir / "link.json").string();
  fs::create_symlink(path, link);
  write_file_atomically(link, "via the link\n");
  CHECK(fs::is_symlink(link));
  std::ifstream again(path);
  CHECK(std::string((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>()) == "via the link\n");
  CHECK(topo::testing::error_of([&] { write_file_atomically(dir.string(), "x"); }).find("it is a directory") !=
        std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("topo-train binary: malformed configs exit non-zero naming the field; a tiny run succeeds") {
  const fs::path binary = topo_train_binary();
  REQUIRE_MESSAGE(fs::exists(binary), "build the topo-train target first: ", binary.string());
  const fs::path dir = fresh_dir("cli");
  fs::create_directories(dir);
  struct Case {
    std::string config;
    std::string flags;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {R"({"n": -5})", "", "'n'"},
      {R"({"n": 20, "k": 30})", "", "'k' = 30"},
      {R"({"epochz": 3})", "", "'epochz'"},
      {R"({"lr": "fast"})", "", "'lr'"},
      {R"({"n": 20,)", "", "not valid JSON"},
      {R"({"model": "star", "hidden": 10, "heads": 3})", "", "'heads' = 3"},
      {R"({})", "--batch -1", "'batch'"},
      {R"({})", "--threads many", "'threads'"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const fs::path cfg = dir / ("bad" + std::to_string(i) + ".json");
    std::ofstream(cfg) << cases[i].config;
    const auto [code, output] =
        run_command(binary.string() + " --config " + cfg.string() + " " + cases[i].flags + " --out " + (dir / "run").string());
    INFO(cases[i].config << " " << cases[i].flags);
    TOPO_CAPTURE(code);
    TOPO_CAPTURE(output);
    CHECK(code == 1);
    CHECK(output.find(cases[i].expected) != std::string::npos);
    CHECK(output.find("error") != std::string::npos);
  }
  const auto [code, output] = run_command(binary.string() +
                                          " --task masked-sum --model deepsets --n 8 --k 2 --d 3 --train-size 64 "
                                          "--dev-size 16 --test-size 16 --epochs 1 --hidden 8 --progress lines --profile --out " +
                                          (dir / "ok").string());
  TOPO_CAPTURE(output);
  CHECK(code == 0);
  CHECK(fs::exists(dir / "ok" / "result.json"));
  CHECK(output.find("baseline") != std::string::npos);
  // --profile: kernel time per op category; DeepSets' Linear layers are GEMMs, forward and backward.
  const nlohmann::json result = read_json(dir / "ok" / "result.json");
  REQUIRE(result.contains("kernel_profile"));
  CHECK(result.at("kernel_profile").at("forward").at("gemm").at("calls").get<std::int64_t>() > 0);
  CHECK(result.at("kernel_profile").at("backward").at("gemm").at("calls").get<std::int64_t>() > 0);
  CHECK(result.contains("profile_seconds"));
  fs::remove_all(dir);
}

TEST_CASE("training: Star-Transformer and Transformer plug in through the factory; Star resumes bitwise") {
  auto config = [](const fs::path& dir, const std::string& model) {
    TrainConfig c = small_config(dir);
    c.set("model", model);
    c.set("n", 12);
    c.set("train_size", 96);
    c.set("dev_size", 32);
    c.set("test_size", 32);
    c.epochs = 2;
    c.hidden = 16;
    c.heads = 2;
    c.head_hidden = 16;
    c.dropout = 0.2;  // the attention encoders draw masks from the default generator: resume must restore it
    if (model == "star") set_config_field(c, "variant", "no-radical");
    return c;
  };
  const fs::path a = fresh_dir("star_a"), b = fresh_dir("star_b"), t = fresh_dir("transformer");
  const TrainResult full = Trainer(config(a, "star")).run();
  REQUIRE(full.completed);
  CHECK(full.result.at("model") == "star");
  CHECK(full.result.at("variant") == "no-radical");
  TrainConfig first = config(b, "star");
  first.stop_after = 1;
  const TrainResult part1 = Trainer(first).run();
  TrainConfig second = config(b, "star");
  second.resume = "on";
  const TrainResult part2 = Trainer(second).run();
  REQUIRE(part1.losses.size() + part2.losses.size() == full.losses.size());
  for (std::size_t i = 0; i < full.losses.size(); ++i) {
    INFO("step " << i);
    CHECK((i < part1.losses.size() ? part1.losses[i] : part2.losses[i - part1.losses.size()]) == full.losses[i]);
  }
  CHECK(part2.test_metric == full.test_metric);
  const TrainResult transformer = Trainer(config(t, "transformer")).run();
  CHECK(transformer.completed);
  CHECK(std::isfinite(transformer.test_metric));
  for (const auto& dir : {a, b, t}) fs::remove_all(dir);
}
