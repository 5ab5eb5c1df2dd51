//===- main.cpp - nngraph-demo: a zoo resnet18 traced to ONNX, checked ----===//
//
// The tour of nngraph in one program. It builds the zoo's resnet18
// (torchvision's module names), saves its weights as a PyTorch .pt file and
// loads them into a fresh model (strict, as a torchvision checkpoint would
// be), traces the C++ module with a dynamic batch dim N, exports the graph
// to ONNX, reloads the ONNX file, runs it at batch 2 on the CPU backend
// (oneDNN; the reference backend when the CPU backend is not built): the
// first run, which compiles for the shape, and the median of the runs
// after it, beside eager's; and checks the result against the eager
// model. Files go to argv[1] (default build/demo). Prints each step and
// OK, or MISMATCH and exits 1 when the graph and eager outputs differ by
// more than 1e-4.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/Backend.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/ModelIO.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/fx/Trace.h"
#include "nngraph/frontend/weights/Load.h"
#include "nngraph/frontend/zoo/Zoo.h"
#include "nngraph/ir/Graph.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int64_t BatchSize = 2;
constexpr double Tolerance = 1e-4;

double millisecondsSince(std::chrono::steady_clock::time_point Start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - Start)
      .count();
}

/// Runs Body N times and returns the median time of one, in ms.
template <typename Fn> double medianMs(int N, Fn &&Body) {
  std::vector<double> Ms;
  for (int I = 0; I < N; ++I) {
    auto Start = std::chrono::steady_clock::now();
    Body();
    Ms.push_back(millisecondsSince(Start));
  }
  std::sort(Ms.begin(), Ms.end());
  return Ms[Ms.size() / 2];
}

int runDemo(const std::filesystem::path &Dir) {
  using namespace nng;
  std::filesystem::create_directories(Dir);
  const std::string WeightsPath = (Dir / "resnet18.pt").string();
  const std::string OnnxPath = (Dir / "resnet18.onnx").string();

  // 1. A zoo model with torchvision's names, its weights saved as .pt.
  manual_seed(0);
  nn::ModulePtr Source = zoo::create("resnet18");
  weights::saveWeights(*Source, WeightsPath);
  std::printf("1. zoo resnet18: %lld parameters, weights saved to %s\n",
              static_cast<long long>(Source->num_parameters()),
              WeightsPath.c_str());

  // 2. A fresh model loads them strictly (every key, every shape).
  nn::ModulePtr Model = zoo::create("resnet18");
  weights::LoadResult Loaded = weights::loadWeights(*Model, WeightsPath);
  Model->eval();
  std::printf("2. loaded %s into a fresh resnet18 (strict; %zu missing, %zu "
              "unexpected keys)\n",
              WeightsPath.c_str(), Loaded.MissingKeys.size(),
              Loaded.UnexpectedKeys.size());

  // 3. Trace forward with a dynamic batch dim and export ONNX.
  auto Start = std::chrono::steady_clock::now();
  fx::GraphModule Traced =
      fx::symbolic_trace(*Model, {fx::InputSpec({"N", 3, 224, 224})});
  double TraceMs = millisecondsSince(Start);
  Traced.save(OnnxPath);
  const auto &Inits = Traced.graph().initializers();
  std::printf("3. traced in %.0f ms: %zu nodes, %zu initializers named by "
              "state_dict keys (e.g. %s); exported to %s\n",
              TraceMs, Traced.graph().numNodes(), Inits.size(),
              Inits.empty() ? "-" : Inits.front()->name().c_str(),
              OnnxPath.c_str());

  // 4. Reload the ONNX file and run it on the CPU backend.
  std::unique_ptr<ir::Graph> G = frontend::loadModel(OnnxPath);
  std::printf("4. reloaded %s: %s: %s -> %s: %s\n", OnnxPath.c_str(),
              G->inputs().at(0)->name().c_str(),
              G->inputs().at(0)->type().toString().c_str(),
              G->outputs().at(0)->name().c_str(),
              G->outputs().at(0)->type().toString().c_str());
  std::vector<std::string> Names = backends::backendNames();
  std::string BackendName =
      std::count(Names.begin(), Names.end(), "cpu") ? "cpu" : "reference";
  std::unique_ptr<backends::Executable> Exe =
      backends::getBackend(BackendName).compile(*G);
  // Timed runs after the first (one on the slow reference backend).
  const int Runs = BackendName == "cpu" ? 5 : 1;
  manual_seed(1);
  Tensor X = randn({BatchSize, 3, 224, 224});
  // The first run compiles the schedule for this shape (oneDNN primitives,
  // packed weights); the runs after it are what a server pays per request.
  Start = std::chrono::steady_clock::now();
  std::vector<rt::Tensor> Out = Exe->run({X.data()});
  double FirstMs = millisecondsSince(Start);
  double GraphMs = medianMs(Runs, [&] { Out = Exe->run({X.data()}); });

  // 5-6. Compare with the eager model.
  NoGradGuard NoGrad;
  Tensor Eager;
  double EagerMs = medianMs(Runs, [&] { Eager = (*Model)(X).toTensor(); });
  Tensor Graph(Out.at(0));
  double MaxErr = (Graph - Eager).abs().max().item<double>();
  std::printf("5. ran it on the %s backend at batch %lld: first run %.1f ms "
              "(compiles for the shape), then %.1f ms a run (eager: %.1f ms "
              "a run; medians of %d)\n",
              BackendName.c_str(), static_cast<long long>(BatchSize), FirstMs,
              GraphMs, EagerMs, Runs);
  for (int64_t S = 0; S < BatchSize; ++S)
    std::printf("   sample %lld: class %lld (graph), class %lld (eager)\n",
                static_cast<long long>(S),
                static_cast<long long>(Graph[S].argmax().item<int64_t>()),
                static_cast<long long>(Eager[S].argmax().item<int64_t>()));
  bool Ok = MaxErr <= Tolerance;
  std::printf("6. max |graph - eager| = %.3g (tolerance %g): %s\n", MaxErr,
              Tolerance, Ok ? "OK" : "MISMATCH");
  return Ok ? 0 : 1;
}

} // namespace

int main(int Argc, char **Argv) {
  try {
    return runDemo(Argc > 1 ? Argv[1] : "build/demo");
  } catch (const std::exception &E) {
    std::fprintf(stderr, "nngraph-demo: error: %s\n", E.what());
    return 1;
  }
}
