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
// Tolerances. Against ORT, 1e-5 (measured: 2.4e-7, 2.6e-7 for the GRU):
// both quantize X and H alike and accumulate exactly in i32; what is left
// is f32 rounding and ORT's approximate sigmoid/tanh (MLAS). Should one H
// value land one u8 step away at some step, the difference would be about
// h_scale * |r| (1e-3 here): that would be a change in ORT's arithmetic
// worth a look. ORT must run with one intra-op thread: with more, it
// quantizes H per share of the batch rows, a thread-dependent computation
// (measured: 9e-4 between its own 1- and 2-thread runs). Against float,
// the outputs move by a few u8 steps of the inputs (measured 0.010).
//
//===----------------------------------------------------------------------===//

#include "OrtTestUtils.h"
#include "nngraph/frontend/ModelIO.h"
#include "nngraph/frontend/onnx/OnnxExport.h"
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
/// WithLens: also sequence_lens (an input) and initial_h.
std::unique_ptr<ir::Graph> recurrent(const std::string &Op,
                                     const std::string &Dir, bool WithLens) {
  int64_t D = Dir == "bidirectional" ? 2 : 1, G = Op == "LSTM" ? 4 : 3;
  auto Dims = [&](int64_t A, int64_t B) {
    return std::to_string(D) + "," + std::to_string(A) +
           (B ? "," + std::to_string(B) : "");
  };
  std::string Outs = Op == "LSTM" ? "%y, %yh, %yc" : "%y, %yh";
  std::string Text = "graph \"" + Op + "\" {\n  input %x: f32[7,2,16]\n";
  if (WithLens)
    Text +=
        "  input %lens: i32[2]\n  init %h0: f32[" + Dims(2, 32) + "]" + Elided;
  Text += "  init %w: f32[" + Dims(G * 32, 16) + "]" + Elided +
          "  init %r: f32[" + Dims(G * 32, 32) + "]" + Elided +
          "  init %b: f32[" + Dims(2 * G * 32, 0) + "]" + Elided + "  " + Outs +
          " = " + Op + "(%x, %w, %r, %b" + (WithLens ? ", %lens, %h0" : "") +
          ") {direction = \"" + Dir +
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
           double OrtTol, bool WithLens = false) {
  std::string Tag = Op + "_" + Dir + (WithLens ? "_lens" : "");
  auto Float = recurrent(Op, Dir, WithLens);
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
  // The ONNX checker accepts it (a contrib op with its opset import).
  EXPECT_NO_THROW(frontend::checkOnnxModel(QPath)) << Tag;

  // Round trip: the same op comes back and computes the same.
  std::unique_ptr<ir::Graph> Loaded = frontend::loadModel(QPath);
  int Ops = 0;
  for (const auto &N : Loaded->nodes())
    Ops += N->op() == ir::OpKind::DynamicQuantizeLSTM;
  EXPECT_EQ(Ops, Contrib ? 1 : 0) << Tag;
  std::vector<rt::Tensor> In{
      randomTensor(Shape{7, 2, 16}, DType::F32, 99, -2, 2)};
  if (WithLens)
    In.push_back(rt::Tensor::fromVector<int32_t>({7, 4}, Shape{2}));
  auto Ours = backends::runReference(*Loaded, In);
  EXPECT_EQ(maxDiff(backends::runReference(*G, In), Ours), 0) << Tag;
  double VsFloat = maxDiff(backends::runReference(*Float, In), Ours);
  EXPECT_LT(VsFloat, FloatTol) << Tag;

  test::ExternalRun Ort = test::runOrt(QPath, In, /*Threads=*/1);
  if (Ort.skipped())
    GTEST_SKIP() << Ort.SkipReason;
  double VsOrt = maxDiff(Ours, Ort.Outputs);
  EXPECT_LE(VsOrt, OrtTol) << Tag;
  test::ExternalRun OrtFloat = test::runOrt(FloatPath, In, 1);
  double OrtVsOrt = maxDiff(
      [&] {
        std::vector<rt::Tensor> V;
        for (const auto &T : OrtFloat.Outputs)
          V.push_back(T.T);
        return V;
      }(),
      Ort.Outputs);
  double FloatVsOrt =
      maxDiff(backends::runReference(*Float, In), OrtFloat.Outputs);
  std::cout << Tag << " (" << Ort.Version << "): float file, max |nngraph - "
            << "ORT| " << FloatVsOrt << "\n";
  std::cout << Tag << " (" << Ort.Version << "): file " << FloatBytes << " -> "
            << QBytes << " bytes; max |int8 - float| " << VsFloat
            << " (ORT: " << OrtVsOrt << "); max |nngraph - ORT| on the int8 "
            << "file " << VsOrt << "\n";
}

} // namespace

TEST(QuantizedRecurrentOrtTest, LstmForwardAgreesWithOrt) {
  check("LSTM", "forward", 0.03, 1e-5);
}

TEST(QuantizedRecurrentOrtTest, LstmBidirectionalAgreesWithOrt) {
  check("LSTM", "bidirectional", 0.03, 1e-5);
}

// sequence_lens (7 and 4) with an initial state: the X range covers the
// steps run, rows past their length count as zero in H's range.
TEST(QuantizedRecurrentOrtTest, LstmSequenceLensAgreesWithOrt) {
  check("LSTM", "bidirectional", 0.03, 1e-5, /*WithLens=*/true);
}

TEST(QuantizedRecurrentOrtTest, GruWeightOnlyAgreesWithOrt) {
  check("GRU", "forward", 0.03, 1e-5);
  check("GRU", "bidirectional", 0.03, 1e-5);
}
