// A JSON config file (topo-train --config) on arbitrary bytes: parsed, applied over the defaults and
// validated. Malformed JSON, unknown keys, wrong types and invalid values must be topo::Errors naming the
// file or field; a config that validates must also pass the device and schedule checks Trainer::run does.
#include <cstdlib>

#include "apps/train/config.hpp"
#include "fuzz/fuzz_support.hpp"
#include "kernels/device.hpp"
#include "kernels/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace topo;
  try {
    apps::TrainConfig c;
    const std::string path = fuzz::memory_file(fuzz::as_text(data, size));
    apps::apply_config_json(c, apps::read_config_file(path), path);
    c.validate();
    (void)Device::parse(c.device);
    apps::TrainConfig back;  // what a checkpoint stores must read back (topo-eval, --resume)
    apps::apply_config_json(back, c.to_json(), "round trip");
    if (back.to_json() != c.to_json()) std::abort();
  } catch (const Error&) {
  }
  return 0;
}
