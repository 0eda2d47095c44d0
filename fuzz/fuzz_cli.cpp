// The command lines of topo-train and topo-eval on arbitrary bytes: the input's lines are the arguments
// (first byte even: topo-train, odd: topo-eval). Bad flags and values must be topo::Errors naming them.
// Arguments containing '/' are dropped, so --config and paths never reach the real file system.
#include <sstream>
#include <string>
#include <vector>

#include "apps/train/cli.hpp"
#include "apps/train/evaluate.hpp"
#include "fuzz/fuzz_support.hpp"
#include "kernels/device.hpp"
#include "kernels/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace topo;
  if (size == 0) return 0;
  const bool eval = (data[0] & 1) != 0;
  std::vector<std::string> args = {eval ? "topo-eval" : "topo-train"};
  std::string current;
  for (std::size_t i = 1; i <= size; ++i) {
    if (i == size || data[i] == '\n') {
      if (current.find('/') == std::string::npos) args.push_back(current);
      current.clear();
    } else {
      current.push_back(static_cast<char>(data[i]));
    }
  }
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream help;
  try {
    if (eval) {
      if (const auto o = apps::parse_eval_args(static_cast<int>(argv.size()), argv.data(), help))
        (void)Device::parse(o->device);
    } else {
      if (const auto c = apps::parse_train_args(static_cast<int>(argv.size()), argv.data(), help)) {
        c->validate();
        (void)Device::parse(c->device);
      }
    }
  } catch (const Error&) {
  }
  return 0;
}
