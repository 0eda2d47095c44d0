#pragma once
// Devices and CUDA discovery. Discovery fails soft: a binary built with CUDA that runs on a machine
// without a driver (cudaGetDeviceCount -> cudaErrorInsufficientDriver) sees zero devices and runs on the CPU.
#include <cstdint>
#include <string>

namespace topo {

enum class DeviceKind : std::uint8_t { CPU, CUDA };

struct Device {
  DeviceKind kind = DeviceKind::CPU;
  int index = 0;

  static Device cpu() { return {DeviceKind::CPU, 0}; }
  static Device cuda(int index = 0) { return {DeviceKind::CUDA, index}; }
  // "cpu", "cuda", "cuda:1"; throws topo::Error on anything else.
  static Device parse(const std::string& text);

  bool is_cpu() const { return kind == DeviceKind::CPU; }
  bool is_cuda() const { return kind == DeviceKind::CUDA; }
  std::string str() const;
  friend bool operator==(const Device&, const Device&) = default;
};

// True when this build has the CUDA backend compiled in.
constexpr bool built_with_cuda() { return TOPO_WITH_CUDA != 0; }
// Number of usable CUDA devices; 0 without a driver, without a device, or in a CPU-only build. Never throws.
int cuda_device_count();
inline bool cuda_available() { return cuda_device_count() > 0; }
// Throws topo::Error unless `device` can run work here (CPU always; CUDA when present).
void require_available(const Device& device);

}  // namespace topo
