//===- QuantizedRecurrentOrtTest.cpp - Quantized LSTM/GRU files in ORT ----===//
//
// LSTMs (forward, bidirectional) and a GRU with random weights, quantized
// dynamically and saved as ONNX: the file imports back (the contrib op
// com.microsoft.DynamicQuantizeLSTM with its domain and opset import) and
// computes what the graph computed; it is smaller than the float file;
// ONNX Runtime (onnxruntime-node, one intra-op thread: see below) runs it
// and agrees with our reference backend's run of the same file. Skips with
// the reason when node or onnxruntime-node is missing.
//
// Tolerances. Against ORT, 2e-3: both quantize X and H the same way and
// accumulate exactly in i32, but ORT's sigmoid/tanh are approximations, so
// an H value near a rounding boundary can land one u8 step away at the
// next step; that moves a gate by about h_scale * |r| (1e-3 here) and the
// difference stays at that size. Weight-only GRU: the same float GRU in
// both, 1e-5. With more intra-op threads ORT quantizes H per share of the
// batch rows, which is a different (thread-dependent) computation.
//
//===----------------------------------------------------------------------===//

#include "OrtTestUtils.h"
#include "nngraph/frontend/ModelIO.h"
#include "nngraph/passes/Quantize.h"
#include "passes/FusionTestUtils.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

using namespace nng;
using namespace nng::fusion_test;
namespace quant = nng::passes::quant;

namespace {

const char *Elided = " = elided(\"fnv1a64:0000000000000000\")\n";

/// Op over X [seq 7, batch 2, input 16] with hidden 32, biases, every
/// output; weights in [-1, 1) scaled down to keep the gates unsaturated.
std::unique_ptr<ir::Graph> recurrent(const std::string &Op,
                                     const std::string &Dir) {
  int64_t D = Dir == "bidirectional" ? 2 : 1, G = Op == "LSTM" ? 4 : 3;
  auto Dims = [&](int64_t A, int64_t B) {
    return std::to_string(D) + "," + std::to_string(A) +
           (B ? "," + std::to_string(B) : "");
  };
  std::string Outs = Op == "LSTM" ? "%y, %yh, %yc" : "%y, %yh";
  std::string Text =
      "graph \"" + Op + "\" {\n  input %x: f32[7,2,16]\n" + "  init %w: f32[" +
      Dims(G * 32, 16) + "]" + Elided + "  init %r: f32[" + Dims(G * 32, 32) +
      "]" + Elided + "  init %b: f32[" + Dims(2 * G * 32, 0) + "]" + Elided +
      "  " + Outs + " = " + Op + "(%x, %w, %r, %b) {direction = \"" + Dir +
      "\", hidden_size = 32} name(\"rnn\")\n  output " + Outs + "\n}\n";
  auto Gr = parseWithRandomWeights(Text, 17);
  for (const char *Name : {"w", "r"}) {
    ir::Value *V = Gr->lookup(Name);
    rt::Tensor T = V->data().clone();
    for (int64_t I = 0; I < T.numel(); ++I)
      T.setFlat(I, T.getFlat(I) * 0.4);
    V->setData(T);
  }
  return Gr;
}

double maxDiff(const std::vector<rt::Tensor> &A,
               const std::vector<test::NamedTensor> &B) {
  EXPECT_EQ(A.size(), B.size());
  double M = 0;
  for (size_t O = 0; O < A.size() && O < B.size(); ++O) {
    EXPECT_EQ(A[O].shape(), B[O].T.shape()) << B[O].Name;
    for (int64_t I = 0; I < A[O].numel(); ++I)
      M = std::max(M, std::fabs(A[O].getFlat(I) - B[O].T.getFlat(I)));
  }
  return M;
}

double maxDiff(const std::vector<rt::Tensor> &A,
               const std::vector<rt::Tensor> &B) {
  std::vector<test::NamedTensor> Named;
  for (const rt::Tensor &T : B)
    Named.push_back({"", T});
  return maxDiff(A, Named);
}

std::string readFile(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(In)),
                     std::istreambuf_iterator<char>());
}

/// Quantizes Op dynamically, saves float and int8 files, checks the round
/// trip, the size and ORT's agreement (within OrtTol) with our reference
/// run of the saved file, and prints the numbers.
void check(const std::string &Op, const std::string &Dir, double FloatTol,
           double OrtTol) {
  std::string Tag = Op + "_" + Dir;
  auto Float = recurrent(Op, Dir);
  auto G = Float->clone();
  quant::QuantizeReport Rep;
  quant::quantizeDynamic(*G, {}, &Rep);
  ASSERT_EQ(Rep.QuantizedNodes, 1);
  std::string Dir_ = test::freshTestDir("quant_rnn_" + Tag);
  std::string FloatPath = Dir_ + "/float.onnx", QPath = Dir_ + "/int8.onnx";
  frontend::saveModel(*Float, FloatPath);
  frontend::saveModel(*G, QPath);
  auto FloatBytes = std::filesystem::file_size(FloatPath);
  auto QBytes = std::filesystem::file_size(QPath);
  EXPECT_LT(QBytes * 10, FloatBytes * 4) << Tag << ": the file hardly shrank";
  bool Contrib = Op == "LSTM";
  std::string Bytes = readFile(QPath);
  EXPECT_EQ(Bytes.find("com.microsoft") != std::string::npos, Contrib) << Tag;

  // Round trip: the same op comes back and computes the same.
  std::unique_ptr<ir::Graph> Loaded = frontend::loadModel(QPath);
  int Ops = 0;
  for (const auto &N : Loaded->nodes())
    Ops += N->op() == ir::OpKind::DynamicQuantizeLSTM;
  EXPECT_EQ(Ops, Contrib ? 1 : 0) << Tag;
  rt::Tensor X = randomTensor(Shape{7, 2, 16}, DType::F32, 99, -2, 2);
  auto Ours = backends::runReference(*Loaded, {X});
  EXPECT_EQ(maxDiff(backends::runReference(*G, {X}), Ours), 0) << Tag;
  double VsFloat = maxDiff(backends::runReference(*Float, {X}), Ours);
  EXPECT_LT(VsFloat, FloatTol) << Tag;

  test::ExternalRun Ort = test::runOrt(QPath, {X}, /*Threads=*/1);
  if (Ort.skipped())
    GTEST_SKIP() << Ort.SkipReason;
  double VsOrt = maxDiff(Ours, Ort.Outputs);
  EXPECT_LE(VsOrt, OrtTol) << Tag;
  test::ExternalRun OrtFloat = test::runOrt(FloatPath, {X}, 1);
  double OrtVsOrt = maxDiff(
      [&] {
        std::vector<rt::Tensor> V;
        for (const auto &T : OrtFloat.Outputs)
          V.push_back(T.T);
        return V;
      }(),
      Ort.Outputs);
  double FloatVsOrt =
      maxDiff(backends::runReference(*Float, {X}), OrtFloat.Outputs);
  std::cout << Tag << " (" << Ort.Version << "): float file, max |nngraph - "
            << "ORT| " << FloatVsOrt << "\n";
  std::cout << Tag << " (" << Ort.Version << "): file " << FloatBytes << " -> "
            << QBytes << " bytes; max |int8 - float| " << VsFloat
            << " (ORT: " << OrtVsOrt << "); max |nngraph - ORT| on the int8 "
            << "file " << VsOrt << "\n";
}

} // namespace

TEST(QuantizedRecurrentOrtTest, LstmForwardAgreesWithOrt) {
  check("LSTM", "forward", 0.05, 2e-3);
}

TEST(QuantizedRecurrentOrtTest, LstmBidirectionalAgreesWithOrt) {
  check("LSTM", "bidirectional", 0.05, 2e-3);
}

TEST(QuantizedRecurrentOrtTest, GruWeightOnlyAgreesWithOrt) {
  check("GRU", "forward", 0.03, 1e-5);
  check("GRU", "bidirectional", 0.03, 1e-5);
}
