// Checkpoint files on arbitrary bytes: the index alone (what tools read), then a full load into a small
// live model + Adam + generator. A truncated, corrupt or crafted file must be a topo::Error naming the file,
// never a read outside it. Seeds are real checkpoints: TOPO_FUZZ_WRITE_SEED=FILE writes one and exits
// (fuzz/run.sh does), so index mutations keep a valid payload checksum and reach the deeper checks.
#include <cstdlib>
#include <memory>

#include "fuzz/fuzz_support.hpp"
#include "kernels/error.hpp"
#include "nn/checkpoint.hpp"
#include "nn/layers.hpp"
#include "nn/optim.hpp"

namespace {

struct Model : topo::nn::Module {
  std::shared_ptr<topo::nn::Linear> fc1, fc2;
  Model() {
    fc1 = register_module("fc1", std::make_shared<topo::nn::Linear>(4, 3));
    fc2 = register_module("fc2", std::make_shared<topo::nn::Linear>(3, 2));
  }
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* seed = std::getenv("TOPO_FUZZ_WRITE_SEED")) {
    Model m;
    m.reset_parameters(7);
    topo::nn::Adam adam(m.parameters(), {});
    topo::nn::Generator g(11);
    g.advance(5);
    topo::nn::save_checkpoint(seed, m, &adam, &g, 42, {{"config", {{"task", "classify"}}}, {"epochs_done", 1}});
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace topo;
  const std::string& path = fuzz::memory_file(fuzz::as_text(data, size));
  try {
    (void)nn::read_checkpoint_index(path);
  } catch (const Error&) {
  }
  try {
    Model m;
    nn::Adam adam(m.parameters(), {});
    nn::Generator g;
    (void)nn::load_checkpoint(path, m, &adam, &g);
  } catch (const Error&) {
  }
  return 0;
}
