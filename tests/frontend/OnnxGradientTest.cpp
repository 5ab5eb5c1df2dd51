//===- OnnxGradientTest.cpp - ONNX Gradient expansion on import ----------===//
//
// Hand-built models with an ai.onnx.preview.training.Gradient node: each
// derivative rule (with broadcasting), a value used twice, MatMul 2-D and
// batched, Reduce*, shape ops, zs, an x that y does not depend on, shapes
// only known at run time (opset 13) and the refusals (an op without a rule,
// unknown shapes below opset 13). The gradients the imported graph computes
// on the reference backend are compared with central finite differences of
// the forward graph (f64), or with hand-computed values.
//
//===----------------------------------------------------------------------===//

#include "OnnxTestUtils.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/frontend/onnx/OnnxExport.h"
#include "nngraph/frontend/onnx/OnnxImport.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

using namespace nng;
using namespace nng::test;

namespace {

constexpr int F64 = onnx::TensorProto::DOUBLE;
constexpr int F32 = onnx::TensorProto::FLOAT;

/// Named input tensors.
using Feed = std::map<std::string, Tensor>;

std::unique_ptr<ir::Graph> importModel(const onnx::ModelProto &M) {
  return frontend::importOnnxFromBytes(M.SerializeAsString(), "grad.onnx");
}

/// Runs G with Inputs (by name) and returns the output named Name.
Tensor runOutput(const ir::Graph &G, const Feed &Inputs,
                 const std::string &Name) {
  std::vector<Tensor> Ins;
  for (const ir::Value *V : G.inputs()) {
    auto It = Inputs.find(V->name());
    EXPECT_NE(It, Inputs.end()) << "no data for input " << V->name();
    if (It == Inputs.end())
      return Tensor();
    Ins.push_back(It->second);
  }
  std::vector<Tensor> Outs = backends::runReference(G, Ins);
  for (size_t I = 0; I < G.outputs().size(); ++I)
    if (G.outputs()[I]->name() == Name)
      return Outs[I];
  ADD_FAILURE() << "no output " << Name;
  return Tensor();
}

/// Fwd plus Gradient(xs, zs, y) with outputs "d_<x>".
onnx::ModelProto withGradient(onnx::ModelProto Fwd,
                              const std::vector<std::string> &Xs,
                              const std::string &Y,
                              const std::vector<std::string> &Zs = {}) {
  std::vector<std::string> Ins = Xs, Outs;
  Ins.insert(Ins.end(), Zs.begin(), Zs.end());
  for (const std::string &X : Xs)
    Outs.push_back("d_" + X);
  onnx::NodeProto &N = addNode(Fwd, "Gradient", Ins, Outs, "grad");
  N.set_domain("ai.onnx.preview.training");
  auto Strings = [&](const char *Name, const std::vector<std::string> &V) {
    auto *A = N.add_attribute();
    A->set_name(Name);
    A->set_type(onnx::AttributeProto::STRINGS);
    for (const std::string &S : V)
      A->add_strings(S);
  };
  Strings("xs", Xs);
  if (!Zs.empty())
    Strings("zs", Zs);
  auto *A = N.add_attribute();
  A->set_name("y");
  A->set_type(onnx::AttributeProto::STRING);
  A->set_s(Y);
  auto *Imp = Fwd.add_opset_import();
  Imp->set_domain("ai.onnx.preview.training");
  Imp->set_version(1);
  for (const std::string &O : Outs)
    Fwd.mutable_graph()->add_output()->set_name(O);
  return Fwd;
}

/// Deterministic f64 values in [Lo, Hi) of shape Dims.
Tensor values(const std::vector<int64_t> &Dims, double Lo = -1.5,
              double Hi = 1.5, unsigned Seed = 1) {
  Shape S(Dims);
  std::vector<double> V(static_cast<size_t>(S.numel()));
  unsigned X = Seed * 2654435761u + 12345u;
  for (double &D : V) {
    X = X * 1103515245u + 12345u;
    D = Lo + (Hi - Lo) * ((X >> 8) & 0xFFFF) / 65536.0;
  }
  return Tensor::fromVector<double>(V, S);
}

double sumOf(const Tensor &T) {
  double S = 0;
  for (int64_t I = 0; I < T.numel(); ++I)
    S += T.getFlat(I);
  return S;
}

/// d sum(y) / d x by central differences of the forward graph G.
Tensor finiteDifference(const ir::Graph &G, Feed In, const std::string &X,
                        const std::string &Y) {
  Tensor Base = In.at(X);
  std::vector<double> V = Base.toDoubleVector(), D(V.size());
  const double Eps = 1e-6;
  for (size_t I = 0; I < V.size(); ++I) {
    std::vector<double> P = V, M = V;
    P[I] += Eps;
    M[I] -= Eps;
    In[X] = Tensor::fromVector<double>(P, Base.shape());
    double FP = sumOf(runOutput(G, In, Y));
    In[X] = Tensor::fromVector<double>(M, Base.shape());
    double FM = sumOf(runOutput(G, In, Y));
    D[I] = (FP - FM) / (2 * Eps);
  }
  return Tensor::fromVector<double>(D, Base.shape());
}

void expectClose(const Tensor &Got, const Tensor &Want, double Tol,
                 const std::string &What) {
  ASSERT_EQ(Got.shape(), Want.shape()) << What;
  for (int64_t I = 0; I < Got.numel(); ++I)
    EXPECT_NEAR(Got.getFlat(I), Want.getFlat(I), Tol) << What << " at " << I;
}

/// Imports Fwd with a Gradient of Y w.r.t. Xs, runs it and compares every
/// gradient with finite differences of Fwd; also checks y itself.
void checkGradients(const onnx::ModelProto &Fwd,
                    const std::vector<std::string> &Xs, const std::string &Y,
                    const Feed &In) {
  auto F = importModel(Fwd);
  auto G = importModel(withGradient(Fwd, Xs, Y));
  expectClose(runOutput(*G, In, Y), runOutput(*F, In, Y), 1e-12, "y");
  for (const std::string &X : Xs)
    expectClose(runOutput(*G, In, "d_" + X), finiteDifference(*F, In, X, Y),
                1e-6, "d" + Y + "/d" + X);
}

/// y = Op(x) for a unary op, x [2,3].
void checkUnary(const std::string &Op, double Lo = -1.5, double Hi = 1.5) {
  SCOPED_TRACE(Op);
  onnx::ModelProto M = makeModel(17);
  addInput(M, "x", {int64_t(2), int64_t(3)}, F64);
  addNode(M, Op, {"x"}, {"y"}, "op");
  addOutput(M, "y", {int64_t(2), int64_t(3)}, F64);
  checkGradients(M, {"x"}, "y", {{"x", values({2, 3}, Lo, Hi)}});
}

/// y = Op(a, b), a [2,3] and b of shape BDims (broadcast).
void checkBinary(const std::string &Op, const std::vector<int64_t> &BDims,
                 int Opset = 17) {
  SCOPED_TRACE(Op);
  onnx::ModelProto M = makeModel(Opset);
  addInput(M, "a", {int64_t(2), int64_t(3)}, F64);
  std::vector<TestDim> BD(BDims.begin(), BDims.end());
  addInput(M, "b", BD, F64);
  addNode(M, Op, {"a", "b"}, {"y"}, "op");
  addOutput(M, "y", {int64_t(2), int64_t(3)}, F64);
  checkGradients(
      M, {"a", "b"}, "y",
      {{"a", values({2, 3}, 0.5, 2.0, 1)}, {"b", values(BDims, 0.5, 2.0, 2)}});
}

std::string importError(const onnx::ModelProto &M, ErrorKind *Kind = nullptr) {
  try {
    importModel(M);
  } catch (const Error &E) {
    if (Kind)
      *Kind = E.kind();
    return E.what();
  }
  ADD_FAILURE() << "import succeeded";
  return "";
}

} // namespace

TEST(OnnxGradient, UnaryRules) {
  checkUnary("Neg");
  checkUnary("Identity");
  checkUnary("Relu"); // The values avoid 0 (see values()).
  checkUnary("Sigmoid");
  checkUnary("Tanh");
  checkUnary("Exp");
  checkUnary("Log", 0.5, 2.0);
  checkUnary("Sqrt", 0.5, 2.0);
}

TEST(OnnxGradient, BinaryRulesWithBroadcasting) {
  for (const char *Op : {"Add", "Sub", "Mul", "Div"}) {
    checkBinary(Op, {2, 3});
    checkBinary(Op, {3});
    checkBinary(Op, {2, 1});
    checkBinary(Op, {1, 3}, 12); // ReduceSum's axes as an attribute.
  }
}

TEST(OnnxGradient, AddBroadcastGradientIsSummed) {
  onnx::ModelProto M = makeModel(17);
  addInput(M, "a", {int64_t(2), int64_t(3)}, F32);
  addInput(M, "b", {int64_t(3)}, F32);
  addNode(M, "Add", {"a", "b"}, {"y"}, "add");
  addOutput(M, "y", {int64_t(2), int64_t(3)}, F32);
  auto G = importModel(withGradient(M, {"a", "b"}, "y"));
  Feed In = {{"a", Tensor::fromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3})},
             {"b", Tensor::fromVector<float>({1, 2, 3}, Shape{3})}};
  expectClose(runOutput(*G, In, "d_a"),
              Tensor::fromVector<float>({1, 1, 1, 1, 1, 1}, Shape{2, 3}), 0,
              "da");
  expectClose(runOutput(*G, In, "d_b"),
              Tensor::fromVector<float>({2, 2, 2}, Shape{3}), 0, "db");
}

TEST(OnnxGradient, ValueUsedTwice) {
  // d = (a + b) * a: dd/da = 2a + b, dd/db = a (the conformance model).
  onnx::ModelProto M = makeModel(12);
  addInput(M, "a", {int64_t(2), int64_t(2)}, F32);
  addInput(M, "b", {int64_t(2), int64_t(2)}, F32);
  addNode(M, "Add", {"a", "b"}, {"c"}, "add");
  addNode(M, "Mul", {"c", "a"}, {"d"}, "mul");
  addOutput(M, "d", {int64_t(2), int64_t(2)}, F32);
  auto G = importModel(withGradient(M, {"a", "b"}, "d"));
  Feed In = {{"a", Tensor::fromVector<float>({1, 2, 3, 4}, Shape{2, 2})},
             {"b", Tensor::fromVector<float>({5, 6, 7, 8}, Shape{2, 2})}};
  expectClose(runOutput(*G, In, "d_a"),
              Tensor::fromVector<float>({7, 10, 13, 16}, Shape{2, 2}), 0,
              "dd/da");
  expectClose(runOutput(*G, In, "d_b"), In["a"], 0, "dd/db");
  // x * x, through one node reading the same value twice.
  onnx::ModelProto Sq = makeModel(17);
  addInput(Sq, "x", {int64_t(3)}, F64);
  addNode(Sq, "Mul", {"x", "x"}, {"y"}, "sq");
  addOutput(Sq, "y", {int64_t(3)}, F64);
  checkGradients(Sq, {"x"}, "y", {{"x", values({3})}});
}

TEST(OnnxGradient, MatMul2DAndBatched) {
  struct Case {
    std::vector<int64_t> A, B, Y;
  };
  for (const Case &C :
       {Case{{2, 3}, {3, 4}, {2, 4}}, Case{{2, 2, 3}, {2, 3, 4}, {2, 2, 4}},
        Case{{2, 2, 3}, {3, 4}, {2, 2, 4}},
        Case{{2, 3}, {3, 3, 4}, {3, 2, 4}}}) {
    SCOPED_TRACE(::testing::PrintToString(C.A) + " @ " +
                 ::testing::PrintToString(C.B));
    onnx::ModelProto M = makeModel(17);
    addInput(M, "a", std::vector<TestDim>(C.A.begin(), C.A.end()), F64);
    addInput(M, "b", std::vector<TestDim>(C.B.begin(), C.B.end()), F64);
    addNode(M, "MatMul", {"a", "b"}, {"y"}, "mm");
    addOutput(M, "y", std::vector<TestDim>(C.Y.begin(), C.Y.end()), F64);
    checkGradients(
        M, {"a", "b"}, "y",
        {{"a", values(C.A, -1, 1, 3)}, {"b", values(C.B, -1, 1, 4)}});
  }
}

TEST(OnnxGradient, SumAndReductions) {
  onnx::ModelProto S = makeModel(17);
  addInput(S, "a", {int64_t(2), int64_t(3)}, F64);
  addInput(S, "b", {int64_t(3)}, F64);
  addInput(S, "c", {int64_t(2), int64_t(1)}, F64);
  addNode(S, "Sum", {"a", "b", "c"}, {"y"}, "sum");
  addOutput(S, "y", {int64_t(2), int64_t(3)}, F64);
  checkGradients(
      S, {"a", "b", "c"}, "y",
      {{"a", values({2, 3})}, {"b", values({3})}, {"c", values({2, 1})}});
  // Each reduction feeds a Mul so that the gradient is not uniform.
  struct Case {
    const char *Op;
    int Opset;
    std::vector<int64_t> Axes;
    int64_t KeepDims;
    std::vector<int64_t> Out;
  };
  for (const Case &C :
       {Case{"ReduceSum", 17, {1}, 0, {2, 4}},
        Case{"ReduceSum", 17, {-1, 0}, 1, {1, 3, 1}},
        Case{"ReduceSum", 12, {1}, 0, {2, 4}}, Case{"ReduceSum", 17, {}, 0, {}},
        Case{"ReduceMean", 17, {2}, 0, {2, 3}},
        Case{"ReduceMean", 12, {0, 2}, 1, {1, 3, 1}}}) {
    SCOPED_TRACE(std::string(C.Op) + " opset " + std::to_string(C.Opset));
    onnx::ModelProto M = makeModel(C.Opset);
    addInput(M, "x", {int64_t(2), int64_t(3), int64_t(4)}, F64);
    addInput(M, "w", std::vector<TestDim>(C.Out.begin(), C.Out.end()), F64);
    std::vector<std::string> Ins = {"x"};
    if (C.Opset >= 13 && std::string(C.Op) == "ReduceSum" && !C.Axes.empty()) {
      onnx::TensorProto &T = *M.mutable_graph()->add_initializer();
      T.set_name("axes");
      T.set_data_type(onnx::TensorProto::INT64);
      T.add_dims(static_cast<int64_t>(C.Axes.size()));
      for (int64_t A : C.Axes)
        T.add_int64_data(A);
      Ins.push_back("axes");
    }
    onnx::NodeProto &N = addNode(M, C.Op, Ins, {"r"}, "reduce");
    if (Ins.size() == 1 && !C.Axes.empty())
      addIntsAttr(N, "axes", C.Axes);
    addIntAttr(N, "keepdims", C.KeepDims);
    addNode(M, "Mul", {"r", "w"}, {"y"}, "mul");
    addOutput(M, "y", std::vector<TestDim>(C.Out.begin(), C.Out.end()), F64);
    checkGradients(M, {"x"}, "y",
                   {{"x", values({2, 3, 4})}, {"w", values(C.Out, -1, 1, 7)}});
  }
}

TEST(OnnxGradient, ShapeOps) {
  // y = Flatten(Transpose(Reshape(x, [3, 2, 2]), perm [2, 0, 1])) * w.
  onnx::ModelProto M = makeModel(17);
  addInput(M, "x", {int64_t(2), int64_t(6)}, F64);
  addInput(M, "w", {int64_t(2), int64_t(6)}, F64);
  onnx::TensorProto &T = *M.mutable_graph()->add_initializer();
  T.set_name("shape");
  T.set_data_type(onnx::TensorProto::INT64);
  T.add_dims(3);
  for (int64_t D : {3, 2, 2})
    T.add_int64_data(D);
  addNode(M, "Reshape", {"x", "shape"}, {"r"}, "reshape");
  addIntsAttr(addNode(M, "Transpose", {"r"}, {"t"}, "transpose"), "perm",
              {2, 0, 1});
  addIntAttr(addNode(M, "Flatten", {"t"}, {"f"}, "flatten"), "axis", 1);
  addNode(M, "Mul", {"f", "w"}, {"y"}, "mul");
  addOutput(M, "y", {int64_t(2), int64_t(6)}, F64);
  checkGradients(M, {"x"}, "y",
                 {{"x", values({2, 6})}, {"w", values({2, 6}, -1, 1, 5)}});
}

TEST(OnnxGradient, SqueezeUnsqueezeExpand) {
  // y = Expand(Unsqueeze(Squeeze(x [2,1,3], [1]), [0]), [4,2,3]) * w.
  onnx::ModelProto M = makeModel(13);
  addInput(M, "x", {int64_t(2), int64_t(1), int64_t(3)}, F64);
  addInput(M, "w", {int64_t(4), int64_t(2), int64_t(3)}, F64);
  auto Ints = [&](const std::string &Name, const std::vector<int64_t> &V) {
    onnx::TensorProto &T = *M.mutable_graph()->add_initializer();
    T.set_name(Name);
    T.set_data_type(onnx::TensorProto::INT64);
    T.add_dims(static_cast<int64_t>(V.size()));
    for (int64_t D : V)
      T.add_int64_data(D);
  };
  Ints("one", {1});
  Ints("zero", {0});
  Ints("shape", {4, 2, 3});
  addNode(M, "Squeeze", {"x", "one"}, {"s"}, "squeeze");
  addNode(M, "Unsqueeze", {"s", "zero"}, {"u"}, "unsqueeze");
  addNode(M, "Expand", {"u", "shape"}, {"e"}, "expand");
  addNode(M, "Mul", {"e", "w"}, {"y"}, "mul");
  addOutput(M, "y", {int64_t(4), int64_t(2), int64_t(3)}, F64);
  checkGradients(
      M, {"x"}, "y",
      {{"x", values({2, 1, 3})}, {"w", values({4, 2, 3}, -1, 1, 5)}});
}

TEST(OnnxGradient, ChainOfRules) {
  // y = Sigmoid(Relu(x @ w + b)) - Log(Sqrt(Exp(Tanh(x @ w))) + 2), mixed.
  onnx::ModelProto M = makeModel(13);
  addInput(M, "x", {int64_t(2), int64_t(3)}, F64);
  addInput(M, "w", {int64_t(3), int64_t(4)}, F64);
  addInput(M, "b", {int64_t(4)}, F64);
  addNode(M, "MatMul", {"x", "w"}, {"h"}, "mm");
  addNode(M, "Add", {"h", "b"}, {"hb"}, "bias");
  addNode(M, "Relu", {"hb"}, {"r"}, "relu");
  addNode(M, "Sigmoid", {"r"}, {"s"}, "sig");
  addNode(M, "Tanh", {"h"}, {"t"}, "tanh");
  addNode(M, "Exp", {"t"}, {"e"}, "exp");
  addNode(M, "Sqrt", {"e"}, {"q"}, "sqrt");
  addNode(M, "Log", {"q"}, {"l"}, "log");
  addNode(M, "Sub", {"s", "l"}, {"y"}, "sub");
  addOutput(M, "y", {int64_t(2), int64_t(4)}, F64);
  checkGradients(M, {"x", "w", "b"}, "y",
                 {{"x", values({2, 3}, -1, 1, 1)},
                  {"w", values({3, 4}, -1, 1, 2)},
                  {"b", values({4}, -1, 1, 3)}});
}

TEST(OnnxGradient, ZsAreConstants) {
  // z = Exp(x), y = x * z. With zs = [z], dy/dx = z (z held constant);
  // without, dy/dx = z * (1 + x).
  onnx::ModelProto M = makeModel(17);
  addInput(M, "x", {int64_t(3)}, F32);
  addNode(M, "Exp", {"x"}, {"z"}, "exp");
  addNode(M, "Mul", {"x", "z"}, {"y"}, "mul");
  addOutput(M, "y", {int64_t(3)}, F32);
  Feed In = {{"x", Tensor::fromVector<float>({0.0f, 1.0f, -1.0f}, Shape{3})}};
  auto WithZ = importModel(withGradient(M, {"x"}, "y", {"z"}));
  auto Without = importModel(withGradient(M, {"x"}, "y"));
  Tensor DZ = runOutput(*WithZ, In, "d_x");
  Tensor D = runOutput(*Without, In, "d_x");
  for (int64_t I = 0; I < 3; ++I) {
    double X = In["x"].getFlat(I), E = std::exp(X);
    EXPECT_NEAR(DZ.getFlat(I), E, 1e-6);
    EXPECT_NEAR(D.getFlat(I), E * (1 + X), 1e-5);
  }
}

TEST(OnnxGradient, IndependentXGetsZeros) {
  onnx::ModelProto M = makeModel(12);
  addInput(M, "a", {int64_t(2), int64_t(2)}, F32);
  addInput(M, "b", {int64_t(2), int64_t(3)}, F32);
  addNode(M, "Add", {"a", "a"}, {"y"}, "twice");
  addNode(M, "Neg", {"b"}, {"nb"}, "neg");
  addOutput(M, "y", {int64_t(2), int64_t(2)}, F32);
  addOutput(M, "nb", {int64_t(2), int64_t(3)}, F32);
  auto G = importModel(withGradient(M, {"a", "b"}, "y"));
  Feed In = {{"a", Tensor::fromVector<float>({1, 2, 3, 4}, Shape{2, 2})},
             {"b", Tensor::fromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3})}};
  expectClose(runOutput(*G, In, "d_a"),
              Tensor::fromVector<float>({2, 2, 2, 2}, Shape{2, 2}), 0, "da");
  expectClose(runOutput(*G, In, "d_b"),
              Tensor::fromVector<float>({0, 0, 0, 0, 0, 0}, Shape{2, 3}), 0,
              "db");
}

TEST(OnnxGradient, SymbolicShapesAtOpset13) {
  // The broadcast axes are found at run time.
  // b [M] matches a's last dim by name (static axes); b [K] may be 1 or
  // M (axes found at run time).
  for (std::string BDim : {"M", "K"}) {
    SCOPED_TRACE(BDim);
    onnx::ModelProto M = makeModel(13);
    addInput(M, "a", {std::string("N"), std::string("M")}, F64);
    addInput(M, "b", {std::string(BDim)}, F64);
    addNode(M, "Mul", {"a", "b"}, {"y"}, "mul");
    addOutput(M, "y", {std::string("N"), std::string("M")}, F64);
    checkGradients(M, {"a", "b"}, "y",
                   {{"a", values({2, 3})}, {"b", values({3}, -1, 1, 2)}});
    if (BDim == "K")
      checkGradients(M, {"a", "b"}, "y",
                     {{"a", values({2, 3})}, {"b", values({1}, -1, 1, 2)}});
  }
}

TEST(OnnxGradient, SymbolicShapesBelowOpset13AreRefused) {
  onnx::ModelProto M = makeModel(12);
  addInput(M, "a", {std::string("N"), std::string("M")}, F32);
  addInput(M, "b", {std::string("K")}, F32);
  addNode(M, "Mul", {"a", "b"}, {"y"}, "mul");
  addOutput(M, "y", {std::string("N"), std::string("M")}, F32);
  ErrorKind K{};
  std::string Msg = importError(withGradient(M, {"a", "b"}, "y"), &K);
  EXPECT_EQ(K, ErrorKind::Unsupported);
  EXPECT_NE(Msg.find("node 'grad'"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("opset 13"), std::string::npos) << Msg;
}

TEST(OnnxGradient, UnsupportedOpOnThePath) {
  onnx::ModelProto M = makeModel(17);
  addInput(M, "x", {int64_t(3)}, F32);
  addNode(M, "Sin", {"x"}, {"s"}, "my_sin");
  addNode(M, "Exp", {"s"}, {"y"}, "exp");
  addOutput(M, "y", {int64_t(3)}, F32);
  ErrorKind K{};
  std::string Msg = importError(withGradient(M, {"x"}, "y"), &K);
  EXPECT_EQ(K, ErrorKind::Unsupported);
  EXPECT_NE(Msg.find("node 'grad' (ai.onnx.preview.training.Gradient)"),
            std::string::npos)
      << Msg;
  EXPECT_NE(Msg.find("node 'my_sin' (Sin)"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("Add, Sub, Mul, Div"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("MatMul"), std::string::npos) << Msg;
  // Off the path, the same op is fine.
  onnx::ModelProto Off = makeModel(17);
  addInput(Off, "x", {int64_t(3)}, F32);
  addInput(Off, "u", {int64_t(3)}, F32);
  addNode(Off, "Sin", {"u"}, {"s"}, "my_sin");
  addNode(Off, "Mul", {"x", "s"}, {"y"}, "mul");
  addOutput(Off, "y", {int64_t(3)}, F32);
  EXPECT_NO_THROW(importModel(withGradient(Off, {"x"}, "y")));
}

TEST(OnnxGradient, BadAttributesAreParseErrors) {
  onnx::ModelProto M = makeModel(17);
  addInput(M, "x", {int64_t(3)}, F32);
  addNode(M, "Exp", {"x"}, {"y"}, "exp");
  addOutput(M, "y", {int64_t(3)}, F32);
  ErrorKind K{};
  std::string Msg = importError(withGradient(M, {"nothere"}, "y"), &K);
  EXPECT_EQ(K, ErrorKind::Parse);
  EXPECT_NE(Msg.find("'nothere'"), std::string::npos) << Msg;
  Msg = importError(withGradient(M, {"x"}, "nope"), &K);
  EXPECT_EQ(K, ErrorKind::Parse);
  EXPECT_NE(Msg.find("'nope'"), std::string::npos) << Msg;
}

TEST(OnnxGradient, ExpandedModelRoundTrips) {
  onnx::ModelProto M = makeModel(12);
  addInput(M, "a", {int64_t(2), int64_t(3)}, F32);
  addInput(M, "b", {int64_t(3)}, F32);
  addNode(M, "Add", {"a", "b"}, {"c"}, "add");
  addNode(M, "Mul", {"c", "a"}, {"d"}, "mul");
  addOutput(M, "d", {int64_t(2), int64_t(3)}, F32);
  auto G = importModel(withGradient(M, {"a", "b"}, "d"));
  frontend::OnnxExportOptions O;
  O.Check = true;
  auto Back = frontend::importOnnxFromBytes(frontend::exportOnnxToBytes(*G, O),
                                            "exported");
  Feed In = {{"a", values({2, 3}).to(DType::F32)},
             {"b", values({3}, -1, 1, 2).to(DType::F32)}};
  for (const char *Out : {"d", "d_a", "d_b"})
    expectClose(runOutput(*Back, In, Out), runOutput(*G, In, Out), 0, Out);
}

TEST(OnnxGradient, OrderNamesAndSeveralGradients) {
  // The Gradient node comes first in the file, its outputs feed an update
  // step, a second Gradient differentiates y w.r.t. itself (ones), and a
  // value named like the expansion's first choice does not collide.
  onnx::ModelProto M = makeModel(13);
  addInput(M, "w", {int64_t(3)}, F32);
  addInput(M, "x", {int64_t(3)}, F32);
  onnx::ModelProto G1 = withGradient(M, {"w"}, "y");
  onnx::ModelProto G = withGradient(G1, {"y"}, "y");
  G.mutable_graph()->mutable_node(1)->set_name("grad2");
  G.mutable_graph()->mutable_output(1)->set_name("d_y");
  G.mutable_graph()->mutable_node(1)->set_output(0, "d_y");
  addNode(G, "Mul", {"w", "x"}, {"y"}, "mul");
  addNode(G, "Identity", {"x"}, {"grad/Shape"}, "taken");
  addNode(G, "Sub", {"w", "d_w"}, {"w_next"}, "step");
  addOutput(G, "y", {int64_t(3)}, F32);
  addOutput(G, "w_next", {int64_t(3)}, F32);
  addOutput(G, "grad/Shape", {int64_t(3)}, F32);
  // withGradient added the training opset twice; keep one.
  G.mutable_opset_import()->DeleteSubrange(2, 1);
  auto Graph = importModel(G);
  Feed In = {{"w", Tensor::fromVector<float>({1, 2, 3}, Shape{3})},
             {"x", Tensor::fromVector<float>({4, 5, 6}, Shape{3})}};
  expectClose(runOutput(*Graph, In, "d_w"), In["x"], 0, "dy/dw");
  expectClose(runOutput(*Graph, In, "d_y"),
              Tensor::fromVector<float>({1, 1, 1}, Shape{3}), 0, "dy/dy");
  expectClose(runOutput(*Graph, In, "w_next"),
              Tensor::fromVector<float>({-3, -3, -3}, Shape{3}), 0, "w_next");
  expectClose(runOutput(*Graph, In, "grad/Shape"), In["x"], 0, "taken");
}

TEST(OnnxGradient, InitializerAsX) {
  // The spec's use: the gradient w.r.t. a trainable initializer.
  onnx::ModelProto M = makeModel(12);
  addInput(M, "x", {int64_t(2), int64_t(3)}, F32);
  addFloatInit(M, "w", {3}, {1, 2, 3});
  addNode(M, "Mul", {"x", "w"}, {"h"}, "mul");
  addNode(M, "Relu", {"h"}, {"y"}, "relu");
  addOutput(M, "y", {int64_t(2), int64_t(3)}, F32);
  auto G = importModel(withGradient(M, {"w"}, "y"));
  Feed In = {
      {"x", Tensor::fromVector<float>({1, -2, 3, 4, 5, -6}, Shape{2, 3})}};
  // dy/dw[j] = sum_i x[i,j] * (x[i,j] * w[j] > 0).
  expectClose(runOutput(*G, In, "d_w"),
              Tensor::fromVector<float>({5, 5, 3}, Shape{3}), 0, "dy/dw");
}
