//===- Tensor.h - A strided view of a Storage -------------------*- C++ -*-===//
//
// Tensor is data only: a Storage plus shape, strides, element offset, dtype
// and device. It has no math; views (reshape, permute, slice, broadcast) share
// the storage, contiguous() and clone() copy. Element access helpers exist for
// kernels and tests.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/runtime/DType.h"
#include "nngraph/runtime/Device.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/Shape.h"
#include "nngraph/runtime/Storage.h"

#include <memory>
#include <string>
#include <vector>

namespace nng::rt {

/// A strided view of typed memory. A default-constructed Tensor is undefined.
class Tensor {
public:
  Tensor() = default;
  /// A view of S; throws Error when the view would leave S's bytes.
  Tensor(std::shared_ptr<Storage> S, Shape Sh, Strides St, int64_t Offset,
         DType T);

  /// A new contiguous zero-filled tensor. Throws Error naming the shape when
  /// it is invalid (negative extent, overflow).
  static Tensor empty(const Shape &Sh, DType T, Device D = Device::cpu());
  /// A new tensor holding a copy of Values (row-major) with shape Sh.
  template <typename T>
  static Tensor fromVector(const std::vector<T> &Values, const Shape &Sh);
  /// A rank-0 tensor holding V.
  template <typename T> static Tensor scalar(T V) {
    return fromVector<T>({V}, Shape{});
  }
  /// A new str tensor holding Values (row-major, interned) with shape Sh.
  static Tensor fromStrings(const std::vector<std::string> &Values,
                            const Shape &Sh);
  /// A contiguous view of external memory kept alive by Owner (may be null
  /// when the caller guarantees the lifetime).
  static Tensor fromBlob(void *Data, const Shape &Sh, DType T,
                         std::shared_ptr<const void> Owner = nullptr);

  bool defined() const { return Store != nullptr; }
  DType dtype() const { return Type; }
  Device device() const { return Store ? Store->device() : Device::cpu(); }
  const Shape &shape() const { return Sh; }
  const Strides &strides() const { return St; }
  int64_t offset() const { return Offset; }
  size_t rank() const { return Sh.rank(); }
  /// Extent of axis I (negative counts from the end).
  int64_t size(int64_t I) const { return Sh.dim(I); }
  int64_t numel() const { return Sh.numel(); }
  size_t elementSize() const { return dtypeSize(Type); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * elementSize(); }
  bool isContiguous() const;
  const std::shared_ptr<Storage> &storage() const { return Store; }

  /// Pointer to the first element. The non-const overload bumps the
  /// storage's write version (Storage::version()); read through a const
  /// tensor to leave it alone.
  void *rawData();
  const void *rawData() const;
  /// Typed pointer to the first element; throws if T is not the dtype.
  template <typename T> T *data() {
    checkType(dtypeOf<T>());
    return static_cast<T *>(rawData());
  }
  template <typename T> const T *data() const {
    checkType(dtypeOf<T>());
    return static_cast<const T *>(rawData());
  }

  /// Element at a multi-index (honours strides), converted to double.
  double getDouble(const std::vector<int64_t> &Index) const;
  /// Element at flat row-major position I, converted to double.
  double getFlat(int64_t I) const;
  /// Element at flat row-major position I as int64.
  int64_t getFlatInt(int64_t I) const;
  /// Sets element at flat row-major position I (converting from double).
  void setFlat(int64_t I, double V);
  /// Every element, row-major, as int64 (for shape-like tensors).
  std::vector<int64_t> toIntVector() const;
  /// Every element, row-major, as double.
  std::vector<double> toDoubleVector() const;
  /// Every element of a str tensor, row-major; throws for other dtypes.
  std::vector<std::string> toStrings() const;

  /// A view with a new shape; the tensor must be contiguous. One extent may
  /// be -1 (inferred).
  Tensor reshape(const Shape &NewShape) const;
  /// A view with axes reordered.
  Tensor permute(const std::vector<int64_t> &Perm) const;
  /// A view of [Start, End) with Step along Axis (Step > 0).
  Tensor slice(int64_t Axis, int64_t Start, int64_t End, int64_t Step = 1) const;
  /// A view broadcast to Target (stride 0 on broadcast axes).
  Tensor broadcastTo(const Shape &Target) const;
  /// A contiguous tensor with the same values (self when already contiguous).
  Tensor contiguous() const;
  /// A contiguous deep copy.
  Tensor clone() const;
  /// A contiguous copy converted to T.
  Tensor to(DType T) const;
  /// Copies Src's values (same shape, any numeric dtypes, or both str) into
  /// this tensor.
  void copyFrom(const Tensor &Src);

  /// True when shapes, dtypes and every element are equal (NaN == NaN).
  bool equals(const Tensor &O) const;
  /// Short description: "f32[2, 3]" plus values when small (str elements
  /// quoted as numpy prints them: {'a', 'b'}).
  std::string toString(int64_t MaxElements = 16) const;

private:
  void checkType(DType T) const;
  std::shared_ptr<Storage> Store;
  Shape Sh;
  Strides St;
  int64_t Offset = 0;
  DType Type = DType::F32;
};

template <typename T>
Tensor Tensor::fromVector(const std::vector<T> &Values, const Shape &Sh) {
  NNG_CHECK(static_cast<int64_t>(Values.size()) == Sh.numel(),
            "Tensor::fromVector: ", Values.size(), " values for shape ",
            Sh.toString(), " which has ", Sh.numel(), " elements");
  Tensor R = empty(Sh, dtypeOf<T>());
  T *P = R.data<T>();
  for (size_t I = 0; I < Values.size(); ++I)
    P[I] = Values[I];
  return R;
}

} // namespace nng::rt
