// topograph._C: the compiled half of the Python package. It links the installed Topograph libraries
// (find_package(Topograph)); it compiles no kernel of its own.
#include <nanobind/nanobind.h>

#include "bindings.hpp"
#include "kernels/device.hpp"
#include "kernels/error.hpp"
#include "kernels/threads.hpp"
#include "tensors.hpp"

namespace nb = nanobind;

namespace {
// The Python class topo::Error becomes: ValueError until the package hands over topograph.DGLError (a
// ValueError subclass) at import. A strong reference, kept for the interpreter's life.
PyObject* user_error = PyExc_ValueError;
}  // namespace

NB_MODULE(_C, m) {
  // Tapes still referenced at interpreter exit (an autograd graph kept in a global) are not collected before
  // the module goes: nothing leaks while the program runs (tests/test_zero_copy.py), so no exit report.
  nb::set_leak_warnings(false);
  m.doc() = "Topograph's graph store and sparse kernels (the C++ core), for topograph's Python API";
  // topo::Error is bad user input (ids, shapes, types, devices) by definition: DGLError with its message, as
  // DGL raises DGLError for the same mistakes (a node id out of range, an unknown edge type), so scripts that
  // catch dgl.DGLError catch these; still a ValueError for code that catches that.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const topo::Error& e) {
      PyErr_SetString(user_error, e.what());
    }
  });
  m.def("_set_user_error", [](nb::handle cls) {
    if (!PyType_Check(cls.ptr()) || !PyObject_IsSubclass(cls.ptr(), PyExc_ValueError))
      throw nb::type_error("_set_user_error: expected a subclass of ValueError");
    user_error = nb::borrow(cls).release().ptr();
  });
  m.attr("built_with_cuda") = topo::built_with_cuda();
  m.def("cuda_device_count", &topo::cuda_device_count);
  m.def("set_num_threads", &topo::set_num_threads, nb::arg("threads"));
  m.def("num_threads", &topo::num_threads);
  // The tensor a kernel would see, handed back to torch: for tests of the zero-copy path (same address,
  // writes visible both ways).
  m.def("_roundtrip", [](const nb::ndarray<>& a) { return topo::py::to_torch(topo::py::borrow(a, "_roundtrip")); });
  topo::py::bind_graph(m);
  topo::py::bind_ops(m);
  topo::py::bind_topology(m);
}
