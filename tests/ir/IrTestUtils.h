//===- IrTestUtils.h - Helpers for the IR unit tests ----------------------===//
//
// A fixture that builds small graphs (typed inputs, integer initializers,
// one node at a time) and runs an op's inference function on them, either
// statically (inferNodeTypes: constants known) or the way the reference
// backend does at run time (concrete tensors for every input).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nng::ir::test {

/// Parses a type ("f32[N,3]"); fails the test on bad text.
inline TensorType ty(std::string_view S) {
  auto T = TensorType::parse(S);
  EXPECT_TRUE(T.has_value()) << "bad type text " << S;
  return T ? *T : TensorType();
}

/// An AttrMap from {name, value} pairs.
inline AttrMap
attrs(std::initializer_list<std::pair<std::string, Attribute>> L) {
  AttrMap M;
  for (const auto &[K, V] : L)
    M.setByName(K, V);
  return M;
}

using Ints = std::vector<int64_t>;

/// Graph-building fixture.
class IrTest : public ::testing::Test {
protected:
  Graph G;
  int Counter = 0;

  Value *in(std::string_view Type) {
    return G.addInput("x" + std::to_string(Counter++), ty(Type));
  }
  /// A 1-D i64 initializer (a shape, axes, pads...).
  Value *ints(const Ints &V) {
    return G.addInitializer("c" + std::to_string(Counter++),
                            nng::rt::Tensor::fromVector<int64_t>(
                                V, Shape{static_cast<int64_t>(V.size())}));
  }
  /// A rank-0 initializer.
  template <typename T> Value *scalar(T V) {
    return G.addInitializer("s" + std::to_string(Counter++),
                            nng::rt::Tensor::scalar<T>(V));
  }
  Node *node(OpKind K, std::vector<Value *> Ins, AttrMap A = {},
             size_t NumOut = 1) {
    std::vector<std::string> Outs;
    for (size_t I = 0; I < NumOut; ++I)
      Outs.push_back("y" + std::to_string(Counter++));
    return G.addNode(K, std::move(Ins), Outs, std::move(A));
  }
  /// The inferred output types of a new node, as text.
  std::vector<std::string> inferAll(OpKind K, std::vector<Value *> Ins,
                                    AttrMap A = {}, size_t NumOut = 1) {
    Node *N = node(K, std::move(Ins), std::move(A), NumOut);
    std::vector<std::string> R;
    for (const TensorType &T : inferNodeTypes(*N))
      R.push_back(T.toString());
    return R;
  }
  std::string infer(OpKind K, std::vector<Value *> Ins, AttrMap A = {}) {
    return inferAll(K, std::move(Ins), std::move(A)).at(0);
  }
  /// The message of the ShapeMismatch error inference throws ("" if none).
  std::string inferError(OpKind K, std::vector<Value *> Ins, AttrMap A = {},
                         size_t NumOut = 1) {
    Node *N = node(K, std::move(Ins), std::move(A), NumOut);
    try {
      inferNodeTypes(*N);
    } catch (const Error &E) {
      EXPECT_EQ(E.kind(), ErrorKind::ShapeMismatch) << E.what();
      return E.what();
    }
    ADD_FAILURE() << "inference of " << N->describe() << " did not fail";
    return "";
  }
};

/// Runs K's inference the way the reference backend does at run time: every
/// input is a concrete tensor (undefined = absent).
inline std::vector<std::string>
inferConcrete(OpKind K, const std::vector<nng::rt::Tensor> &Inputs,
              const AttrMap &A = {}, size_t NumOut = 1) {
  std::vector<TensorType> Types;
  Types.reserve(Inputs.size());
  std::vector<const TensorType *> TypePtrs;
  std::vector<const nng::rt::Tensor *> Vals;
  for (const nng::rt::Tensor &T : Inputs)
    Types.push_back(T.defined() ? TensorType(T.dtype(), T.shape())
                                : TensorType());
  for (size_t I = 0; I < Inputs.size(); ++I) {
    TypePtrs.push_back(Inputs[I].defined() ? &Types[I] : nullptr);
    Vals.push_back(Inputs[I].defined() ? &Inputs[I] : nullptr);
  }
  InferContext C(getOpSchema(K), A, TypePtrs, Vals, NumOut, "test node");
  getOpSchema(K).Infer(C);
  std::vector<std::string> R;
  for (const TensorType &T : C.outputTypes())
    R.push_back(T.toString());
  return R;
}

/// A zero-filled f32 tensor of shape S.
inline nng::rt::Tensor zeros(const Shape &S, DType T = DType::F32) {
  return nng::rt::Tensor::empty(S, T);
}

/// A 1-D i64 tensor.
inline nng::rt::Tensor i64s(const Ints &V) {
  return nng::rt::Tensor::fromVector<int64_t>(
      V, Shape{static_cast<int64_t>(V.size())});
}

} // namespace nng::ir::test
