#include "kernels/device.hpp"

#include <charconv>

#include "kernels/error.hpp"

#if TOPO_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace topo {

Device Device::parse(const std::string& text) {
  if (text == "cpu") return cpu();
  if (text == "cuda") return cuda(0);
  if (text.rfind("cuda:", 0) == 0) {
    const std::string number = text.substr(5);
    TOPO_CHECK(!number.empty() && number.find_first_not_of("0123456789") == std::string::npos,
               "bad device '{}': expected cpu, cuda or cuda:N", text);
    int index = 0;  // from_chars reports overflow (std::stoi threw std::out_of_range past the CLI's handler)
    const auto r = std::from_chars(number.data(), number.data() + number.size(), index);
    TOPO_CHECK(r.ec == std::errc() && r.ptr == number.data() + number.size(),
               "bad device '{}': the device number is out of range", text);
    return cuda(index);
  }
  fail("bad device '{}': expected cpu, cuda or cuda:N", text);
}

std::string Device::str() const {
  if (is_cpu()) return "cpu";
  return fmt::format("cuda:{}", index);
}

int cuda_device_count() {
#if TOPO_WITH_CUDA
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      (void)cudaGetLastError();  // clear the sticky "insufficient driver" state
      return 0;
    }
    return n;
  }();
  return count;
#else
  return 0;
#endif
}

void require_available(const Device& device) {
  if (device.is_cpu()) return;
  TOPO_CHECK(built_with_cuda(), "device {} requested but this build has no CUDA backend (configure with -DTOPO_CUDA=ON)",
             device.str());
  const int count = cuda_device_count();
  TOPO_CHECK(device.index >= 0 && device.index < count, "device {} requested but {} CUDA device(s) are available",
             device.str(), count);
}

}  // namespace topo
