//===- RefTestUtils.h - Helpers for the reference kernel tests --*- C++ -*-===//
//
// OpTest builds a one-node graph (graph inputs, initializers, absent optional
// inputs, attributes), infers its types and runs it on the reference
// backend. Tensor makers (f32({...}, {2, 3})) and expectTensor (dtype, shape
// and values within a tolerance; NaN equals NaN) keep the tests short. Every
// op of the table must be built with OpTest(OpKind::X) in some test:
// OpCoverageTest checks that.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/ir/Graph.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/Tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace nng::reftest {

using ir::OpKind;
using rt::Tensor;

/// A one-node graph under construction, run on the reference backend.
class OpTest {
public:
  explicit OpTest(OpKind K) : Op(K) {
    const ir::OpSchema &S = ir::getOpSchema(K);
    NumOutputs = 0;
    for (const ir::OperandSchema &O : S.Outputs)
      NumOutputs += !O.Optional;
  }

  /// Adds a graph input fed with T when the graph runs.
  OpTest &in(Tensor T) {
    Operands.push_back({Kind::Input, std::move(T)});
    return *this;
  }
  /// Adds an initializer (a constant that inference can read).
  OpTest &constIn(Tensor T) {
    Operands.push_back({Kind::Const, std::move(T)});
    return *this;
  }
  /// Leaves an optional input out.
  OpTest &none() {
    Operands.push_back({Kind::Absent, Tensor()});
    return *this;
  }
  OpTest &attr(std::string Name, ir::Attribute A) {
    Attrs.setByName(std::move(Name), std::move(A));
    return *this;
  }
  /// Sets the number of outputs (default: the op's required outputs).
  OpTest &outputs(size_t N) {
    NumOutputs = N;
    return *this;
  }

  /// Builds, infers and runs the graph; returns every output.
  std::vector<Tensor> run() const {
    ir::Graph G;
    G.setName(std::string(ir::getOpSchema(Op).Name) + "_test");
    std::vector<ir::Value *> Ins;
    std::vector<Tensor> Feeds;
    for (size_t I = 0; I < Operands.size(); ++I) {
      const Operand &O = Operands[I];
      std::string Name = "in" + std::to_string(I);
      if (O.K == Kind::Absent) {
        Ins.push_back(nullptr);
      } else if (O.K == Kind::Const) {
        Ins.push_back(G.addInitializer(Name, O.T));
      } else {
        Ins.push_back(
            G.addInput(Name, ir::TensorType(O.T.dtype(), O.T.shape())));
        Feeds.push_back(O.T);
      }
    }
    std::vector<std::string> OutNames;
    for (size_t I = 0; I < NumOutputs; ++I)
      OutNames.push_back("out" + std::to_string(I));
    ir::Node *N = G.addNode(Op, Ins, OutNames, Attrs);
    for (ir::Value *V : N->outputs())
      G.addOutput(V);
    ir::inferTypes(G);
    return backends::runReference(G, Feeds);
  }
  /// Runs and returns output 0.
  Tensor run1() const { return run().at(0); }

private:
  enum class Kind { Input, Const, Absent };
  struct Operand {
    Kind K;
    Tensor T;
  };
  OpKind Op;
  std::vector<Operand> Operands;
  ir::AttrMap Attrs;
  size_t NumOutputs;
};

/// Tensor makers: f32({1, 2, 3, 4}, {2, 2}); the shape defaults to 1-D.
template <typename T>
inline Tensor make(std::vector<T> V, std::initializer_list<int64_t> S = {-1}) {
  Shape Sh = (S.size() == 1 && *S.begin() == -1)
                 ? Shape{static_cast<int64_t>(V.size())}
                 : Shape(S);
  return Tensor::fromVector(V, Sh);
}
inline Tensor f32(std::vector<float> V,
                  std::initializer_list<int64_t> S = {-1}) {
  return make(std::move(V), S);
}
inline Tensor f64(std::vector<double> V,
                  std::initializer_list<int64_t> S = {-1}) {
  return make(std::move(V), S);
}
inline Tensor i64(std::vector<int64_t> V,
                  std::initializer_list<int64_t> S = {-1}) {
  return make(std::move(V), S);
}
inline Tensor i32(std::vector<int32_t> V,
                  std::initializer_list<int64_t> S = {-1}) {
  return make(std::move(V), S);
}
inline Tensor u8(std::vector<uint8_t> V,
                 std::initializer_list<int64_t> S = {-1}) {
  return make(std::move(V), S);
}
inline Tensor i8(std::vector<int8_t> V,
                 std::initializer_list<int64_t> S = {-1}) {
  return make(std::move(V), S);
}
/// bool tensors (std::vector<bool> is packed, so take ints).
inline Tensor boolean(std::vector<int> V,
                      std::initializer_list<int64_t> S = {-1}) {
  std::vector<bool> B(V.begin(), V.end());
  Shape Sh = (S.size() == 1 && *S.begin() == -1)
                 ? Shape{static_cast<int64_t>(V.size())}
                 : Shape(S);
  Tensor T = Tensor::empty(Sh, DType::Bool);
  for (size_t I = 0; I < V.size(); ++I)
    T.data<bool>()[I] = V[I] != 0;
  return T;
}
/// A str tensor; shape {-1} means 1-D.
inline Tensor strs(std::vector<std::string> V,
                   std::initializer_list<int64_t> S = {-1}) {
  Shape Sh = (S.size() == 1 && *S.begin() == -1)
                 ? Shape{static_cast<int64_t>(V.size())}
                 : Shape(std::vector<int64_t>(S));
  return Tensor::fromStrings(V, Sh);
}
/// A tensor of shape S and dtype T holding 0, 1, 2, ... (row-major).
inline Tensor iota(Shape S, DType T = DType::F32, double Start = 0,
                   double Step = 1) {
  Tensor R = Tensor::empty(S, T);
  for (int64_t I = 0; I < R.numel(); ++I)
    R.setFlat(I, Start + Step * static_cast<double>(I));
  return R;
}

/// Checks dtype, shape and values (|got - want| <= Tol * max(1, |want|);
/// NaN matches NaN, infinities must match exactly; strings exactly).
inline ::testing::AssertionResult
tensorNear(const Tensor &Got, const Tensor &Want, double Tol = 1e-6) {
  if (!Got.defined())
    return ::testing::AssertionFailure() << "result is undefined";
  if (Got.dtype() != Want.dtype() || Got.shape() != Want.shape())
    return ::testing::AssertionFailure()
           << "got " << Got.toString() << ", want " << Want.toString();
  if (Want.dtype() == DType::String) { // Strings compare exactly.
    if (Got.toStrings() != Want.toStrings())
      return ::testing::AssertionFailure()
             << "got " << Got.toString(64) << ", want " << Want.toString(64);
    return ::testing::AssertionSuccess();
  }
  for (int64_t I = 0; I < Want.numel(); ++I) {
    double G = Got.getFlat(I), W = Want.getFlat(I);
    bool Ok = (std::isnan(G) && std::isnan(W)) || G == W ||
              (std::isfinite(W) &&
               std::fabs(G - W) <= Tol * std::max(1.0, std::fabs(W)));
    if (!Ok)
      return ::testing::AssertionFailure()
             << "element " << I << ": got " << G << ", want " << W
             << "\n  got  " << Got.toString(64) << "\n  want "
             << Want.toString(64);
  }
  return ::testing::AssertionSuccess();
}

/// Runs T and expects it to throw nng::Error whose text contains Needle.
inline ::testing::AssertionResult failsWith(const OpTest &T,
                                            const std::string &Needle) {
  try {
    T.run();
  } catch (const Error &E) {
    std::string What = E.what();
    if (What.find(Needle) != std::string::npos)
      return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "error '" << What << "' does not mention '" << Needle << "'";
  }
  return ::testing::AssertionFailure()
         << "no error (wanted '" << Needle << "')";
}

} // namespace nng::reftest

#define EXPECT_TENSOR(Got, Want)                                               \
  EXPECT_TRUE(::nng::reftest::tensorNear(Got, Want))
#define EXPECT_TENSOR_TOL(Got, Want, Tol)                                      \
  EXPECT_TRUE(::nng::reftest::tensorNear(Got, Want, Tol))
#define EXPECT_FAILS(Test, Needle)                                             \
  EXPECT_TRUE(::nng::reftest::failsWith(Test, Needle))
