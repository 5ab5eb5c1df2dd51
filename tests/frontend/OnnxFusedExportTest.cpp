//===- OnnxFusedExportTest.cpp - Exporting nng.FusedConv / FusedGemm -----===//
//
// The fused ops expand on export into Conv / Gemm followed by the
// activation's standard op (Clip bounds as constants, GELU as its Erf or
// Tanh chain, HardSwish as HardSigmoid * x below opset 14; nng.Attention
// as MatMul, Mul, Add, Softmax, MatMul): for every
// activation of the FusedActivation table, the exported model passes ONNX's
// checker and strict shape inference, contains no nng op once imported
// again, keeps the initializer, node and output names, and computes what
// the fused graph computes on the reference backend.
//
//===----------------------------------------------------------------------===//

#include "OnnxTestUtils.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/frontend/onnx/OnnxExport.h"
#include "nngraph/frontend/onnx/OnnxImport.h"
#include "nngraph/ir/FusedActivation.h"
#include "nngraph/ir/Parser.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace nng;
using nng::rt::Tensor;
using ir::Dim;
using ir::OpKind;

namespace {

Tensor wave(const Shape &S, double Phase, double Amp = 1.5) {
  Tensor T = Tensor::empty(S, DType::F32);
  for (int64_t I = 0; I < T.numel(); ++I)
    T.setFlat(I, Amp * std::sin(0.37 * static_cast<double>(I) + Phase));
  return T;
}

ir::AttrMap activationAttrs(const std::string &Name,
                            const std::vector<float> &Params) {
  ir::AttrMap A;
  A.set("activation", ir::Attribute(Name));
  if (!Params.empty())
    A.set("activation_params", ir::Attribute(Params));
  return A;
}

/// y = nng.FusedConv(x, conv.weight, conv.bias) with a grouped, padded conv.
std::unique_ptr<ir::Graph> fusedConvGraph(const std::string &Act,
                                          const std::vector<float> &Params) {
  auto G = std::make_unique<ir::Graph>();
  G->setName("fused_conv");
  ir::Value *X =
      G->addInput("x", ir::TensorType(DType::F32, {Dim::symbol("N"), 4, 5, 5}));
  ir::Value *W = G->addInitializer("conv.weight", wave({6, 2, 3, 3}, 0.3, 0.6));
  ir::Value *B = G->addInitializer("conv.bias", wave({6}, 1.1));
  ir::AttrMap A = activationAttrs(Act, Params);
  A.set("group", ir::Attribute(int64_t(2)));
  A.set("pads", ir::Attribute(std::vector<int64_t>{1, 1, 1, 1}));
  ir::Node *N = G->addNode(OpKind::FusedConv, {X, W, B}, {"y"}, A);
  N->setName("conv1");
  G->setOutputs({N->output()});
  ir::inferTypes(*G);
  return G;
}

/// y = nng.FusedGemm(x, fc.weight, fc.bias) {transB = 1, alpha, beta}.
std::unique_ptr<ir::Graph> fusedGemmGraph(const std::string &Act,
                                          const std::vector<float> &Params) {
  auto G = std::make_unique<ir::Graph>();
  G->setName("fused_gemm");
  ir::Value *X =
      G->addInput("x", ir::TensorType(DType::F32, {Dim::symbol("N"), 5}));
  ir::Value *W = G->addInitializer("fc.weight", wave({3, 5}, 0.2));
  ir::Value *B = G->addInitializer("fc.bias", wave({3}, 0.9));
  ir::AttrMap A = activationAttrs(Act, Params);
  A.set("transB", ir::Attribute(int64_t(1)));
  A.set("alpha", ir::Attribute(0.75f));
  A.set("beta", ir::Attribute(1.25f));
  ir::Node *N = G->addNode(OpKind::FusedGemm, {X, W, B}, {"y"}, A);
  N->setName("fc");
  G->setOutputs({N->output()});
  ir::inferTypes(*G);
  return G;
}

bool hasNngOp(const ir::Graph &G) {
  for (const auto &N : G.nodes())
    if (N->schema().Domain == "nng")
      return true;
  return false;
}

bool hasOp(const ir::Graph &G, OpKind K) {
  for (const auto &N : G.nodes())
    if (N->op() == K)
      return true;
  return false;
}

/// Exports G at Opset (checked), imports it back and compares both on X.
std::unique_ptr<ir::Graph> roundTrip(const ir::Graph &G, int Opset,
                                     const Tensor &X) {
  frontend::OnnxExportOptions O;
  O.Opset = Opset;
  O.Check = true;
  std::string Bytes = frontend::exportOnnxToBytes(G, O);
  EXPECT_NO_THROW(frontend::checkOnnxModelBytes(Bytes, "fused"));
  auto Back = frontend::importOnnxFromBytes(Bytes, "fused.onnx");
  EXPECT_FALSE(hasNngOp(*Back));
  EXPECT_EQ(Back->outputs()[0]->name(), "y");
  Tensor Want = backends::runReference(G, {X})[0];
  Tensor Got = backends::runReference(*Back, {X})[0];
  EXPECT_EQ(Got.shape(), Want.shape());
  for (int64_t I = 0; I < Want.numel() && Got.shape() == Want.shape(); ++I)
    EXPECT_NEAR(Got.getFlat(I), Want.getFlat(I),
                1e-5 * std::max(1.0, std::fabs(Want.getFlat(I))))
        << "at " << I;
  return Back;
}

struct ActCase {
  std::string Name;
  std::vector<float> Params;
};

std::vector<ActCase> cases() {
  std::vector<ActCase> C;
  for (const ir::FusedActivationInfo &A : ir::fusedActivations())
    C.push_back({std::string(A.Name), {}});
  C.push_back({"LeakyRelu", {0.25f}});
  C.push_back({"Clip", {0.0f, 6.0f}});
  C.push_back({"Clip", {-0.5f}});
  C.push_back({"HardSigmoid", {0.3f, 0.4f}});
  C.push_back({"Elu", {0.5f}});
  return C;
}

} // namespace

TEST(OnnxFusedExport, FusedConvEveryActivation) {
  Tensor X = wave({2, 4, 5, 5}, 0.0, 2.0);
  for (const ActCase &C : cases()) {
    SCOPED_TRACE(C.Name);
    auto G = fusedConvGraph(C.Name, C.Params);
    auto Back = roundTrip(*G, 17, X);
    ASSERT_TRUE(Back->lookup("y"));
    EXPECT_NE(Back->lookup("conv.weight"), nullptr);
    bool FoundConv = false;
    for (const auto &N : Back->nodes())
      if (N->op() == OpKind::Conv) {
        FoundConv = true;
        EXPECT_EQ(N->name(), "conv1");
        EXPECT_EQ(N->attrInt("group"), 2);
      }
    EXPECT_TRUE(FoundConv);
  }
}

TEST(OnnxFusedExport, FusedGemmEveryActivation) {
  Tensor X = wave({3, 5}, 0.5, 2.0);
  for (const ActCase &C : cases()) {
    SCOPED_TRACE(C.Name);
    auto G = fusedGemmGraph(C.Name, C.Params);
    auto Back = roundTrip(*G, 17, X);
    EXPECT_TRUE(hasOp(*Back, OpKind::Gemm));
    EXPECT_NE(Back->lookup("fc.bias"), nullptr);
  }
}

TEST(OnnxFusedExport, ActivationsTakeTheirStandardForms) {
  Tensor X = wave({1, 4, 5, 5}, 0.1, 2.0);
  auto Clip = roundTrip(*fusedConvGraph("Clip", {-0.5f}), 17, X);
  for (const auto &N : Clip->nodes())
    if (N->op() == OpKind::Clip)
      EXPECT_EQ(N->numInputs(), 2u); // No max: the bound is infinite.
  auto Gelu = roundTrip(*fusedConvGraph("Gelu", {}), 17, X);
  EXPECT_TRUE(hasOp(*Gelu, OpKind::Erf));
  auto GeluTanh = roundTrip(*fusedConvGraph("GeluTanh", {}), 17, X);
  EXPECT_TRUE(hasOp(*GeluTanh, OpKind::Tanh));
  // Below opset 14, HardSwish is HardSigmoid * x.
  auto HS13 = roundTrip(*fusedConvGraph("HardSwish", {}), 13, X);
  EXPECT_TRUE(hasOp(*HS13, OpKind::HardSigmoid));
  EXPECT_FALSE(hasOp(*HS13, OpKind::HardSwish));
  auto HS17 = roundTrip(*fusedConvGraph("HardSwish", {}), 17, X);
  EXPECT_TRUE(hasOp(*HS17, OpKind::HardSwish));
}

TEST(OnnxFusedExport, EveryOpsetFrom13To17) {
  Tensor X = wave({2, 5}, 0.3);
  for (int Opset = 13; Opset <= 17; ++Opset) {
    SCOPED_TRACE(Opset);
    roundTrip(*fusedGemmGraph("LeakyRelu", {0.1f}), Opset, X);
  }
}

TEST(OnnxFusedExport, BadActivationIsRefusedNamingTheNode) {
  auto G = fusedGemmGraph("Relu", {});
  // Bypass inference: set an unknown activation after the fact.
  ir::Node *N = G->nodes()[0].get();
  N->setAttr("activation", ir::Attribute("Swish"));
  try {
    frontend::exportOnnxToBytes(*G);
    FAIL() << "no error";
  } catch (const Error &E) {
    std::string What = E.what();
    EXPECT_NE(What.find("Swish"), std::string::npos) << What;
  }
}

namespace {

TEST(OnnxFusedExport, FusedRegionsExportAsTheirBodies) {
  // y = LayerNormalization(x + r) with scale; z = Softmax(x / 2): two
  // regions written back as their nodes, keeping names and results.
  auto G = ir::parseGraph(R"(graph "regions" {
    input %x: f32[N,3,8]
    init %r: f32[8] = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
    init %g: f32[8] = [1.0, 0.5, 1.5, 1.0, 0.5, 1.5, 1.0, 0.5]
    %y: f32[N,3,8] = nng.FusedRegion(%x, %r, %g) {body = "graph { input %x: f32[N,3,8] input %r: f32[8] input %g: f32[8] %a: f32[N,3,8] = Add(%x, %r) %y: f32[N,3,8] = LayerNormalization(%a, %g) {axis = -1, epsilon = 1e-05} output %y }"}
    %z: f32[N,3,8] = nng.FusedRegion(%x) {body = "graph { input %x: f32[N,3,8] init %two: f32[] = [2.0] %p: f32[N,3,8] = Div(%x, %two) %z: f32[N,3,8] = Softmax(%p) {axis = -1} output %z }"}
    output %y, %z
  })");
  frontend::OnnxExportOptions O;
  O.Check = true;
  std::string Bytes = frontend::exportOnnxToBytes(*G, O);
  auto Back = frontend::importOnnxFromBytes(Bytes, "regions.onnx");
  EXPECT_FALSE(hasNngOp(*Back));
  EXPECT_TRUE(hasOp(*Back, OpKind::LayerNormalization));
  EXPECT_TRUE(hasOp(*Back, OpKind::Softmax));
  ASSERT_EQ(Back->outputs().size(), 2u);
  EXPECT_EQ(Back->outputs()[0]->name(), "y");
  EXPECT_EQ(Back->outputs()[1]->name(), "z");
  Tensor X = wave({2, 3, 8}, 0.4, 2.0);
  std::vector<Tensor> Want = backends::runReference(*G, {X});
  std::vector<Tensor> Got = backends::runReference(*Back, {X});
  for (size_t I = 0; I < 2; ++I)
    for (int64_t E = 0; E < Want[I].numel(); ++E)
      EXPECT_NEAR(Got[I].getFlat(E), Want[I].getFlat(E), 1e-6) << I << " " << E;
}

} // namespace

namespace {

TEST(OnnxFusedExport, AttentionExportsAsItsUnfusedOps) {
  // K as [.., N, D] (a Transpose is written) with a mask, and K given
  // transposed (none): MatMul, Mul, Add, Softmax, MatMul come back, keeping
  // the result's name, and compute what nng.Attention does.
  auto G = ir::parseGraph(R"(graph "attention" {
    input %x: f32[2,3,4]
    init %m: f32[3,3] = [0.0, -1.0, -2.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0]
    %kt: f32[2,4,3] = Transpose(%x) {perm = [0, 2, 1]}
    %y: f32[2,3,4] = nng.Attention(%x, %x, %x, %m) {scale = 0.5}
    %z: f32[2,3,4] = nng.Attention(%x, %kt, %x) {k_transposed = 1, scale = 0.25}
    output %y, %z
  })");
  frontend::OnnxExportOptions O;
  O.Check = true;
  std::string Bytes = frontend::exportOnnxToBytes(*G, O);
  EXPECT_NO_THROW(frontend::checkOnnxModelBytes(Bytes, "attention"));
  auto Back = frontend::importOnnxFromBytes(Bytes, "attention.onnx");
  EXPECT_FALSE(hasNngOp(*Back));
  EXPECT_TRUE(hasOp(*Back, OpKind::Softmax));
  ASSERT_EQ(Back->outputs().size(), 2u);
  EXPECT_EQ(Back->outputs()[0]->name(), "y");
  EXPECT_EQ(Back->outputs()[1]->name(), "z");
  Tensor X = wave({2, 3, 4}, 0.3, 1.5);
  std::vector<Tensor> Want = backends::runReference(*G, {X});
  std::vector<Tensor> Got = backends::runReference(*Back, {X});
  for (size_t I = 0; I < 2; ++I)
    for (int64_t E = 0; E < Want[I].numel(); ++E)
      EXPECT_NEAR(Got[I].getFlat(E), Want[I].getFlat(E), 1e-6) << I << " " << E;
}

} // namespace
