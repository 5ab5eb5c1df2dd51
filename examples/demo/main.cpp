//===- main.cpp - nngraph-demo: run the bundled small CNN -----------------===//
//
// Loads examples/models/small_cnn.nng (or the model named by argv[1]),
// compiles it on the reference backend, runs it on a deterministic batch of
// two inputs, and prints each sample's logits and argmax, and the median
// time of several runs.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/frontend/ModelIO.h"
#include "nngraph/tools/ToolSupport.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#ifndef NNGRAPH_DEMO_MODEL
#define NNGRAPH_DEMO_MODEL "examples/models/small_cnn.nng"
#endif

namespace {

constexpr int64_t BatchSize = 2;
constexpr int NumRuns = 9;

int runDemo(const std::string &Path) {
  std::unique_ptr<nng::ir::Graph> G = nng::frontend::loadModel(Path);
  std::printf("model: %s (graph \"%s\", %zu nodes, %zu initializers)\n",
              Path.c_str(), G->name().c_str(), G->numNodes(),
              G->initializers().size());

  // Every symbolic dim (the batch, N) is BatchSize.
  nng::tools::DimBindings Dims;
  for (const std::string &S : nng::tools::inputSymbols(*G))
    Dims[S] = BatchSize;
  std::vector<nng::rt::Tensor> Inputs =
      nng::tools::makeDeterministicInputs(*G, Dims, /*Seed=*/0);
  for (size_t I = 0; I < Inputs.size(); ++I)
    std::printf("input %%%s: %s%s (deterministic, seed 0)\n",
                G->inputs()[I]->name().c_str(),
                std::string(nng::dtypeName(Inputs[I].dtype())).c_str(),
                Inputs[I].shape().toString().c_str());

  nng::backends::Backend &B = nng::backends::referenceBackend();
  std::unique_ptr<nng::backends::Executable> Exe = B.compile(*G);
  std::vector<nng::rt::Tensor> Outputs;
  std::vector<double> Times;
  for (int R = 0; R < NumRuns; ++R) {
    auto Start = std::chrono::steady_clock::now();
    Outputs = Exe->run(Inputs);
    Times.push_back(std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - Start)
                        .count());
  }

  // Logits [batch, classes]: one line per sample, with its argmax.
  const nng::rt::Tensor &Y = Outputs.at(0);
  std::printf("output %%%s: %s%s\n", G->outputs()[0]->name().c_str(),
              std::string(nng::dtypeName(Y.dtype())).c_str(),
              Y.shape().toString().c_str());
  if (Y.rank() == 2) {
    for (int64_t S = 0; S < Y.size(0); ++S) {
      std::printf("  sample %lld: logits [", static_cast<long long>(S));
      int64_t Best = 0;
      for (int64_t C = 0; C < Y.size(1); ++C) {
        double V = Y.getDouble({S, C});
        if (V > Y.getDouble({S, Best}))
          Best = C;
        std::printf("%s%.4f", C ? ", " : "", V);
      }
      std::printf("] argmax %lld\n", static_cast<long long>(Best));
    }
  } else {
    std::printf("  %s\n", Y.toString().c_str());
  }

  std::sort(Times.begin(), Times.end());
  std::printf("time: %.3f ms per batch of %lld (median of %d runs, reference "
              "backend)\n",
              Times[Times.size() / 2], static_cast<long long>(BatchSize),
              NumRuns);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string Path = argc > 1 ? argv[1] : NNGRAPH_DEMO_MODEL;
  try {
    return runDemo(Path);
  } catch (const std::exception &E) {
    std::fprintf(stderr, "nngraph-demo: error: %s\n", E.what());
    return 1;
  }
}
