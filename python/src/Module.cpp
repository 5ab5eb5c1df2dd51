//===- Module.cpp - The extension module nngraph._nngraph -----------------===//
//
// Defines the module: the exception type (nngraph.Error, a RuntimeError
// whose message is the C++ nng::Error's, what + where + what to do, and
// whose `kind` names the ErrorKind: "invalid argument", "I/O error", ...),
// the version, and the parts bound by the other files. The Python package
// (python/nngraph/__init__.py) re-exports all of it.
//
//===----------------------------------------------------------------------===//

#include "Arrays.h"
#include "Bindings.h"

#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/OpenMPStart.h"
#include "nngraph/tools/ToolSupport.h"

#include <cstdint>
#include <optional>
#include <utility>

namespace nng::python {

std::optional<std::string> asPath(py::handle Obj) {
  if (py::isinstance<py::str>(Obj))
    return Obj.cast<std::string>();
  if (!py::hasattr(Obj, "__fspath__"))
    return std::nullopt;
  py::object P = py::module_::import("os").attr("fspath")(Obj);
  if (!py::isinstance<py::str>(P))
    return std::nullopt;
  return P.cast<std::string>();
}

std::string pathArg(py::handle Obj, const std::string &What) {
  if (std::optional<std::string> P = asPath(Obj))
    return *P;
  fail(ErrorKind::InvalidArgument, What,
       " takes a file path (str or "
       "pathlib.Path), not ",
       py::str(py::type::handle_of(Obj).attr("__name__")).cast<std::string>());
}

namespace {

/// Makes nng::Error raise nngraph.Error(message) with `kind` set.
void bindErrors(py::module_ &M) {
  static py::exception<Error> Exc(M, "Error", PyExc_RuntimeError);
  Exc.doc() = "An error from nngraph: the message says what went wrong, "
              "where (file, node, key) and what to do; `kind` is one of "
              "'invalid argument', 'shape mismatch', 'parse error', "
              "'verification failed', 'unsupported', 'I/O error', "
              "'internal error'.";
  py::register_exception_translator([](std::exception_ptr P) {
    try {
      if (P)
        std::rethrow_exception(P);
    } catch (const Error &E) {
      py::object Type = Exc;
      py::object Inst = Type(py::str(E.what()));
      Inst.attr("kind") = py::str(errorKindName(E.kind()));
      PyErr_SetObject(Exc.ptr(), Inst.ptr());
    }
  });
}

} // namespace
} // namespace nng::python

PYBIND11_MODULE(_nngraph, M) {
  using namespace nng::python;
  M.doc() = "nngraph's C++ library (see the package nngraph).";
  M.attr("__version__") = std::string(nng::tools::toolsVersion());
  // The spin nngraph/__init__.py gives libgomp before it loads this module
  // (its tests check that the two agree).
  M.attr("_openmp_spin_default") = std::string(nng::OpenMPSpinDefault);
  bindErrors(M);
  bindModel(M);
  bindPasses(M);
  bindSession(M);
  bindWeights(M);
  // For the tests of zero-copy input: where the data of the tensor that an
  // array becomes lies (the array's own address when nothing was copied).
  M.def("_tensor_address", [](py::handle Array) {
    nng::rt::Tensor T = tensorFromArray(Array, "array");
    return reinterpret_cast<uintptr_t>(std::as_const(T).rawData());
  });
}
