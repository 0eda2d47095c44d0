// topo-bench's command line as a user types it: arguments that cannot give a report are refused before the
// machine is measured and the suites run (a --json into a missing folder lost a whole run's results at the
// end; --only '' or 'a||b' ran every benchmark), and an --only that matched nothing says so.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/support/testing.hpp"

namespace {

struct Outcome {
  int status;
  std::string output;
};

Outcome run_bench(const std::string& arguments) {
  const auto dir = topo::testing::fresh_temp_dir("bench_cli");
  const std::string log = (dir / "out.log").string();
  const int status = std::system((std::string("\"") + TOPO_BENCH_EXE + "\" " + arguments + " > \"" + log + "\" 2>&1").c_str());
  std::ifstream in(log);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1,
          std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>())};
}

}  // namespace

TEST_CASE("topo-bench: --json and --only that cannot give a report are refused up front; no match is an error") {
  Outcome o = run_bench("ops --only ''");
  CHECK(o.status == 2);
  CHECK(topo::testing::contains(o.output, "--only '': an empty text (or alternative) would match every benchmark"));
  o = run_bench("ops --only 'gspmm||x'");
  CHECK(o.status == 2);
  o = run_bench("ops --json /nonexistent_topo_dir/x.json");
  CHECK(o.status == 1);
  CHECK(topo::testing::contains(o.output, "--json /nonexistent_topo_dir/x.json: the folder /nonexistent_topo_dir does "
                                          "not exist"));
  CHECK_FALSE(topo::testing::contains(o.output, "measuring machine limits"));  // refused before any work
  const std::string folder = topo::testing::fresh_temp_dir("bench_cli_json").string();
  o = run_bench("ops --json " + folder);
  CHECK(o.status == 1);
  CHECK(topo::testing::contains(o.output, "it is a directory, not a file"));
  o = run_bench("ops --sizes 64,0");  // CLI11's PositiveNumber said "0 not in range 0.000000 to 1.79...e308"
  CHECK(o.status != 0);
  CHECK(topo::testing::contains(o.output, "--sizes: Value 0 not in range 1 to 9223372036854775807"));
  o = run_bench("ops --quick --threads 1 --only no_such_benchmark_name");
  CHECK(o.status == 1);
  CHECK(topo::testing::contains(o.output, "--only 'no_such_benchmark_name' matched no benchmark of suite ops"));
}
