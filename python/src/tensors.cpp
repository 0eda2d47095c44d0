#include "tensors.hpp"

#include <memory>
#include <string>
#include <vector>

namespace topo::py {

namespace {

std::string dlpack_dtype_name(const nb::dlpack::dtype& d) {
  const char* kind = d.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int)     ? "int"
                     : d.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt)  ? "uint"
                     : d.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float) ? "float"
                     : d.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Bool)  ? "bool"
                                                                                          : "dtype";
  return std::string(kind) + std::to_string(d.bits);
}

bool is(const nb::dlpack::dtype& d, nb::dlpack::dtype_code code, int bits) {
  return d.code == static_cast<std::uint8_t>(code) && d.bits == bits && d.lanes == 1;
}

}  // namespace

Device device_from(const std::string& type, int index) {
  if (type == "cpu") return Device::cpu();
  if (type == "cuda") {
    if (!built_with_cuda())
      throw std::runtime_error("a CUDA tensor was given, but this Topograph build has no CUDA backend "
                               "(configure the core with TOPO_CUDA=ON and reinstall the package)");
    const Device d = Device::cuda(index);
    require_available(d);  // topo::Error naming the device when the machine has none
    return d;
  }
  throw std::runtime_error("Topograph runs on cpu or cuda devices, not " + type);
}

Tensor borrow(const nb::ndarray<>& array, const char* what) {
  // The dtype: float32 features, int32/int64 ids; everything else is refused by name.
  const nb::dlpack::dtype d = array.dtype();
  DType dtype;
  if (is(d, nb::dlpack::dtype_code::Float, 32)) dtype = DType::F32;
  else if (is(d, nb::dlpack::dtype_code::Int, 32)) dtype = DType::I32;
  else if (is(d, nb::dlpack::dtype_code::Int, 64)) dtype = DType::I64;
  else throw nb::type_error((std::string(what) + ": Topograph takes float32, int32 or int64 tensors, got " +
                             dlpack_dtype_name(d)).c_str());

  Device device;
  if (array.device_type() == nb::device::cpu::value) device = Device::cpu();
  else if (array.device_type() == nb::device::cuda::value) device = device_from("cuda", array.device_id());
  else throw std::runtime_error(std::string(what) + ": tensors on DLPack device type " +
                                std::to_string(array.device_type()) + " are not supported (cpu or cuda only)");

  Shape shape(array.ndim());
  for (std::size_t i = 0; i < array.ndim(); ++i) shape[i] = static_cast<std::int64_t>(array.shape(i));
  const std::size_t bytes = static_cast<std::size_t>(shape_numel(shape)) * dtype_size(dtype);
  // An empty tensor needs no memory of its own (its data pointer and strides may be anything): a fresh one.
  if (bytes == 0) return Tensor::empty(shape, dtype, device);
  // C-contiguous: each dimension of size > 1 strides over the product of the dims after it (sizes 1 may
  // carry any stride, as torch gives them).
  if (array.stride_ptr() != nullptr) {
    std::int64_t expected = 1;
    for (int i = static_cast<int>(array.ndim()) - 1; i >= 0; --i) {
      if (shape[i] != 1 && array.stride(i) != expected)
        throw nb::value_error((std::string(what) + ": the tensor is not contiguous (shape " + shape_str(shape) +
                               "); call .contiguous() first").c_str());
      expected *= shape[i];
    }
  }
  // The Storage keeps a reference to the caller's array; dropping it may free a torch tensor, which needs
  // the GIL (held by every caller here, but the last view may go on another thread).
  auto holder = std::make_shared<nb::ndarray<>>(array);
  auto storage = std::make_shared<Storage>(array.data(), bytes, device, [holder = std::move(holder)]() mutable {
    nb::gil_scoped_acquire gil;
    holder.reset();
  });
  return Tensor::from_storage(std::move(storage), shape, dtype);
}

Tensor borrow_float(const nb::ndarray<>& array, const char* what) {
  if (!is(array.dtype(), nb::dlpack::dtype_code::Float, 32))
    throw nb::type_error((std::string(what) + ": Topograph's kernels take float32 features, got " +
                          dlpack_dtype_name(array.dtype())).c_str());
  return borrow(array, what);
}

Tensor borrow_ids(const nb::ndarray<>& array, const char* what) {
  const nb::dlpack::dtype d = array.dtype();
  if (!is(d, nb::dlpack::dtype_code::Int, 32) && !is(d, nb::dlpack::dtype_code::Int, 64))
    throw nb::type_error(
        (std::string(what) + ": node ids must be int32 or int64, got " + dlpack_dtype_name(d)).c_str());
  return borrow(array, what);
}

nb::object to_torch(const Tensor& t) {
  // The capsule owns a handle on the tensor (so on its Storage); torch's deleter drops it.
  auto* keep = new Tensor(t);
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  std::vector<std::size_t> shape(t.shape().begin(), t.shape().end());
  nb::dlpack::dtype dtype = t.dtype() == DType::F32   ? nb::dtype<float>()
                            : t.dtype() == DType::I32 ? nb::dtype<std::int32_t>()
                                                      : nb::dtype<std::int64_t>();
  const Device device = t.device();
  const int device_type = device.is_cpu() ? nb::device::cpu::value : nb::device::cuda::value;
  nb::ndarray<nb::pytorch> array(const_cast<void*>(t.raw_data()), shape.size(), shape.data(), owner, nullptr,
                                 dtype, device_type, device.is_cpu() ? 0 : device.index);
  return nb::cast(array, nb::rv_policy::automatic);
}

}  // namespace topo::py
