//===- ControlFlowOrtTest.cpp - If and Loop against ONNX Runtime and torch -===//
//
// Control flow end to end: (1) a graph with regions (an If nested in a
// Loop's body reading values two scopes out, loop-carried values that grow,
// scan outputs, an If whose branches give different shapes, a Scan over the
// Loop's scan output writing backwards; a body value %m named like an
// outer one, which ONNX forbids, so export renames it) exported to
// ONNX passes ONNX's checker, runs in ONNX Runtime with the outputs of both
// nngraph backends, and imports back to the same results; (2) a PyTorch
// model with data-dependent `while` and `if` (torch.jit.script, then
// torch.onnx.export at opset 16: Loop and If nodes whose bodies read the
// weights and the inputs; tests/fx/scripts/control_flow_export.py) runs on
// both backends with PyTorch's and ONNX Runtime's outputs. SKIPs with the
// reason when node, onnxruntime-node or a Python with torch is missing.
//
//===----------------------------------------------------------------------===//

#include "OrtTestUtils.h"
#include "common/Subprocess.h"

#include "nngraph/backends/Backend.h"
#include "nngraph/frontend/onnx/OnnxExport.h"
#include "nngraph/frontend/onnx/OnnxImport.h"
#include "nngraph/ir/Parser.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace fs = std::filesystem;
using namespace nng;
using nng::rt::Tensor;

namespace {

std::vector<Tensor> runOn(std::string_view Backend, const ir::Graph &G,
                          const std::vector<Tensor> &Inputs) {
  return backends::getBackend(Backend).compile(G)->run(Inputs);
}

/// Expects Got[i] close to Want[i] for every output.
void expectClose(const std::vector<Tensor> &Got,
                 const std::vector<Tensor> &Want, const std::string &What,
                 double Atol = 1e-5, double Rtol = 1e-4) {
  ASSERT_EQ(Got.size(), Want.size()) << What;
  for (size_t I = 0; I < Want.size(); ++I)
    EXPECT_EQ(test::compareTensors(Got[I], Want[I], Atol, Rtol), "")
        << What << ", output " << I;
}

const char *Text = R"(graph "control_flow" {
  input %x: f32[2]
  input %m: i64[]
  init %w: f32[2] = [1, -1]
  init %empty: f32[0] = []
  %y, %trace, %steps = Loop(%m, _, %x, %empty) {body = graph {
    input %i: i64[]
    input %go: bool[]
    input %a: f32[2]
    input %tr: f32[?]
    %two = Constant() {value = tensor<i64[]> [2]}
    %r = Mod(%i, %two)
    %zero = Constant() {value = tensor<i64[]> [0]}
    %even = Equal(%r, %zero)
    %b = If(%even) {then_branch = graph {
      %p = Add(%a, %w)
      output %p
    }, else_branch = graph {
      %q = Mul(%a, %x)
      output %q
    }}
    %m = ReduceSum(%b) {keepdims = 1}
    %tr2 = Concat(%tr, %m) {axis = 0}
    output %go, %b, %tr2, %b
  }}
  %pos = ReduceSum(%y) {keepdims = 0}
  %zf = Constant() {value = tensor<f32[]> [0]}
  %c = Greater(%pos, %zf)
  %z = If(%c) {then_branch = graph {
    %cat = Concat(%y, %w) {axis = 0}
    output %cat
  }, else_branch = graph {
    output %x
  }}
  %cum, %cums = Scan(%w, %steps) {body = graph {
    input %acc: f32[2]
    input %row: f32[2]
    %next = Add(%acc, %row)
    %scaled = Mul(%next, %x)
    output %next, %scaled
  }, num_scan_inputs = 1, scan_output_directions = [1]}
  output %y, %trace, %steps, %z, %cum, %cums
})";

TEST(ControlFlowOrt, ExportedRegionsRunInOnnxRuntime) {
  auto G = ir::parseGraph(Text, "control_flow.nng");
  std::vector<Tensor> In{Tensor::fromVector<float>({2, 3}, Shape{2}),
                         Tensor::scalar<int64_t>(3)};
  std::vector<Tensor> Ref = runOn("reference", *G, In);
  // x = [2, 3]: [3, 2], [6, 6], [7, 5]; sums 5, 12, 12; z = [7, 5, 1, -1].
  EXPECT_EQ(test::compareTensors(Ref[1],
                                 Tensor::fromVector<float>({5, 12, 12},
                                                           Shape{3}),
                                 0, 0),
            "");
  EXPECT_EQ(Ref[3].shape(), Shape{4});
  // Scan: w + rows = [4, 1], [10, 7], [17, 12]; times x, written backwards.
  EXPECT_EQ(test::compareTensors(
                Ref[5],
                Tensor::fromVector<float>({34, 36, 20, 21, 8, 3}, Shape{3, 2}),
                0, 0),
            "");
  expectClose(runOn("cpu", *G, In), Ref, "cpu backend");

  std::string Path = test::freshTestDir("cf") + "/control_flow.onnx";
  frontend::OnnxExportOptions O;
  O.Check = true; // ONNX's checker and strict shape inference.
  frontend::exportOnnx(*G, Path, O);
  auto Back = frontend::importOnnx(Path);
  expectClose(runOn("reference", *Back, In), Ref, "re-imported");

  test::ExternalRun Ort = test::runOrt(Path, In);
  if (Ort.skipped())
    GTEST_SKIP() << Ort.SkipReason;
  std::vector<Tensor> OrtOut;
  for (const test::NamedTensor &T : Ort.Outputs)
    OrtOut.push_back(T.T);
  expectClose(OrtOut, Ref, Ort.Version);
}

TEST(ControlFlowOrt, TorchScriptModelMatchesTorchAndOnnxRuntime) {
  std::string Dir = test::freshTestDir("torch-cf");
  std::string Out, Reasons;
  bool Made = false;
  for (const std::string &Py : test::pythonCandidates()) {
    Out.clear();
    int Status = test::runCommand(
        "OMP_NUM_THREADS=2 " + test::shellQuote(Py) + " " +
            test::shellQuote(NNGRAPH_SOURCE_DIR
                             "/tests/fx/scripts/control_flow_export.py") +
            " " + test::shellQuote(Dir),
        Out);
    if (Status == 0) {
      Made = true;
      break;
    }
    if (Status != test::OracleSkipStatus && Status != 127)
      FAIL() << "control_flow_export.py failed with " << Py << ":\n" << Out;
    Reasons += Py + ": " + Out + "; ";
  }
  if (!Made)
    GTEST_SKIP() << "no Python with torch: " << Reasons;
  std::vector<Tensor> In, Want;
  for (const test::NamedTensor &T : test::readTensorDir(Dir + "/inputs"))
    In.push_back(T.T);
  for (const test::NamedTensor &T : test::readTensorDir(Dir + "/expected"))
    Want.push_back(T.T);

  auto G = frontend::importOnnx(Dir + "/model.onnx");
  size_t Regions = 0;
  for (const auto &N : G->nodes())
    Regions += N->regions().size();
  EXPECT_GE(Regions, 3u) << "the export should hold a Loop and Ifs";
  std::vector<Tensor> Ref = runOn("reference", *G, In);
  expectClose(Ref, Want, "reference vs torch");
  expectClose(runOn("cpu", *G, In), Want, "cpu vs torch");

  test::ExternalRun Ort = test::runOrt(Dir + "/model.onnx", In);
  if (Ort.skipped())
    GTEST_SKIP() << Ort.SkipReason;
  std::vector<Tensor> OrtOut;
  for (const test::NamedTensor &T : Ort.Outputs)
    OrtOut.push_back(T.T);
  expectClose(Ref, OrtOut, "reference vs " + Ort.Version);
  // nngraph's export of the imported model runs in ORT too.
  std::string Again = Dir + "/again.onnx";
  frontend::exportOnnx(*G, Again);
  test::ExternalRun Ort2 = test::runOrt(Again, In);
  ASSERT_FALSE(Ort2.skipped()) << Ort2.SkipReason;
  std::vector<Tensor> Ort2Out;
  for (const test::NamedTensor &T : Ort2.Outputs)
    Ort2Out.push_back(T.T);
  expectClose(Ort2Out, Want, "our re-export in " + Ort2.Version);
}

} // namespace
