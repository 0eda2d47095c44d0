#pragma once
// topo::Tensor: an N-d, contiguous, row-major block of float32/int32/int64 on one device.
// A tensor is a view (shape + element offset) onto shared Storage: copies of a Tensor share data;
// reshape and row slices are zero-copy. Autograd lives above this layer (nn::Var wraps a Tensor).
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "kernels/device.hpp"
#include "kernels/dtype.hpp"
#include "kernels/error.hpp"
#include "kernels/storage.hpp"

namespace topo {

using Shape = std::vector<std::int64_t>;

std::int64_t shape_numel(const Shape& shape);
// Dimension d of shape (negative d counts from the end); out of range is a topo::Error naming the shape.
std::int64_t shape_dim(const Shape& shape, int d);
std::string shape_str(const Shape& shape);  // "[2, 3]"

class Tensor {
 public:
  Tensor() = default;  // undefined: defined() is false

  // Uninitialised memory.
  static Tensor empty(const Shape& shape, DType dtype = DType::F32, Device device = Device::cpu());
  static Tensor zeros(const Shape& shape, DType dtype = DType::F32, Device device = Device::cpu());
  static Tensor full(const Shape& shape, float value, Device device = Device::cpu());
  // Copies host values; values.size() must equal the shape's element count.
  template <class T>
  static Tensor from_vector(const std::vector<T>& values, const Shape& shape, Device device = Device::cpu());
  // 0, 1, ..., n-1 as int64 (or float32/int32 per dtype).
  static Tensor arange(std::int64_t n, DType dtype = DType::I64, Device device = Device::cpu());
  // A view of `shape` onto existing storage (borrowed memory, Storage's second constructor): no copy.
  // The shape's bytes must fit in the storage.
  static Tensor from_storage(std::shared_ptr<Storage> storage, const Shape& shape, DType dtype);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  // Size of dimension `d`; negative d counts from the end. Throws on a bad dimension.
  std::int64_t size(int d) const;
  std::int64_t numel() const { return shape_numel(shape_); }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_ ? storage_->device() : Device::cpu(); }
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype_); }
  // Product of the dims after the first: the row length of a [rows, ...] tensor.
  std::int64_t row_numel() const;

  // Typed pointer to the first element; throws if T does not match dtype().
  template <class T> T* data();
  template <class T> const T* data() const;
  void* raw_data();
  const void* raw_data() const;

  // Copies to `device` (returns *this unchanged if already there).
  Tensor to(Device device) const;
  Tensor clone() const;
  // Zero-copy: same data, new shape (one dim may be -1). Throws when element counts differ.
  Tensor reshape(const Shape& shape) const;
  // Zero-copy rows [begin, end) along dim 0.
  Tensor slice_rows(std::int64_t begin, std::int64_t end) const;
  // Copies every element into a host vector (works for any device).
  template <class T> std::vector<T> to_vector() const;
  // Overwrites this tensor's elements with `src`'s (same shape and dtype; devices may differ).
  void copy_from(const Tensor& src);
  void zero_();
  // Value of a one-element tensor.
  float item() const;

  std::string str() const;  // "float32[2, 3] on cpu"
  bool shares_storage_with(const Tensor& other) const { return storage_ == other.storage_; }
  // Whether this is the only handle on its storage and spans all of it: nothing else can see a write through
  // it (autograd keeps such a gradient instead of copying it).
  // Borrowed storage is never private: its owner outside Topograph still sees it.
  bool sole_owner() const {
    return storage_ && storage_.use_count() == 1 && offset_ == 0 && nbytes() == storage_->bytes() &&
           !storage_->borrowed();
  }

 private:
  std::shared_ptr<Storage> storage_;
  std::int64_t offset_ = 0;  // in elements
  Shape shape_;
  DType dtype_ = DType::F32;
  void check_type(DType expected) const;
};

// Checks used at op boundaries; messages name both shapes/devices.
void check_same_device(const Tensor& a, const Tensor& b, const char* op);
void check_same_shape(const Tensor& a, const Tensor& b, const char* op);
void check_dtype(const Tensor& t, DType dtype, const char* op, const char* arg);

template <class T>
T* Tensor::data() {
  check_type(dtype_v<T>);
  return static_cast<T*>(raw_data());
}
template <class T>
const T* Tensor::data() const {
  check_type(dtype_v<T>);
  return static_cast<const T*>(raw_data());
}

}  // namespace topo
