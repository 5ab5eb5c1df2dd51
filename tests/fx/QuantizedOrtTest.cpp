//===- QuantizedOrtTest.cpp - Our QDQ files in ONNX Runtime ---------------===//
//
// The zoo's resnet18 (input {"N", 3, 32, 32}) and mobilenet_v2 are traced
// with random weights, prepared as nngraph-quantize prepares them,
// calibrated on random batches and quantized statically (and an MLP
// dynamically); the QDQ file we write runs in ONNX Runtime (onnxruntime-
// node), which must agree with our reference backend's run of the same
// file within one quantization step of the output (ORT fuses Q/DQ into
// int8 kernels whose requantization rounds differently). The fuse-qdq
// form (QLinearConv) is held to the same bound. Skips with the reason when
// node or onnxruntime-node is missing.
//
//===----------------------------------------------------------------------===//

#include "FxTestUtils.h"
#include "OrtTestUtils.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/ir/Inputs.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/frontend/ModelIO.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/fx/GraphModule.h"
#include "nngraph/frontend/fx/Trace.h"
#include "nngraph/frontend/zoo/Zoo.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/passes/PassManager.h"
#include "nngraph/passes/PassRegistry.h"
#include "nngraph/passes/Quantize.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace nng;
namespace quant = nng::passes::quant;

namespace {

constexpr const char *Prep =
    "shape-infer,canonicalize,fold-conv-bn,fold-conv-mul-add,"
    "fuse-pad-into-conv,fuse-reshapes,fuse-matmul-add,cse,"
    "dedup-initializers,canonicalize,dce";

/// The scale of the QuantizeLinear feeding graph output 0 (its last
/// quantization step), or 0 when the output is not dequantized.
double outputStep(const ir::Graph &G) {
  const ir::Node *DQ = G.outputs()[0]->producer();
  if (!DQ || DQ->op() != ir::OpKind::DequantizeLinear)
    return 0;
  return ir::constantValue(DQ->input(1))->getFlat(0);
}

/// Max |a - b| over two tensors of the same shape.
double maxDiff(const rt::Tensor &A, const rt::Tensor &B) {
  EXPECT_EQ(A.shape(), B.shape());
  double M = 0;
  for (int64_t I = 0; I < A.numel(); ++I)
    M = std::max(M, std::fabs(A.getFlat(I) - B.getFlat(I)));
  return M;
}

/// Traces zoo Arch in eval mode at input {N, PerItem...} and prepares it.
std::unique_ptr<ir::Graph> traced(const std::string &Arch,
                                  const std::vector<fx::Dim> &PerItem) {
  manual_seed(3);
  nn::ModulePtr M = zoo::create(Arch);
  fxtest::randomizeNorms(*M);
  M->eval();
  std::vector<fx::Dim> Dims{fx::Dim("N")};
  Dims.insert(Dims.end(), PerItem.begin(), PerItem.end());
  fx::GraphModule GM = fx::symbolic_trace(*M, {fx::InputSpec(Dims)});
  std::unique_ptr<ir::Graph> G = GM.graph().clone();
  passes::PassManager PM;
  PM.addPipeline(Prep);
  PM.run(*G);
  return G;
}

std::vector<quant::Batch> batches(const ir::Graph &G, int Count, int64_t N) {
  std::vector<quant::Batch> B;
  for (int I = 0; I < Count; ++I)
    B.push_back(ir::makeDeterministicInputs(G, {{"N", N}}, 40 + I));
  return B;
}

/// Saves G as ONNX, runs it in ORT and on our reference backend (the
/// graph as saved, and after fuse-qdq) on the same input, and checks they
/// agree within Steps quantization steps of the output.
void checkAgainstOrt(const ir::Graph &G, const std::string &Tag,
                     double Steps) {
  std::string Dir = test::freshTestDir(Tag);
  std::string Path = Dir + "/" + Tag + ".int8.onnx";
  frontend::saveModel(G, Path);
  std::unique_ptr<ir::Graph> Loaded = frontend::loadModel(Path);
  auto In = ir::makeDeterministicInputs(*Loaded, {{"N", 2}}, 777);
  test::ExternalRun Ort = test::runOrt(Path, In);
  if (Ort.skipped())
    GTEST_SKIP() << Ort.SkipReason;
  auto Ours = backends::runReference(*Loaded, In);
  double Step = outputStep(*Loaded);
  // The check means something only when the outputs vary.
  double Lo = INFINITY, Hi = -INFINITY;
  for (int64_t I = 0; I < Ours[0].numel(); ++I) {
    Lo = std::min(Lo, Ours[0].getFlat(I));
    Hi = std::max(Hi, Ours[0].getFlat(I));
  }
  EXPECT_GT(Hi - Lo, 10 * Step) << Tag << ": the outputs hardly vary";
  double Diff = maxDiff(Ours[0], Ort.Outputs.at(0).T);
  if (Step > 0) {
    EXPECT_LE(Diff, Steps * Step * (1 + 1e-5))
        << Tag << ": ORT and nngraph differ by " << Diff / Step << " steps";
  } else {
    double Mag = 0;
    for (int64_t I = 0; I < Ours[0].numel(); ++I)
      Mag = std::max(Mag, std::fabs(Ours[0].getFlat(I)));
    EXPECT_LE(Diff, 0.01 * Mag) << Tag; // Dynamic: float outputs.
  }
  std::unique_ptr<ir::Graph> Fused = Loaded->clone();
  passes::createPass("fuse-qdq")->run(*Fused);
  auto F = backends::runReference(*Fused, In);
  double FusedDiff = maxDiff(Ours[0], F[0]);
  if (Step > 0)
    EXPECT_LE(FusedDiff, Steps * Step * (1 + 1e-5)) << Tag;
  std::cout << Tag << ": " << Ort.Version << ", outputs in [" << Lo << ", "
            << Hi << "], max difference to ORT "
            << (Step > 0 ? Diff / Step : Diff)
            << (Step > 0 ? " output steps" : "") << ", fuse-qdq "
            << (Step > 0 ? FusedDiff / Step : FusedDiff) << "\n";
}

} // namespace

TEST(QuantizedOrtTest, StaticResnet18RunsInOrtWithinOneStep) {
  auto G = traced("resnet18", {3, 32, 32});
  quant::QuantizeOptions O;
  auto Names = quant::activationsToCalibrate(*G, O);
  auto R = quant::calibrate(*G, Names, batches(*G, 2, 4), O, "reference");
  quant::quantizeStatic(*G, R, O);
  checkAgainstOrt(*G, "resnet18", 1);
}

TEST(QuantizedOrtTest, StaticMobilenetPerTensorRunsInOrtWithinOneStep) {
  auto G = traced("mobilenet_v2", {3, 32, 32});
  quant::QuantizeOptions O;
  O.PerChannel = false;
  O.Method = quant::CalibrationMethod::Percentile;
  auto Names = quant::activationsToCalibrate(*G, O);
  auto R = quant::calibrate(*G, Names, batches(*G, 2, 2), O, "reference");
  quant::quantizeStatic(*G, R, O);
  checkAgainstOrt(*G, "mobilenet_v2", 1);
}

TEST(QuantizedOrtTest, DynamicMlpRunsInOrt) {
  auto G = traced("mlp", {784});
  quant::quantizeDynamic(*G, {});
  checkAgainstOrt(*G, "mlp-dynamic", 0);
}

TEST(QuantizedOrtTest, TorchQdqExportImportsAndMatchesTorch) {
  std::string Dir = test::freshTestDir("torch-qdq");
  std::string Model = Dir + "/torch_qdq.onnx";
  std::string Skip = test::makeTorchQdqExport(Model, Dir + "/data");
  if (!Skip.empty())
    GTEST_SKIP() << Skip;
  auto Data = test::readTensorDir(Dir + "/data");
  ASSERT_EQ(Data.size(), 2u);
  std::unique_ptr<ir::Graph> G = frontend::loadModel(Model);
  double Step = outputStep(*G);
  ASSERT_GT(Step, 0);
  for (const char *Backend : {"reference", "cpu"}) {
    auto Exe = backends::getBackend(Backend).compile(*G);
    auto Y = Exe->run({Data[0].T});
    // torch's qnnpack requantizes in fixed point, we in float: ties may
    // round apart, so one output step (measured: 1 of 128 values).
    EXPECT_EQ(test::compareTensors(Y[0], Data[1].T, Step * (1 + 1e-5), 0), "")
        << Backend;
  }
}
