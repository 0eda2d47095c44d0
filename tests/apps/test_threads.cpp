// The thread default follows the affinity mask: topo-train started under a one-CPU mask (as `taskset -c 0`
// would) runs 1 thread and says so in its log's first line and in result.json.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "kernels/threads.hpp"
#include "tests/support/testing.hpp"

namespace fs = std::filesystem;

TEST_CASE("topo-train under a one-CPU affinity mask runs 1 thread and names the mask as the source") {
  const fs::path binary = fs::read_symlink("/proc/self/exe").parent_path() / "topo-train";
  REQUIRE_MESSAGE(fs::exists(binary), "build the topo-train target first: ", binary.string());
  const fs::path dir = topo::testing::fresh_temp_dir("threads_mask");
  const std::string out = (dir / "run").string(), log = (dir / "log.txt").string();
  cpu_set_t mask;
  REQUIRE(sched_getaffinity(0, sizeof mask, &mask) == 0);
  int first = 0;
  while (!CPU_ISSET(first, &mask)) ++first;

  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // only async-signal-safe calls until exec
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, 2) < 0 || sched_setaffinity(0, sizeof one, &one) != 0) _exit(120);
    unsetenv("OMP_NUM_THREADS");  // the mask, not the caller's environment, must decide
    const char* argv[] = {binary.c_str(), "--task", "masked-sum", "--model", "deepsets", "--n", "8", "--k", "2",
                          "--d", "3", "--train-size", "64", "--dev-size", "16", "--test-size", "16", "--epochs", "1",
                          "--hidden", "8", "--progress", "lines", "--out", out.c_str(), nullptr};
    execv(binary.c_str(), const_cast<char* const*>(argv));
    _exit(121);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  // The log opens with what runs and where each setting came from, then the thread line.
  std::ifstream log_in(log);
  std::string threads_line, line;
  while (threads_line.empty() && std::getline(log_in, line))
    if (line.starts_with("threads:")) threads_line = line;
  INFO("log's threads line: " << threads_line);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(threads_line.rfind("threads: 1 (affinity mask: 1 CPU)", 0) == 0);
  std::ifstream result_in(fs::path(out) / "result.json");
  REQUIRE(result_in.good());
  const nlohmann::json result = nlohmann::json::parse(result_in);
  CHECK(result.at("threads").get<int>() == 1);
  CHECK(result.at("threads_source").get<std::string>() == "affinity mask: 1 CPU");
  CHECK(result.at("kernel_isa").get<std::string>() == topo::kernel_isa());  // what the kernels were built for
  fs::remove_all(dir);
}
