//===- OnnxExportTest.cpp - ONNX export ----------------------------------===//
//
// Export of hand-built graphs: ONNX's checker and strict shape inference
// accept every result; nng.Gelu expands into standard ops that compute the
// same values; initializer names and symbolic dims survive; opsets 13-17
// are selectable, with ops newer than the target downgraded or refused;
// large weights go to an external-data side file (tested with the size
// limit lowered).
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/onnx/OnnxExport.h"
#include "OnnxTestUtils.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/frontend/onnx/OnnxImport.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>

using namespace nng;
using namespace nng::test;
using ir::Dim;
using ir::OpKind;

namespace {

ir::TensorType f32(std::vector<Dim> D) {
  return ir::TensorType(DType::F32, std::move(D));
}

Tensor ramp(const Shape &S, double Scale = 0.37) {
  Tensor T = Tensor::empty(S, DType::F32);
  for (int64_t I = 0; I < T.numel(); ++I)
    T.setFlat(I, std::sin(static_cast<double>(I) * Scale) * 3);
  return T;
}

/// y = Op(x) for x: f32[N,8] (Op unary, with Attrs).
std::unique_ptr<ir::Graph> unaryGraph(OpKind Op, ir::AttrMap Attrs = {}) {
  auto G = std::make_unique<ir::Graph>();
  G->setName("unary");
  ir::Value *X = G->addInput("x", f32({Dim::symbol("N"), Dim(8)}));
  ir::Node *N = G->addNode(Op, {X}, {"y"}, std::move(Attrs));
  N->setName("op0");
  G->setOutputs({N->output()});
  ir::inferTypes(*G);
  return G;
}

onnx::ModelProto parse(const std::string &Bytes) {
  onnx::ModelProto M;
  EXPECT_TRUE(M.ParseFromString(Bytes));
  return M;
}

bool hasOp(const ir::Graph &G, OpKind K) {
  for (const auto &N : G.nodes())
    if (N->op() == K)
      return true;
  return false;
}

void expectClose(const Tensor &A, const Tensor &B, double Tol) {
  ASSERT_EQ(A.shape(), B.shape());
  for (int64_t I = 0; I < A.numel(); ++I)
    EXPECT_NEAR(A.getFlat(I), B.getFlat(I), Tol) << "at " << I;
}

/// Exports G at Opset (checked by ONNX), re-imports it, and compares the
/// two on the reference backend with input X.
std::unique_ptr<ir::Graph> exportAndCompare(const ir::Graph &G, int Opset,
                                            const Tensor &X) {
  frontend::OnnxExportOptions O;
  O.Opset = Opset;
  O.Check = true;
  std::string Bytes = frontend::exportOnnxToBytes(G, O);
  EXPECT_NO_THROW(frontend::checkOnnxModelBytes(Bytes, "exported"));
  EXPECT_EQ(parse(Bytes).opset_import(0).version(), Opset);
  auto Back = frontend::importOnnxFromBytes(Bytes, "exported");
  auto Want = backends::runReference(G, {X});
  auto Got = backends::runReference(*Back, {X});
  EXPECT_EQ(Got.size(), Want.size());
  for (size_t I = 0; I < Want.size() && I < Got.size(); ++I)
    expectClose(Got[I], Want[I], 1e-5);
  return Back;
}

} // namespace

TEST(OnnxExport, GeluExpandsToErfChain) {
  auto G = unaryGraph(OpKind::Gelu);
  auto Back = exportAndCompare(*G, 17, ramp(Shape{2, 8}));
  EXPECT_FALSE(hasOp(*Back, OpKind::Gelu));
  EXPECT_TRUE(hasOp(*Back, OpKind::Erf));
  EXPECT_EQ(Back->outputs()[0]->name(), "y");
}

TEST(OnnxExport, TanhGeluExpandsToTanhChain) {
  ir::AttrMap A;
  A.set("approximate", ir::Attribute("tanh"));
  auto G = unaryGraph(OpKind::Gelu, A);
  auto Back = exportAndCompare(*G, 17, ramp(Shape{3, 8}));
  EXPECT_FALSE(hasOp(*Back, OpKind::Gelu));
  EXPECT_TRUE(hasOp(*Back, OpKind::Tanh));
}

TEST(OnnxExport, NamesSymbolicDimsAndAttributesSurvive) {
  ir::Graph G;
  G.setName("mlp");
  ir::Value *X = G.addInput("x", f32({Dim::symbol("batch"), Dim(4)}));
  ir::Value *W = G.addInitializer("fc1.weight", ramp(Shape{3, 4}));
  ir::Value *B = G.addInitializer("fc1.bias", ramp(Shape{3}, 1.1));
  ir::AttrMap A;
  A.set("transB", ir::Attribute(int64_t(1)));
  ir::Node *Gemm = G.addNode(OpKind::Gemm, {X, W, B}, {"h"}, A);
  Gemm->setName("fc1");
  ir::Node *R = G.addNode(OpKind::Relu, {Gemm->output()}, {"y"});
  G.setOutputs({R->output()});
  ir::inferTypes(G);
  frontend::OnnxExportOptions O;
  O.Check = true;
  std::string Bytes = frontend::exportOnnxToBytes(G, O);
  onnx::ModelProto M = parse(Bytes);
  ASSERT_EQ(M.graph().initializer_size(), 2);
  EXPECT_EQ(M.graph().initializer(0).name(), "fc1.weight");
  EXPECT_EQ(M.graph().initializer(1).name(), "fc1.bias");
  EXPECT_EQ(M.graph().input(0).type().tensor_type().shape().dim(0).dim_param(),
            "batch");
  EXPECT_EQ(M.graph().node(0).name(), "fc1");
  auto Back = frontend::importOnnxFromBytes(Bytes, "mlp.onnx");
  EXPECT_EQ(graphDiff(G, *Back), "");
}

TEST(OnnxExport, EveryOpsetFrom13To17) {
  auto G = unaryGraph(OpKind::Relu);
  for (int Opset = 13; Opset <= 17; ++Opset) {
    SCOPED_TRACE(Opset);
    exportAndCompare(*G, Opset, ramp(Shape{1, 8}));
  }
  frontend::OnnxExportOptions O;
  for (int Bad : {12, 18}) {
    O.Opset = Bad;
    EXPECT_THROW(frontend::exportOnnxToBytes(*G, O), Error);
  }
}

TEST(OnnxExport, NewerOpsAreDowngradedOrRefused) {
  // HardSwish (opset 14) at 13: HardSigmoid * x.
  auto HS = unaryGraph(OpKind::HardSwish);
  auto Back = exportAndCompare(*HS, 13, ramp(Shape{2, 8}));
  EXPECT_TRUE(hasOp(*Back, OpKind::HardSigmoid));
  exportAndCompare(*HS, 14, ramp(Shape{2, 8}));

  // CastLike (opset 15) at 14: Cast to the target's dtype.
  ir::Graph CL;
  ir::Value *X = CL.addInput("x", f32({Dim(4)}));
  ir::Value *T = CL.addInput("t", ir::TensorType(DType::F64, {Dim(1)}));
  CL.setOutputs({CL.addNode(OpKind::CastLike, {X, T}, {"y"})->output()});
  ir::inferTypes(CL);
  frontend::OnnxExportOptions O;
  O.Opset = 14;
  O.Check = true;
  auto CLBack = frontend::importOnnxFromBytes(
      frontend::exportOnnxToBytes(CL, O), "castlike");
  EXPECT_TRUE(hasOp(*CLBack, OpKind::Cast));
  EXPECT_EQ(CLBack->outputs()[0]->type().dtype(), DType::F64);

  // Reshape with allowzero=1 needs opset 14.
  ir::Graph RS;
  ir::Value *RX = RS.addInput("x", f32({Dim(2), Dim(3)}));
  ir::Value *Sh =
      RS.addInitializer("shape", Tensor::fromVector<int64_t>({3, 2}, Shape{2}));
  ir::AttrMap A;
  A.set("allowzero", ir::Attribute(int64_t(1)));
  ir::Node *N = RS.addNode(OpKind::Reshape, {RX, Sh}, {"y"}, A);
  N->setName("reshape_az");
  RS.setOutputs({N->output()});
  ir::inferTypes(RS);
  O.Opset = 13;
  try {
    frontend::exportOnnxToBytes(RS, O);
    ADD_FAILURE() << "exported";
  } catch (const Error &E) {
    EXPECT_EQ(E.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(E.what()).find("'reshape_az'"), std::string::npos)
        << E.what();
    EXPECT_NE(std::string(E.what()).find("allowzero"), std::string::npos);
  }
  O.Opset = 14;
  EXPECT_NO_THROW(frontend::exportOnnxToBytes(RS, O));

  // LayerNormalization exists from opset 17 only.
  ir::Graph LN;
  ir::Value *LX = LN.addInput("x", f32({Dim(2), Dim(4)}));
  ir::Value *Sc = LN.addInitializer("ln.weight", ramp(Shape{4}));
  LN.setOutputs(
      {LN.addNode(OpKind::LayerNormalization, {LX, Sc}, {"y"})->output()});
  ir::inferTypes(LN);
  O.Opset = 16;
  EXPECT_THROW(frontend::exportOnnxToBytes(LN, O), Error);
  exportAndCompare(LN, 17, ramp(Shape{2, 4}));
}

TEST(OnnxExport, LargeWeightsGoToExternalData) {
  auto Dir = freshDir("extdata");
  ir::Graph G;
  G.setName("big");
  ir::Value *X = G.addInput("x", f32({Dim(1), Dim(64)}));
  ir::Value *W = G.addInitializer("layer.weight", ramp(Shape{64, 64}));
  ir::Value *B = G.addInitializer("layer.bias", ramp(Shape{64}, 0.9));
  ir::Value *S = G.addInitializer("tiny", ramp(Shape{2}));
  ir::Node *Mm = G.addNode(OpKind::MatMul, {X, W}, {"h"});
  ir::Node *Ad = G.addNode(OpKind::Add, {Mm->output(), B}, {"z"});
  ir::Node *Sl = G.addNode(
      OpKind::Mul,
      {Ad->output(), G.addInitializer("one", Tensor::scalar(1.0f))}, {"y"});
  (void)S;
  G.setOutputs({Sl->output()});
  ir::inferTypes(G);

  frontend::OnnxExportOptions O;
  O.ExternalDataLimit = 1000;   // Stands in for protobuf's 2 GB.
  O.ExternalDataMinBytes = 128; // weight (16 KiB) and bias (256 B) move.
  O.Check = true;
  std::string Path = (Dir / "big.onnx").string();
  frontend::exportOnnx(G, Path, O);
  ASSERT_TRUE(std::filesystem::exists(Dir / "big.onnx.data"));
  EXPECT_GE(std::filesystem::file_size(Dir / "big.onnx.data"), 64u * 64 * 4);
  EXPECT_NO_THROW(frontend::checkOnnxModel(Path));

  onnx::ModelProto M;
  {
    std::ifstream In(Path, std::ios::binary);
    ASSERT_TRUE(M.ParseFromIstream(&In));
  }
  std::map<std::string, bool> External;
  for (const auto &T : M.graph().initializer())
    External[T.name()] = T.data_location() == onnx::TensorProto::EXTERNAL;
  EXPECT_TRUE(External["layer.weight"]);
  EXPECT_TRUE(External["layer.bias"]);
  EXPECT_FALSE(External["tiny"]);
  EXPECT_FALSE(External["one"]);

  auto Back = frontend::importOnnx(Path);
  EXPECT_EQ(graphDiff(G, *Back), "");
  Tensor In = ramp(Shape{1, 64}, 0.05);
  expectClose(backends::runReference(*Back, {In})[0],
              backends::runReference(G, {In})[0], 1e-5);

  // Below the limit: no side file; in memory, external data is refused.
  O.ExternalDataLimit = uint64_t(1) << 30;
  frontend::exportOnnx(G, (Dir / "small.onnx").string(), O);
  EXPECT_FALSE(std::filesystem::exists(Dir / "small.onnx.data"));
  O.ForceExternalData = true;
  EXPECT_THROW(frontend::exportOnnxToBytes(G, O), Error);
}

TEST(OnnxExport, ElidedInitializerIsRefused) {
  ir::Graph G;
  ir::Value *X = G.addInput("x", f32({Dim(3)}));
  ir::Value *W = G.addElidedInitializer("w", f32({Dim(3)}), "fnv1a64:0");
  G.setOutputs({G.addNode(OpKind::Add, {X, W}, {"y"})->output()});
  ir::inferTypes(G);
  try {
    frontend::exportOnnxToBytes(G);
    ADD_FAILURE() << "exported";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("initializer 'w' has no data"),
              std::string::npos)
        << E.what();
  }
}

TEST(OnnxExport, CheckerCatchesInconsistentModels) {
  // A model whose declared output type contradicts its op: the wrapper
  // around ONNX's checker + strict inference must say so.
  onnx::ModelProto M = makeModel();
  addInput(M, "x", {int64_t(3)});
  addNode(M, "Relu", {"x"}, {"y"});
  addOutput(M, "y", {int64_t(4)});
  EXPECT_THROW(frontend::checkOnnxModelBytes(M.SerializeAsString(), "bad"),
               Error);
}

TEST(OnnxExport, RepeatedAndPassThroughOutputs) {
  // y twice, and the input x itself: ONNX needs distinct output names.
  ir::Graph G;
  ir::Value *X = G.addInput("x", f32({Dim(3)}));
  ir::Value *Y = G.addNode(OpKind::Neg, {X}, {"y"})->output();
  G.setOutputs({Y, Y, X});
  ir::inferTypes(G);
  frontend::OnnxExportOptions O;
  O.Check = true;
  auto Back =
      frontend::importOnnxFromBytes(frontend::exportOnnxToBytes(G, O), "rep");
  ASSERT_EQ(Back->outputs().size(), 3u);
  EXPECT_EQ(Back->outputs()[0]->name(), "y");
  EXPECT_NE(Back->outputs()[1]->name(), "y");
  EXPECT_EQ(Back->outputs()[2]->name(), "x");
  Tensor In = Tensor::fromVector<float>({1, -2, 3}, Shape{3});
  auto Outs = backends::runReference(*Back, {In});
  EXPECT_EQ(Outs[1].toDoubleVector(), (std::vector<double>{-1, 2, -3}));
  EXPECT_TRUE(Outs[2].equals(In));
}

TEST(OnnxExport, TypesAreInferredForUninferredGraphs) {
  // Built without inferTypes(): every value is f32[*] until export infers.
  ir::Graph G;
  ir::Value *X = G.addInput("x", f32({Dim::symbol("N"), Dim(5)}));
  ir::Value *S = G.addNode(OpKind::Shape, {X}, {"s"})->output();
  G.setOutputs({S});
  frontend::OnnxExportOptions O;
  O.Check = true;
  onnx::ModelProto M = parse(frontend::exportOnnxToBytes(G, O));
  EXPECT_EQ(M.graph().output(0).type().tensor_type().elem_type(),
            onnx::TensorProto::INT64);
}
