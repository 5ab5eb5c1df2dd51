//===- OnnxTestUtils.h - Helpers for the ONNX frontend tests ----*- C++ -*-===//
//
// Building small ModelProtos by hand, temporary folders, and a structural
// comparison of two graphs (names, types, ops, attributes, initializer data)
// that says where they first differ.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <variant>
#include <vector>

namespace nng::test {
using rt::Tensor;

/// An empty model: ir_version Ir, default-domain opset Opset, graph "g".
inline onnx::ModelProto makeModel(int Opset = 17, int64_t Ir = 8) {
  onnx::ModelProto M;
  M.set_ir_version(Ir);
  M.set_producer_name("nngraph-test");
  auto *Imp = M.add_opset_import();
  Imp->set_domain("");
  Imp->set_version(Opset);
  M.mutable_graph()->set_name("g");
  return M;
}

/// A dim: a value, a dim_param name, or unset (std::monostate).
using TestDim = std::variant<std::monostate, int64_t, std::string>;

/// Fills a ValueInfoProto as a tensor of ElemType with Dims.
inline void setTensorType(onnx::ValueInfoProto &V, const std::string &Name,
                          int ElemType, const std::vector<TestDim> &Dims) {
  V.set_name(Name);
  auto *TT = V.mutable_type()->mutable_tensor_type();
  TT->set_elem_type(ElemType);
  auto *S = TT->mutable_shape();
  for (const TestDim &D : Dims) {
    auto *PD = S->add_dim();
    if (auto *I = std::get_if<int64_t>(&D))
      PD->set_dim_value(*I);
    else if (auto *P = std::get_if<std::string>(&D))
      PD->set_dim_param(*P);
  }
}

inline void addInput(onnx::ModelProto &M, const std::string &Name,
                     const std::vector<TestDim> &Dims, int ElemType = 1) {
  setTensorType(*M.mutable_graph()->add_input(), Name, ElemType, Dims);
}

inline void addOutput(onnx::ModelProto &M, const std::string &Name,
                      const std::vector<TestDim> &Dims, int ElemType = 1) {
  setTensorType(*M.mutable_graph()->add_output(), Name, ElemType, Dims);
}

inline onnx::NodeProto &addNode(onnx::ModelProto &M, const std::string &Op,
                                const std::vector<std::string> &Ins,
                                const std::vector<std::string> &Outs,
                                const std::string &Name = "") {
  onnx::NodeProto &N = *M.mutable_graph()->add_node();
  N.set_op_type(Op);
  N.set_name(Name);
  for (const std::string &I : Ins)
    N.add_input(I);
  for (const std::string &O : Outs)
    N.add_output(O);
  return N;
}

inline void addIntAttr(onnx::NodeProto &N, const std::string &Name, int64_t V) {
  auto *A = N.add_attribute();
  A->set_name(Name);
  A->set_type(onnx::AttributeProto::INT);
  A->set_i(V);
}

inline void addIntsAttr(onnx::NodeProto &N, const std::string &Name,
                        const std::vector<int64_t> &V) {
  auto *A = N.add_attribute();
  A->set_name(Name);
  A->set_type(onnx::AttributeProto::INTS);
  for (int64_t X : V)
    A->add_ints(X);
}

/// A float initializer with raw_data.
inline onnx::TensorProto &addFloatInit(onnx::ModelProto &M,
                                       const std::string &Name,
                                       const std::vector<int64_t> &Dims,
                                       const std::vector<float> &Vals) {
  onnx::TensorProto &T = *M.mutable_graph()->add_initializer();
  T.set_name(Name);
  T.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t D : Dims)
    T.add_dims(D);
  T.set_raw_data(Vals.data(), Vals.size() * sizeof(float));
  return T;
}

/// A fresh empty folder under the test temp dir.
inline std::filesystem::path freshDir(const std::string &Tag) {
  namespace fs = std::filesystem;
  const auto *Info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path P = fs::path(::testing::TempDir()) /
               ("nng-onnx-" + Tag + "-" +
                (Info ? std::string(Info->name()) : std::string("x")) + "-" +
                std::to_string(::getpid()));
  fs::remove_all(P);
  fs::create_directories(P);
  return P;
}

/// "" when A and B are the same graph (names, types, ops, attributes,
/// initializer data, outputs; regions compared the same way, their captures
/// and the implicit inputs as sets, since their order follows the order the
/// regions were read in), else where they first differ.
inline std::string graphDiff(const ir::Graph &A, const ir::Graph &B) {
  auto Names = [](const std::vector<ir::Value *> &Vs) {
    std::string S;
    for (const ir::Value *V : Vs)
      S += (V ? V->name() + ":" + V->type().toString() : "<null>") + " ";
    return S;
  };
  auto SortedNames = [](std::vector<ir::Value *> Vs) {
    std::vector<std::string> N;
    for (const ir::Value *V : Vs)
      N.push_back(V->name());
    std::sort(N.begin(), N.end());
    std::string S;
    for (const std::string &X : N)
      S += X + " ";
    return S;
  };
  if (SortedNames(A.captures()) != SortedNames(B.captures()))
    return "captures differ: " + SortedNames(A.captures()) + "vs " +
           SortedNames(B.captures());
  if (Names(A.inputs()) != Names(B.inputs()))
    return "inputs differ: " + Names(A.inputs()) + "vs " + Names(B.inputs());
  if (Names(A.initializers()) != Names(B.initializers()))
    return "initializers differ: " + Names(A.initializers()) + "vs " +
           Names(B.initializers());
  for (size_t I = 0; I < A.initializers().size(); ++I)
    if (!A.initializers()[I]->data().equals(B.initializers()[I]->data()))
      return "data of initializer '" + A.initializers()[I]->name() +
             "' differs";
  if (A.numNodes() != B.numNodes())
    return std::to_string(A.numNodes()) + " vs " +
           std::to_string(B.numNodes()) + " nodes";
  for (size_t I = 0; I < A.numNodes(); ++I) {
    const ir::Node &X = *A.nodes()[I], &Y = *B.nodes()[I];
    std::string Where = "node " + std::to_string(I) + " (" + X.describe() + ")";
    if (X.op() != Y.op() || X.name() != Y.name())
      return Where + ": op or name differs from " + Y.describe();
    auto Explicit = [](const ir::Node &N) {
      return std::vector<ir::Value *>(N.inputs().begin(),
                                      N.inputs().begin() +
                                          N.numExplicitInputs());
    };
    auto Implicit = [](const ir::Node &N) {
      return std::vector<ir::Value *>(
          N.inputs().begin() + N.numExplicitInputs(), N.inputs().end());
    };
    if (Names(Explicit(X)) != Names(Explicit(Y)))
      return Where + ": inputs " + Names(Explicit(X)) + "vs " +
             Names(Explicit(Y));
    if (SortedNames(Implicit(X)) != SortedNames(Implicit(Y)))
      return Where + ": implicit inputs " + SortedNames(Implicit(X)) + "vs " +
             SortedNames(Implicit(Y));
    if (Names(X.outputs()) != Names(Y.outputs()))
      return Where + ": outputs " + Names(X.outputs()) + "vs " +
             Names(Y.outputs());
    if (X.attrs().size() != Y.attrs().size())
      return Where + ": attributes differ";
    for (auto XI = X.attrs().begin(), YI = Y.attrs().begin();
         XI != X.attrs().end(); ++XI, ++YI) {
      if (XI->first != YI->first || XI->second.type() != YI->second.type())
        return Where + ": attributes differ";
      if (XI->second.type() != ir::AttrType::Graph) {
        if (!(XI->second == YI->second))
          return Where + ": attribute '" + XI->first + "' differs";
        continue;
      }
      std::string D = graphDiff(XI->second.g(), YI->second.g());
      if (!D.empty())
        return Where + ": region '" + XI->first + "': " + D;
    }
  }
  if (Names(A.outputs()) != Names(B.outputs()))
    return "outputs differ: " + Names(A.outputs()) + "vs " + Names(B.outputs());
  return "";
}

} // namespace nng::test
