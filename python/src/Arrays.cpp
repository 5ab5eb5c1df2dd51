//===- Arrays.cpp - NumPy arrays <-> runtime tensors ----------------------===//
//
// See Arrays.h. NumPy describes memory in bytes (strides, item size) and
// nngraph in elements; the mapping between dtypes goes by NumPy's kind
// character and item size, so that every integer alias (intc, longlong)
// finds its nngraph type.
//
//===----------------------------------------------------------------------===//

#include "Arrays.h"

#include "nngraph/runtime/DTypeNames.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/Storage.h"

#include <optional>
#include <utility>
#include <vector>

namespace nng::python {
namespace {

/// The nngraph dtype of a native-order NumPy dtype, if there is one: the
/// one whose .npy descr ("<f4") has Kind and whose elements have ItemSize.
std::optional<DType> dtypeForNumpy(char Kind, ssize_t ItemSize) {
  for (int I = 0; I < NumDTypes; ++I) {
    DType T = static_cast<DType>(I);
    if (const char *D = numpyDescr(T);
        D && D[1] == Kind && dtypeSize(T) == static_cast<size_t>(ItemSize))
      return T;
  }
  return std::nullopt;
}

/// NumPy's dtype name of a numeric dtype other than bf16 (runtime's
/// table, which spells bool as the attribute numpy.bool_).
std::string numpyNameOf(DType T) {
  if (T == DType::Bool)
    return "bool";
  const char *N = numpyName(T);
  if (!N)
    fail(ErrorKind::Internal, "no NumPy dtype for ", dtypeName(T));
  return N;
}

py::module_ numpy() { return py::module_::import("numpy"); }

/// A str array's elements as a str tensor (a copy: nngraph interns them).
rt::Tensor stringTensor(const py::array &Arr) {
  std::vector<std::string> Values;
  for (py::handle H : Arr.attr("ravel")().attr("tolist")())
    Values.push_back(H.cast<std::string>());
  std::vector<int64_t> Dims(Arr.shape(), Arr.shape() + Arr.ndim());
  return rt::Tensor::fromStrings(Values, Shape(Dims));
}

/// Holds a Python object on behalf of a Storage; the object is released
/// with the GIL held, whichever thread drops the last reference.
std::shared_ptr<const void> keepAlive(py::object Obj) {
  return std::shared_ptr<const void>(
      new py::object(std::move(Obj)), [](const void *P) {
        py::gil_scoped_acquire Gil;
        delete static_cast<const py::object *>(P);
      });
}

} // namespace

std::string numpyDTypeName(DType T) {
  if (T == DType::BF16)
    return "bfloat16";
  if (T == DType::String)
    return "str";
  return numpyNameOf(T);
}

rt::Tensor tensorFromArray(py::handle Obj, const std::string &What) {
  py::array Arr = numpy().attr("asarray")(Obj);
  py::dtype Dt = Arr.dtype();
  char Kind = Dt.kind();
  if (Kind == 'U')
    return stringTensor(Arr);
  if (!Dt.attr("isnative").cast<bool>())
    Arr = Arr.attr("astype")(Dt.attr("newbyteorder")("="));
  std::optional<DType> T = dtypeForNumpy(Kind, Arr.itemsize());
  if (!T)
    fail(ErrorKind::InvalidArgument, What, " has the NumPy dtype ",
         py::str(Dt).cast<std::string>(),
         ", which nngraph has no element type for (it has float16/32/64, "
         "int8-64, uint8-64, bool and str); convert it first, e.g. "
         "a.astype(numpy.float32)");
  // Strides nngraph can express: non-negative multiples of the item size.
  ssize_t Item = Arr.itemsize();
  for (ssize_t I = 0; I < Arr.ndim(); ++I)
    if (Arr.shape(I) > 1 && (Arr.strides(I) < 0 || Arr.strides(I) % Item)) {
      Arr = numpy().attr("ascontiguousarray")(Arr);
      break;
    }
  std::vector<int64_t> Dims(Arr.shape(), Arr.shape() + Arr.ndim());
  Shape Sh(Dims);
  if (Sh.numel() == 0)
    return rt::Tensor::empty(Sh, *T);
  Strides St;
  size_t Span = static_cast<size_t>(Item); // Bytes from the first element.
  for (ssize_t I = 0; I < Arr.ndim(); ++I) {
    St.push_back(static_cast<int64_t>(Arr.strides(I) / Item));
    Span += static_cast<size_t>((Arr.shape(I) - 1) * Arr.strides(I));
  }
  void *Data = const_cast<void *>(Arr.data());
  auto Store = Storage::wrap(Data, Span, keepAlive(Arr));
  return rt::Tensor(std::move(Store), std::move(Sh), std::move(St), 0, *T);
}

py::array arrayFromTensor(const rt::Tensor &T, Sharing S) {
  NNG_CHECK_KIND(T.device().isCPU(), Unsupported, "a tensor on ",
                 T.device().toString(),
                 " cannot become a NumPy array; only CPU tensors can");
  if (T.dtype() == DType::String) {
    py::list Values;
    for (const std::string &V : T.toStrings())
      Values.append(py::str(V));
    py::tuple Dims(T.rank());
    for (size_t I = 0; I < T.rank(); ++I)
      Dims[I] = py::int_(T.shape()[I]);
    py::array A = numpy().attr("array")(Values, py::arg("dtype") = "str");
    return A.attr("reshape")(Dims);
  }
  if (T.dtype() == DType::BF16) // NumPy has no bfloat16: widen (exact).
    return arrayFromTensor(T.to(DType::F32), Sharing::Writable);
  py::dtype Dt(numpyNameOf(T.dtype()));
  std::vector<ssize_t> Dims, ByteStrides;
  for (int64_t D : T.shape().dims())
    Dims.push_back(static_cast<ssize_t>(D));
  for (int64_t St : T.strides())
    ByteStrides.push_back(static_cast<ssize_t>(St * T.elementSize()));
  if (T.numel() == 0)
    return py::array(Dt, Dims);
  auto *Keep = new rt::Tensor(T);
  py::capsule Base(Keep, [](void *P) { delete static_cast<rt::Tensor *>(P); });
  const void *Data = std::as_const(*Keep).rawData();
  py::array A(Dt, Dims, ByteStrides, Data, Base);
  if (S == Sharing::ReadOnly || !T.storage()->isWritable())
    A.attr("setflags")(py::arg("write") = false);
  return A;
}

weights::TensorMap tensorMapFromDict(py::handle Dict, const std::string &What) {
  if (!py::hasattr(Dict, "items"))
    fail(ErrorKind::InvalidArgument, What,
         " must be a dict of name -> array (e.g. a torch state_dict() or "
         "{'x': numpy.zeros(...)}), not ",
         py::str(py::type::handle_of(Dict).attr("__name__"))
             .cast<std::string>());
  weights::TensorMap M;
  for (py::handle Item : Dict.attr("items")()) {
    py::tuple KV = py::reinterpret_borrow<py::tuple>(Item);
    if (!py::isinstance<py::str>(KV[0]))
      fail(ErrorKind::InvalidArgument, What, ": the key ",
           py::repr(KV[0]).cast<std::string>(),
           " is not a str; keys are tensor names");
    std::string Key = KV[0].cast<std::string>();
    M.insert(Key, tensorFromArray(KV[1], What + " '" + Key + "'"));
  }
  return M;
}

py::dict dictFromTensorMap(const weights::TensorMap &M, Sharing S) {
  py::dict D;
  for (const auto &[Key, T] : M)
    D[py::str(Key)] = arrayFromTensor(T, S);
  return D;
}

} // namespace nng::python
