//===- OrtTestUtils.h - ONNX Runtime and PyTorch checks of exports -*- C++ -*-===//
//
// The harness that checks exported models outside nngraph:
// - runOrt() runs an .onnx file in ONNX Runtime (npm onnxruntime-node, CPU
//   execution provider) through tests/ort/run_onnx.mjs;
// - runTorchCheck() runs PyTorch's ONNX-free check (tests/fx/scripts/
//   torch_check.py): the torchvision / torch.nn architecture built in
//   python3-torch with the same weights, loaded from a state-dict file by key;
// - makeTorchReference() has torch_check.py create seeded weights (and,
//   optionally, a torch.onnx export of the same model, for the importer
//   round trip of OrtHarnessTest.cpp).
// Tensors travel as tensor folders: tensors.json ({"tensors": [{"name",
// "dtype", "shape", "file"}]}) plus raw little-endian row-major files.
// When node, onnxruntime-node, or a Python with torch is missing, the result
// carries a SkipReason that says what is missing and which command installs
// it; the caller GTEST_SKIPs with it. Any other failure throws nng::Error
// with the tool's output.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/runtime/Tensor.h"

#include <string>
#include <vector>

namespace nng::test {

/// A tensor and its name, as exchanged with ORT and PyTorch.
struct NamedTensor {
  std::string Name;
  rt::Tensor T;
};

/// Writes Ts as a tensor folder Dir (created; existing files replaced).
void writeTensorDir(const std::string &Dir, const std::vector<NamedTensor> &Ts);
/// Reads a tensor folder; throws Error(IO/Parse) naming the folder.
std::vector<NamedTensor> readTensorDir(const std::string &Dir);

/// What an external run gave: the outputs, or why it could not run.
struct ExternalRun {
  std::vector<NamedTensor> Outputs;
  /// Non-empty when the tool is not installed here (then no Outputs).
  std::string SkipReason;
  /// "onnxruntime-node 1.30.0", "torch 1.13.1", when known.
  std::string Version;
  bool skipped() const { return !SkipReason.empty(); }
};

/// Runs the model at ModelPath in ONNX Runtime with Inputs (bound by the
/// model's input order) on Threads intra-op threads; returns its outputs
/// in the model's output order. Node: $NNGRAPH_NODE, else `node` on PATH;
/// the package: $NNGRAPH_ORT_NODE_MODULES, else .cache/npm/node_modules.
ExternalRun runOrt(const std::string &ModelPath,
                   const std::vector<rt::Tensor> &Inputs, int Threads = 2);

/// Runs torch_check.py: builds Arch ("resnet18", "transformer_encoder"),
/// loads WeightsPath (.pt, .npz or a tensor folder) by state-dict key
/// (strict), runs it in eval mode on Inputs and returns its outputs.
ExternalRun runTorchCheck(const std::string &Arch,
                          const std::string &WeightsPath,
                          const std::vector<rt::Tensor> &Inputs);

/// Has torch_check.py build Arch with seeded random weights (batch norms get
/// non-trivial statistics) and write its state dict as a tensor folder
/// WeightsDir; when OnnxPath is not empty, also torch.onnx.export it there
/// (opset 17, dynamic batch dim "N", initializers named by state-dict key).
/// ExtraArgs go to the script (e.g. "--size 64"). Returns the skip reason,
/// or "" on success.
std::string makeTorchReference(const std::string &Arch,
                               const std::string &WeightsDir,
                               const std::string &OnnxPath,
                               const std::string &ExtraArgs = "");

/// Has torch_check.py quantize a small CNN with PyTorch's eager static
/// quantization and export it as ONNX QDQ to OnnxPath; OutDir receives the
/// input "x" and torch's quantized output "y" as a tensor folder. Returns
/// the skip reason, or "" on success.
std::string makeTorchQdqExport(const std::string &OnnxPath,
                               const std::string &OutDir);

/// A fresh empty folder for the running test (under the gtest temp dir).
std::string freshTestDir(const std::string &Tag);

/// "" when A and B have the same shape and |a-b| <= Atol + Rtol*|b|
/// everywhere (compared as double), else what differs and where.
std::string compareTensors(const rt::Tensor &A, const rt::Tensor &B,
                           double Atol, double Rtol);

/// max |a-b| over same-shaped A and B (as double); NaN when shapes differ.
double maxAbsDiff(const rt::Tensor &A, const rt::Tensor &B);

/// Deterministic pseudo-random f32 values in [-1, 1) of shape S.
rt::Tensor seededTensor(const Shape &S, uint32_t Seed);

} // namespace nng::test
