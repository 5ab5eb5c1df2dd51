//===- Export.cpp - The trained model as ONNX, the data as .npz -----------===//
//
// Tracing with nng::fx::symbolic_trace (docs/fx.md) and saving through
// GraphModule::save; the arrays go through nng::weights::writeNpz, the
// writer of numpy.savez's format that nngraph-run --inputs reads back.
//
//===----------------------------------------------------------------------===//

#include "Export.h"

#include "nngraph/frontend/ModelIO.h"
#include "nngraph/frontend/fx/Trace.h"
#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/ir/Graph.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace fmnist {

namespace {

/// Images [Count, 1, Rows, Cols] (normalized) and labels [Count] of the
/// first Count examples of D.
std::pair<nng::rt::Tensor, nng::rt::Tensor> firstExamples(const Dataset &D,
                                                          int64_t Count) {
  std::vector<int64_t> Order(static_cast<size_t>(Count));
  std::iota(Order.begin(), Order.end(), 0);
  nng::rt::Tensor X = nng::rt::Tensor::empty(
      nng::Shape{Count, 1, D.Rows, D.Cols}, nng::DType::F32);
  nng::rt::Tensor Y =
      nng::rt::Tensor::empty(nng::Shape{Count}, nng::DType::I64);
  gatherBatch(D, Order, 0, Count, X.data<float>(), Y.data<int64_t>());
  return {std::move(X), std::move(Y)};
}

void writeArrays(const std::filesystem::path &Path,
                 std::vector<nng::weights::TensorMap::Entry> Arrays) {
  try {
    nng::weights::writeNpz(Path.string(),
                           nng::weights::TensorMap(std::move(Arrays)));
  } catch (const std::exception &E) {
    throw std::runtime_error("cannot write " + Path.string() + ": " + E.what());
  }
}

} // namespace

void checkExportPath(const std::string &Path) {
  try {
    nng::frontend::formatForPath(Path);
  } catch (const std::exception &E) {
    throw std::invalid_argument("--export " + Path + ": " + E.what());
  }
}

std::string exportModel(nng::nn::ModuleBase &Model, const std::string &Path) {
  const bool WasTraining = Model.is_training();
  Model.eval();
  nng::fx::GraphModule Traced = [&] {
    try {
      return nng::fx::symbolic_trace(Model,
                                     {nng::fx::InputSpec({"N", 1, 28, 28})});
    } catch (...) {
      Model.train(WasTraining);
      throw;
    }
  }();
  Model.train(WasTraining);
  const nng::ir::Graph &G = Traced.graph();
  const nng::ir::Value *In = G.inputs().at(0);
  if (!Path.empty()) {
    Traced.save(Path);
    std::printf("exported: %s (%s, %zu nodes, input %s: %s)\n", Path.c_str(),
                Model.type_name().c_str(), G.numNodes(), In->name().c_str(),
                In->type().toString().c_str());
  }
  return In->name();
}

void exportData(const Dataset &Train, const Dataset &Test,
                const std::string &Dir, const std::string &InputName) {
  namespace fs = std::filesystem;
  std::error_code Ec;
  fs::create_directories(Dir, Ec);
  if (Ec)
    throw std::runtime_error("--export-data: cannot create the folder " + Dir +
                             ": " + Ec.message());
  const int64_t Calib = std::min(CalibrationImages, Train.Count);
  auto [CalibX, CalibY] = firstExamples(Train, Calib);
  writeArrays(fs::path(Dir) / "calib.npz", {{InputName, CalibX}});
  auto [TestX, TestY] = firstExamples(Test, Test.Count);
  writeArrays(fs::path(Dir) / "test.npz", {{InputName, TestX}});
  writeArrays(fs::path(Dir) / "test_labels.npz", {{"labels", TestY}});
  std::printf("exported data: %s/{calib.npz (%lld training images), test.npz "
              "(%lld test images) as '%s', test_labels.npz}\n",
              Dir.c_str(), static_cast<long long>(Calib),
              static_cast<long long>(Test.Count), InputName.c_str());
}

} // namespace fmnist
