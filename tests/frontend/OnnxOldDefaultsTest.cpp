//===- OnnxOldDefaultsTest.cpp - What real exporters write, imported -----===//
//
// Three things the model corpus (tests/corpus) found in files written by
// real exporters, each on a hand-built model: a Softmax before opset 13 on
// an input whose rank ONNX's shape inference cannot find (the version
// converter needs it), RoiAlign before opset 16 (its default sampling
// changed then), and If branches whose outputs are declared with an empty
// type (`type {}`).
//
//===----------------------------------------------------------------------===//

#include "OnnxTestUtils.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/frontend/onnx/OnnxImport.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace nng;
using namespace nng::test;
using frontend::importOnnxFromBytes;

namespace {

std::unique_ptr<ir::Graph> importModel(const onnx::ModelProto &M) {
  return importOnnxFromBytes(M.SerializeAsString(), "test.onnx");
}

const ir::Node *findOp(const ir::Graph &G, ir::OpKind K) {
  for (const auto &N : G.nodes())
    if (N->op() == K)
      return N.get();
  return nullptr;
}

} // namespace

TEST(OnnxOldDefaults, SoftmaxBeforeOpset13OfAnInputOfUnknownRank) {
  // y = Softmax(Reshape(x, s), axis=1) at opset 11, s an input: the
  // Reshape's rank is unknown to shape inference. Opset-11 Softmax works on
  // [2, 3*4] here, one softmax over 12 values per row.
  onnx::ModelProto M = makeModel(11, 6);
  addInput(M, "x", {int64_t(2), int64_t(3), int64_t(4)});
  addInput(M, "s", {std::monostate{}}, onnx::TensorProto::INT64);
  addNode(M, "Reshape", {"x", "s"}, {"r"}, "reshape");
  auto &S = addNode(M, "Softmax", {"r"}, {"y"}, "softmax");
  addIntAttr(S, "axis", 1);
  M.mutable_graph()->add_output()->set_name("y");
  M.mutable_graph()
      ->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->set_elem_type(onnx::TensorProto::FLOAT);
  auto G = importModel(M);
  std::vector<float> X(24);
  for (size_t I = 0; I < X.size(); ++I)
    X[I] = 0.1f * static_cast<float>(I % 7) - 0.2f * static_cast<float>(I / 12);
  auto Out = backends::runReference(
      *G, {Tensor::fromVector<float>(X, Shape{2, 3, 4}),
           Tensor::fromVector<int64_t>({2, 3, 4}, Shape{3})});
  ASSERT_EQ(Out[0].shape(), (Shape{2, 3, 4}));
  std::vector<double> Y = Out[0].toDoubleVector();
  for (int Row = 0; Row < 2; ++Row) {
    double Sum = 0;
    for (int I = 0; I < 12; ++I)
      Sum += std::exp(X[Row * 12 + I]);
    for (int I = 0; I < 12; ++I)
      EXPECT_NEAR(Y[Row * 12 + I], std::exp(X[Row * 12 + I]) / Sum, 1e-6)
          << "row " << Row << ", element " << I;
  }
}

TEST(OnnxOldDefaults, RoiAlignBeforeOpset16SamplesAtOutputHalfPixel) {
  for (int Opset : {11, 13, 16}) {
    SCOPED_TRACE("opset " + std::to_string(Opset));
    onnx::ModelProto M = makeModel(Opset, Opset < 13 ? 6 : 8);
    addInput(M, "x", {int64_t(1), int64_t(1), int64_t(4), int64_t(4)});
    addInput(M, "rois", {int64_t(1), int64_t(4)});
    addInput(M, "idx", {int64_t(1)}, onnx::TensorProto::INT64);
    addNode(M, "RoiAlign", {"x", "rois", "idx"}, {"y"}, "roi");
    addOutput(M, "y", {int64_t(1), int64_t(1), int64_t(1), int64_t(1)});
    auto G = importModel(M);
    const ir::Node *R = findOp(*G, ir::OpKind::RoiAlign);
    ASSERT_NE(R, nullptr);
    const ir::Attribute *A = R->attrs().find("coordinate_transformation_mode");
    if (Opset < 16) {
      ASSERT_NE(A, nullptr);
      EXPECT_EQ(A->s(), "output_half_pixel");
    } else {
      EXPECT_TRUE(A == nullptr || A->s() == "half_pixel");
    }
  }
}

TEST(OnnxOldDefaults, EmptyTypeOfAnIfBranchOutputIsInferred) {
  onnx::ModelProto M = makeModel();
  addInput(M, "c", {}, onnx::TensorProto::BOOL);
  addInput(M, "x", {int64_t(3)});
  auto &If = addNode(M, "If", {"c"}, {"y"}, "if");
  for (const char *Branch : {"then_branch", "else_branch"}) {
    auto *A = If.add_attribute();
    A->set_name(Branch);
    A->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto &B = *A->mutable_g();
    B.set_name(Branch);
    auto &N = *B.add_node();
    N.set_op_type(std::string(Branch) == "then_branch" ? "Relu" : "Neg");
    N.add_input("x");
    N.add_output(std::string(Branch) + "_out");
    auto &O = *B.add_output();
    O.set_name(std::string(Branch) + "_out");
    O.mutable_type(); // `type {}`: present, nothing set.
  }
  addOutput(M, "y", {int64_t(3)});
  auto G = importModel(M);
  auto Out = backends::runReference(
      *G, {Tensor::fromVector<bool>({false}, Shape{}),
           Tensor::fromVector<float>({1, -2, 3}, Shape{3})});
  EXPECT_EQ(Out[0].toDoubleVector(), (std::vector<double>{-1, 2, -3}));
}
