#include "kernels/tensor.hpp"

#include <cstring>
#include <limits>
#include <utility>

namespace topo {

std::int64_t shape_numel(const Shape& shape) {
  std::int64_t n = 1;
  // A product past int64 (a probe's max_len of 2^63 - 1 times the width) wrapped to a small count that was
  // allocated and then written past: a crash, where any other impossible size is an out-of-memory error.
  for (std::int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n))
      fail("out of host memory: shape {} has more elements than int64 counts", shape_str(shape));
  return n;
}

std::string shape_str(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  for (std::int64_t d : shape) TOPO_CHECK(d >= 0, "negative dimension in shape {}", shape_str(shape));
  const std::int64_t numel = shape_numel(shape), item = static_cast<std::int64_t>(dtype_size(dtype));
  TOPO_CHECK(numel <= std::numeric_limits<std::int64_t>::max() / item,
             "out of host memory: {} {} has more bytes than int64 counts", dtype_name(dtype), shape_str(shape));
  Tensor t;
  t.shape_ = shape;
  t.dtype_ = dtype;
  t.storage_ = std::make_shared<Storage>(static_cast<std::size_t>(numel * item), device);
  return t;
}

Tensor Tensor::from_storage(std::shared_ptr<Storage> storage, const Shape& shape, DType dtype) {
  for (std::int64_t d : shape) TOPO_CHECK(d >= 0, "negative dimension in shape {}", shape_str(shape));
  TOPO_CHECK(storage != nullptr, "from_storage: no storage for shape {}", shape_str(shape));
  const std::size_t bytes = static_cast<std::size_t>(shape_numel(shape)) * dtype_size(dtype);
  TOPO_CHECK(bytes <= storage->bytes(), "from_storage: {} {} needs {} bytes, the storage has {}", dtype_name(dtype),
             shape_str(shape), bytes, storage->bytes());
  Tensor t;
  t.shape_ = shape;
  t.dtype_ = dtype;
  t.storage_ = std::move(storage);
  return t;
}

Tensor Tensor::zeros(const Shape& shape, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  t.zero_();
  return t;
}

Tensor Tensor::full(const Shape& shape, float value, Device device) {
  std::vector<float> host(static_cast<std::size_t>(shape_numel(shape)), value);
  return from_vector(host, shape, device);
}

template <class T>
Tensor Tensor::from_vector(const std::vector<T>& values, const Shape& shape, Device device) {
  TOPO_CHECK(static_cast<std::int64_t>(values.size()) == shape_numel(shape),
             "from_vector: {} values do not fill shape {}", values.size(), shape_str(shape));
  Tensor t = empty(shape, dtype_v<T>, device);
  copy_bytes(t.raw_data(), device, values.data(), Device::cpu(), values.size() * sizeof(T));
  return t;
}
template Tensor Tensor::from_vector(const std::vector<float>&, const Shape&, Device);
template Tensor Tensor::from_vector(const std::vector<std::int32_t>&, const Shape&, Device);
template Tensor Tensor::from_vector(const std::vector<std::int64_t>&, const Shape&, Device);

Tensor Tensor::arange(std::int64_t n, DType dtype, Device device) {
  switch (dtype) {
    case DType::F32: {
      std::vector<float> v(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(i);
      return from_vector(v, {n}, device);
    }
    case DType::I32: {
      std::vector<std::int32_t> v(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) v[i] = static_cast<std::int32_t>(i);
      return from_vector(v, {n}, device);
    }
    case DType::I64: {
      std::vector<std::int64_t> v(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) v[i] = i;
      return from_vector(v, {n}, device);
    }
  }
  fail("arange: unknown dtype");
}

std::int64_t shape_dim(const Shape& shape, int d) {
  const int n = static_cast<int>(shape.size());
  TOPO_CHECK(d >= -n && d < n, "dimension {} out of range for shape {}", d, shape_str(shape));
  return shape[static_cast<std::size_t>(d < 0 ? d + n : d)];
}

std::int64_t Tensor::size(int d) const { return shape_dim(shape_, d); }

std::int64_t Tensor::row_numel() const {
  std::int64_t n = 1;
  for (std::size_t i = 1; i < shape_.size(); ++i) n *= shape_[i];
  return n;
}

void* Tensor::raw_data() {
  TOPO_CHECK(defined(), "access to an undefined tensor");
  return static_cast<char*>(storage_->data()) + offset_ * static_cast<std::int64_t>(dtype_size(dtype_));
}
const void* Tensor::raw_data() const { return const_cast<Tensor*>(this)->raw_data(); }

void Tensor::check_type(DType expected) const {
  TOPO_CHECK(dtype_ == expected, "tensor {} accessed as {}", str(), dtype_name(expected));
}

Tensor Tensor::to(Device device) const {
  TOPO_CHECK(defined(), "to({}): undefined tensor", device.str());
  if (this->device() == device) return *this;
  Tensor t = empty(shape_, dtype_, device);
  copy_bytes(t.raw_data(), device, raw_data(), this->device(), nbytes());
  return t;
}

Tensor Tensor::clone() const {
  Tensor t = empty(shape_, dtype_, device());
  copy_bytes(t.raw_data(), device(), raw_data(), device(), nbytes());
  return t;
}

Tensor Tensor::reshape(const Shape& shape) const {
  Shape out = shape;
  int inferred = -1;
  std::int64_t known = 1;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      TOPO_CHECK(inferred < 0, "reshape {} -> {}: more than one -1", shape_str(shape_), shape_str(shape));
      inferred = static_cast<int>(i);
    } else {
      TOPO_CHECK(out[i] >= 0, "reshape {} -> {}: negative dimension", shape_str(shape_), shape_str(shape));
      known *= out[i];
    }
  }
  if (inferred >= 0) {
    TOPO_CHECK(known != 0 && numel() % known == 0, "reshape {} -> {}: cannot infer -1", shape_str(shape_),
               shape_str(shape));
    out[inferred] = numel() / known;
  }
  TOPO_CHECK(shape_numel(out) == numel(), "reshape {} -> {}: element counts differ ({} vs {})", shape_str(shape_),
             shape_str(shape), numel(), shape_numel(out));
  Tensor t = *this;
  t.shape_ = out;
  return t;
}

Tensor Tensor::slice_rows(std::int64_t begin, std::int64_t end) const {
  TOPO_CHECK(ndim() >= 1, "slice_rows on a 0-d tensor");
  TOPO_CHECK(0 <= begin && begin <= end && end <= shape_[0], "slice_rows [{}, {}) out of range for shape {}", begin,
             end, shape_str(shape_));
  Tensor t = *this;
  t.shape_[0] = end - begin;
  t.offset_ = offset_ + begin * row_numel();
  return t;
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  check_type(dtype_v<T>);
  std::vector<T> out(static_cast<std::size_t>(numel()));
  copy_bytes(out.data(), Device::cpu(), raw_data(), device(), nbytes());
  return out;
}
template std::vector<float> Tensor::to_vector() const;
template std::vector<std::int32_t> Tensor::to_vector() const;
template std::vector<std::int64_t> Tensor::to_vector() const;

void Tensor::copy_from(const Tensor& src) {
  TOPO_CHECK(shape_ == src.shape_ && dtype_ == src.dtype_, "copy_from: {} into {}", src.str(), str());
  copy_bytes(raw_data(), device(), src.raw_data(), src.device(), nbytes());
}

void Tensor::zero_() { zero_bytes(raw_data(), device(), nbytes()); }

float Tensor::item() const {
  TOPO_CHECK(numel() == 1, "item() on {} (needs exactly one element)", str());
  switch (dtype_) {
    case DType::F32: return to_vector<float>()[0];
    case DType::I32: return static_cast<float>(to_vector<std::int32_t>()[0]);
    case DType::I64: return static_cast<float>(to_vector<std::int64_t>()[0]);
  }
  return 0;
}

std::string Tensor::str() const {
  if (!defined()) return "undefined tensor";
  return fmt::format("{}{} on {}", dtype_name(dtype_), shape_str(shape_), device().str());
}

void check_same_device(const Tensor& a, const Tensor& b, const char* op) {
  TOPO_CHECK(a.device() == b.device(), "{}: tensors on different devices: {} and {}", op, a.str(), b.str());
}
void check_same_shape(const Tensor& a, const Tensor& b, const char* op) {
  TOPO_CHECK(a.shape() == b.shape(), "{}: shapes differ: {} and {}", op, shape_str(a.shape()), shape_str(b.shape()));
}
void check_dtype(const Tensor& t, DType dtype, const char* op, const char* arg) {
  TOPO_CHECK(t.dtype() == dtype, "{}: {} must be {}, got {}", op, arg, dtype_name(dtype), t.str());
}

}  // namespace topo
