//===- Arrays.h - NumPy arrays <-> runtime tensors --------------*- C++ -*-===//
//
// The one place where data crosses between Python and nngraph. An array
// becomes a Tensor without a copy when its dtype is one nngraph has, in the
// machine's byte order, and its strides are non-negative multiples of the
// item size (the Tensor views the array's memory and keeps the array alive);
// anything else is copied once. A Tensor becomes an array viewing its
// storage (kept alive by the array's base object), read-only when the
// storage must not be written or is shared with a graph (initializers);
// bf16 has no NumPy dtype and is widened to
// float32, str tensors become NumPy str arrays (both copies).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/weights/TensorMap.h"
#include "nngraph/runtime/Tensor.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

namespace nng::python {

namespace py = pybind11;

/// Obj (a NumPy array, or anything numpy.asarray takes: lists, scalars,
/// torch tensors) as a CPU tensor; What names it in messages ("input 'x'").
/// Throws nng::Error for a dtype nngraph lacks (complex, object, ...).
rt::Tensor tensorFromArray(py::handle Obj, const std::string &What);

/// NumPy's name for T ("float32", ...; "bfloat16" and "str" for the two
/// that arrays hold converted).
std::string numpyDTypeName(DType T);

/// How arrayFromTensor may share the tensor's memory.
enum class Sharing {
  Writable, ///< The caller owns the tensor: the array may write to it.
  ReadOnly, ///< Shared with a graph: the array is read-only.
};

/// T as a NumPy array viewing T's storage (see the file comment for the
/// dtypes that are copied).
py::array arrayFromTensor(const rt::Tensor &T, Sharing S);

/// A Mapping of str -> array-like as a TensorMap, in the mapping's order;
/// What names it in messages. Throws nng::Error for a non-str key or a
/// value tensorFromArray refuses (naming the key).
weights::TensorMap tensorMapFromDict(py::handle Dict, const std::string &What);

/// M as a dict of arrays, in M's order.
py::dict dictFromTensorMap(const weights::TensorMap &M, Sharing S);

} // namespace nng::python
