//===- QuantizeTest.cpp - Static and dynamic post-training quantization ---===//
//
// Calibration methods, Q/DQ placement by the op table's traits (quantizable
// ops, value-preserving pass-through, fused Relu tails), s8 per-channel
// weights and i32 biases, --keep-float patterns, dynamic MatMul/Gemm
// quantization, fuse-qdq into QLinearConv/QLinearMatMul, and the errors of
// bad calibration input. Quantized graphs are checked on the reference
// backend against the float graph (close, not equal) and against each
// other (fuse-qdq: within one quantization step).
//
//===----------------------------------------------------------------------===//

#include "FusionTestUtils.h"
#include "nngraph/passes/Quantize.h"

using namespace nng;
using namespace nng::fusion_test;
using ir::OpKind;
namespace quant = nng::passes::quant;

namespace {

const char *Elided = " = elided(\"fnv1a64:0000000000000000\")\n";

/// A small residual CNN: conv-relu, max pool, conv + residual add, relu,
/// global pooling, flatten and a Gemm classifier.
std::unique_ptr<ir::Graph> smallCnn() {
  std::string Text = std::string("graph \"cnn\" {\n"
                                 "  input %x: f32[N,3,8,8]\n") +
                     "  init %w1: f32[4,3,3,3]" + Elided +
                     "  init %b1: f32[4]" + Elided +
                     "  init %w2: f32[4,4,3,3]" + Elided +
                     "  init %b2: f32[4]" + Elided +
                     "  init %fw: f32[5,4]" + Elided + "  init %fb: f32[5]" +
                     Elided +
                     "  %c1 = Conv(%x, %w1, %b1) {pads = [1, 1, 1, 1]} "
                     "name(\"conv1\")\n"
                     "  %r1 = Relu(%c1)\n"
                     "  %p1 = MaxPool(%r1) {kernel_shape = [2, 2], strides = "
                     "[2, 2]}\n"
                     "  %c2 = Conv(%p1, %w2, %b2) {pads = [1, 1, 1, 1]} "
                     "name(\"layer2.conv\") scope(\"layer2.conv\", \"Conv2d\")\n"
                     "  %s = Add(%c2, %p1) name(\"add\")\n"
                     "  %r2 = Relu(%s)\n"
                     "  %g = GlobalAveragePool(%r2)\n"
                     "  %f = Flatten(%g)\n"
                     "  %y = Gemm(%f, %fw, %fb) {transB = 1} name(\"fc\")\n"
                     "  output %y\n}\n";
  return parseWithRandomWeights(Text, 3);
}

std::vector<quant::Batch> randomBatches(int Count, int64_t N, uint32_t Seed) {
  std::vector<quant::Batch> B;
  for (int I = 0; I < Count; ++I)
    B.push_back({randomTensor(Shape{N, 3, 8, 8}, DType::F32, Seed + I)});
  return B;
}

/// max |a - b| / max |a| over the first outputs of G1 and G2 on Inputs.
double relativeError(const ir::Graph &G1, const ir::Graph &G2,
                     const quant::Batch &Inputs) {
  auto A = backends::runReference(G1, Inputs);
  auto B = backends::runReference(G2, Inputs);
  double Err = 0, Mag = 0;
  for (int64_t I = 0; I < A[0].numel(); ++I) {
    Err = std::max(Err, std::fabs(A[0].getFlat(I) - B[0].getFlat(I)));
    Mag = std::max(Mag, std::fabs(A[0].getFlat(I)));
  }
  return Err / Mag;
}

quant::RangeMap calibrated(const ir::Graph &G, const quant::QuantizeOptions &O,
                           int Batches = 4) {
  auto Names = quant::activationsToCalibrate(G, O);
  return quant::calibrate(G, Names, randomBatches(Batches, 2, 100), O,
                          "reference");
}

} // namespace

TEST(QuantizeTest, StaticQuantizationWrapsQuantizableOps) {
  auto G = smallCnn();
  std::unique_ptr<ir::Graph> Float = G->clone();
  quant::QuantizeOptions O;
  auto Names = quant::activationsToCalibrate(*G, O);
  // The input, conv1's Relu, the pooled value (conv2's input and the
  // residual), conv2, the Add's Relu, the pooled mean, the classifier.
  EXPECT_NE(std::find(Names.begin(), Names.end(), "x"), Names.end());
  EXPECT_NE(std::find(Names.begin(), Names.end(), "r1"), Names.end());
  EXPECT_EQ(std::find(Names.begin(), Names.end(), "c1"), Names.end());
  EXPECT_NE(std::find(Names.begin(), Names.end(), "r2"), Names.end());
  auto Ranges = quant::calibrate(*G, Names, randomBatches(4, 2, 100), O,
                                 "reference");
  EXPECT_GE(Ranges.at("r1").Min, 0.f);
  quant::QuantizeReport Rep;
  quant::quantizeStatic(*G, Ranges, O, &Rep);
  ir::verifyOrThrow(*G);
  EXPECT_EQ(Rep.QuantizedNodes, 5); // conv1, conv2, add, pool, fc
  EXPECT_EQ(Rep.FloatNodes, 0);
  EXPECT_EQ(Rep.WeightBytesAfter * 4, Rep.WeightBytesBefore);
  // Weights are s8 per channel, biases i32; every f32 weight is gone.
  EXPECT_EQ(G->lookup("w1_quantized")->data().dtype(), DType::I8);
  EXPECT_EQ(G->lookup("w1_scale")->data().numel(), 4);
  EXPECT_EQ(G->lookup("b1_quantized")->data().dtype(), DType::I32);
  EXPECT_EQ(G->lookup("w1"), nullptr);
  // MaxPool and Flatten pass the quantized tensor on with its parameters.
  const ir::Node *PoolQ = G->lookup("p1_quantized")->producer();
  EXPECT_EQ(PoolQ->input(1), G->lookup("r1_scale"));
  EXPECT_NE(G->lookup("f_quantized"), nullptr);
  // The graph output keeps its name, now dequantized.
  EXPECT_EQ(G->outputs()[0]->name(), "y");
  EXPECT_EQ(G->outputs()[0]->producer()->op(), OpKind::DequantizeLinear);
  EXPECT_EQ(countOps(*G, OpKind::QuantizeLinear), 8);
  double Err = relativeError(*Float, *G, randomBatches(1, 2, 555)[0]);
  EXPECT_LT(Err, 0.05) << "quantized outputs are far from float";
  EXPECT_GT(Err, 0.0) << "nothing was quantized";
}

TEST(QuantizeTest, KeepFloatPatternsMatchNamesAndScopes) {
  auto G = smallCnn();
  quant::QuantizeOptions O;
  O.KeepFloat = {"layer2.*", "fc"};
  quant::QuantizeReport Rep;
  quant::quantizeStatic(*G, calibrated(*G, O), O, &Rep);
  EXPECT_EQ(Rep.FloatNodes, 2);
  EXPECT_EQ(Rep.QuantizedNodes, 3);
  EXPECT_NE(G->lookup("w2"), nullptr); // still f32
  EXPECT_EQ(G->lookup("w2_quantized"), nullptr);
  EXPECT_NE(G->lookup("fw"), nullptr);
  bool Found = false;
  for (const auto &E : Rep.Nodes)
    if (E.Node == "layer2.conv") {
      Found = true;
      EXPECT_FALSE(E.Quantized);
      EXPECT_NE(E.Reason.find("keep-float"), std::string::npos);
    }
  EXPECT_TRUE(Found);
}

TEST(QuantizeTest, HistogramMethodsClipInsideTheObservedRange) {
  auto G = smallCnn();
  quant::QuantizeOptions MinMax;
  auto Names = quant::activationsToCalibrate(*G, MinMax);
  auto Data = randomBatches(3, 2, 7);
  auto Full = quant::calibrate(*G, Names, Data, MinMax, "reference");
  for (auto M : {quant::CalibrationMethod::Percentile,
                 quant::CalibrationMethod::Entropy}) {
    quant::QuantizeOptions O;
    O.Method = M;
    O.Percentile = 99.0;
    auto R = quant::calibrate(*G, Names, Data, O, "reference");
    bool Clipped = false;
    for (const auto &[Name, Rg] : R) {
      EXPECT_GE(Rg.Min, Full.at(Name).Min) << Name;
      EXPECT_LE(Rg.Max, Full.at(Name).Max) << Name;
      EXPECT_LE(Rg.Min, Rg.Max) << Name;
      Clipped |= Rg.Max < Full.at(Name).Max || Rg.Min > Full.at(Name).Min;
    }
    EXPECT_TRUE(Clipped) << quant::calibrationMethodName(M);
  }
  // The 100th percentile keeps the whole range (to a bin's width).
  quant::QuantizeOptions All;
  All.Method = quant::CalibrationMethod::Percentile;
  All.Percentile = 100;
  auto R = quant::calibrate(*G, Names, Data, All, "reference");
  for (const auto &[Name, Rg] : R)
    EXPECT_NEAR(Rg.Max, Full.at(Name).Max, 1e-5 + 1e-6 * Full.at(Name).Max);
}

TEST(QuantizeTest, FuseQdqMakesQLinearOpsWithinOneStep) {
  auto G = smallCnn();
  quant::QuantizeOptions O;
  quant::quantizeStatic(*G, calibrated(*G, O), O);
  std::unique_ptr<ir::Graph> Qdq = G->clone();
  auto P = passes::createPass("fuse-qdq");
  EXPECT_TRUE(P->run(*G));
  ir::verifyOrThrow(*G);
  // conv1, conv2 and the classifier (a Gemm: a 1x1 QLinearConv between
  // two Reshapes).
  EXPECT_EQ(countOps(*G, OpKind::QLinearConv), 3);
  EXPECT_EQ(countOps(*G, OpKind::Conv), 0);
  EXPECT_EQ(countOps(*G, OpKind::Gemm), 0);
  EXPECT_EQ(G->lookup("y_quantized")->producer()->op(), OpKind::Reshape);
  EXPECT_EQ(countOps(*G, OpKind::Relu), 1); // after the Add
  EXPECT_EQ(P->statistics().at("fuse-qdq"), 3);
  // conv1's Relu is absorbed (u8, zero point 0).
  EXPECT_EQ(G->lookup("r1_quantized")->producer()->op(), OpKind::QLinearConv);
  // MaxPool and Flatten move the u8 values themselves.
  const ir::Node *Pool = G->lookup("p1_quantized")->producer();
  EXPECT_EQ(Pool->op(), OpKind::MaxPool);
  EXPECT_EQ(Pool->input(0)->type().dtype(), DType::U8);
  EXPECT_EQ(G->lookup("f_quantized")->producer()->op(), OpKind::Flatten);
  EXPECT_EQ(P->statistics().at("fuse-qdq-pass-through"), 2);
  auto In = randomBatches(1, 2, 77)[0];
  double Err = relativeError(*Qdq, *G, In);
  EXPECT_LT(Err, 0.02);
}

TEST(QuantizeTest, FuseQdqMatMulPerColumn) {
  std::string Text = std::string("graph \"mm\" {\n  input %a: f32[N,6]\n") +
                     "  init %w: f32[6,4]" + Elided +
                     "  %y = MatMul(%a, %w)\n  %z = Relu(%y)\n"
                     "  output %z\n}\n";
  auto G = parseWithRandomWeights(Text, 5);
  quant::QuantizeOptions O;
  auto Names = quant::activationsToCalibrate(*G, O);
  std::vector<quant::Batch> Data = {
      {randomTensor(Shape{4, 6}, DType::F32, 1)},
      {randomTensor(Shape{4, 6}, DType::F32, 2)}};
  auto R = quant::calibrate(*G, Names, Data, O, "reference");
  quant::quantizeStatic(*G, R, O);
  EXPECT_EQ(G->lookup("w_scale")->data().numel(), 4);
  auto P = passes::createPass("fuse-qdq");
  EXPECT_TRUE(P->run(*G));
  EXPECT_EQ(countOps(*G, OpKind::QLinearMatMul), 1);
  auto Out = backends::runReference(*G, Data[0]);
  EXPECT_EQ(Out[0].shape(), (Shape{4, 4}));
}

TEST(QuantizeTest, DynamicQuantizationOfMatMulAndGemm) {
  std::string Text = std::string("graph \"mlp\" {\n  input %x: f32[N,8]\n") +
                     "  init %w1: f32[8,16]" + Elided + "  init %b1: f32[16]" +
                     Elided + "  init %w2: f32[3,16]" + Elided +
                     "  init %b2: f32[3]" + Elided +
                     "  %h = MatMul(%x, %w1)\n  %hb = Add(%h, %b1)\n"
                     "  %r = Relu(%hb)\n"
                     "  %y = Gemm(%r, %w2, %b2) {transB = 1, alpha = 0.5, "
                     "beta = 2.0}\n"
                     "  output %y\n}\n";
  auto G = parseWithRandomWeights(Text, 9);
  std::unique_ptr<ir::Graph> Float = G->clone();
  quant::QuantizeOptions O;
  quant::QuantizeReport Rep;
  quant::quantizeDynamic(*G, O, &Rep);
  ir::verifyOrThrow(*G);
  EXPECT_EQ(Rep.QuantizedNodes, 2);
  EXPECT_EQ(countOps(*G, OpKind::MatMulInteger), 2);
  EXPECT_EQ(countOps(*G, OpKind::DynamicQuantizeLinear), 2);
  EXPECT_EQ(countOps(*G, OpKind::MatMul) + countOps(*G, OpKind::Gemm), 0);
  EXPECT_EQ(G->outputs()[0]->name(), "y");
  double Err =
      relativeError(*Float, *G, {randomTensor(Shape{5, 8}, DType::F32, 4)});
  EXPECT_LT(Err, 0.03);
}

TEST(QuantizeTest, BadInputIsAClearError) {
  auto G = smallCnn();
  quant::QuantizeOptions O;
  auto Names = quant::activationsToCalibrate(*G, O);
  try {
    quant::calibrate(*G, Names, {}, O, "reference");
    FAIL() << "an empty calibration set was accepted";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("empty"), std::string::npos);
  }
  try {
    quant::calibrate(*G, {"nope"}, randomBatches(1, 1, 1), O, "reference");
    FAIL() << "an unknown value was accepted";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("'nope'"), std::string::npos);
  }
  // Wrong input shape: the backend's input check names the input.
  EXPECT_THROW(quant::calibrate(*G, Names,
                                {{randomTensor(Shape{1, 4, 8, 8}, DType::F32,
                                               1)}},
                                O, "reference"),
               Error);
  auto Plain = parseWithRandomWeights("graph \"relu\" {\n  input %x: f32[3]\n"
                                      "  %y = Relu(%x)\n  output %y\n}\n");
  try {
    quant::quantizeStatic(*Plain, {}, O);
    FAIL() << "a graph with nothing quantizable was accepted";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("nothing"), std::string::npos);
  }
  EXPECT_THROW(quant::quantizeDynamic(*Plain, O), Error);
  EXPECT_THROW(quant::parseCalibrationMethod("kl"), Error);
  // A keep-float pattern must name something; histogram options are checked.
  quant::QuantizeOptions Typo;
  Typo.KeepFloat = {"layer9.*"};
  try {
    quant::activationsToCalibrate(*G, Typo);
    FAIL() << "a keep-float pattern matching nothing was accepted";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("'layer9.*' matches no node"),
              std::string::npos)
        << E.what();
  }
  EXPECT_THROW(quant::quantizeDynamic(*Plain, Typo), Error);
  quant::QuantizeOptions Bad;
  Bad.Method = quant::CalibrationMethod::Percentile;
  Bad.Percentile = 0;
  EXPECT_THROW(quant::calibrate(*G, Names, randomBatches(1, 1, 1), Bad,
                                "reference"),
               Error);
  Bad.Percentile = 99;
  Bad.HistogramBins = 16;
  EXPECT_THROW(quant::calibrate(*G, Names, randomBatches(1, 1, 1), Bad,
                                "reference"),
               Error);
  // A missing range is named.
  try {
    quant::quantizeStatic(*G, {}, O);
    FAIL() << "missing ranges were accepted";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("no calibrated range"),
              std::string::npos);
  }
}
