#pragma once
// Tensors across the Python boundary, by DLPack through nanobind's ndarray (no libtorch: any torch that
// speaks DLPack works, 2.1 and newer).
//
// In: a caller's tensor becomes a topo::Tensor over the caller's own memory (a borrowed Storage that keeps
// the ndarray, and so the torch tensor, alive): no copy. It must already be C-contiguous, of the expected
// dtype and on a device this build runs; the Python layer makes a non-contiguous tensor contiguous first
// (that is the one copy, and only for such inputs).
// Out: a topo::Tensor that an op allocated is handed to torch as is: the DLPack capsule's owner holds the
// tensor (and so its Storage), torch frees it through the capsule's deleter. No copy either.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include "kernels/tensor.hpp"

namespace topo::py {

namespace nb = nanobind;

// `what` names the argument in errors. Raises TypeError (dtype), ValueError (layout) or RuntimeError
// (a device this build cannot run).
Tensor borrow(const nb::ndarray<>& array, const char* what);
// The same, checking the dtype (features: float32; ids: int32 or int64).
Tensor borrow_float(const nb::ndarray<>& array, const char* what);
Tensor borrow_ids(const nb::ndarray<>& array, const char* what);

// Wraps a Topograph tensor for torch without copying (the returned object is a torch.Tensor).
nb::object to_torch(const Tensor& t);

// The topo::Device of a torch device given as (type, index), e.g. ("cuda", 0); RuntimeError for a device
// this build or machine cannot run.
Device device_from(const std::string& type, int index);

}  // namespace topo::py
