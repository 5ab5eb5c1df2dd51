//===- ControlFlow.h - Running If and Loop nodes (internal) -----*- C++ -*-===//
//
// The kernels of the ops with regions, shared by the backends: a
// RegionRunner holds one executable per region of its node (the region
// lifted into a standalone graph, ir::liftRegion: block arguments, then the
// captured values), compiled by the backend's RegionCompiler at first use
// and kept, and runs If (the taken branch) and Loop (the body once per
// iteration, loop-carried values passed on, scan outputs stacked along a
// new axis 0). The reference kernels compile with the reference backend at
// each call; the cpu backend's node kernel keeps its runner (and so its
// compiled regions) for the executable's life.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Kernels.h"
#include "nngraph/backends/Backend.h"

#include <functional>
#include <memory>
#include <mutex>

namespace nng::backends::reference {

/// Compiles a lifted region.
using RegionCompiler =
    std::function<std::unique_ptr<Executable>(const ir::Graph &)>;

/// Runs one If or Loop node, its regions compiled once.
class RegionRunner {
public:
  RegionRunner(const ir::Node &N, RegionCompiler Compile);
  /// Runs the node on C's inputs; fills C.Outputs.
  void run(KernelContext &C);

private:
  /// The executable of region Name, compiled at first use.
  Executable &region(const std::string &Name);
  void runIf(KernelContext &C);
  void runLoop(KernelContext &C);
  void runScan(KernelContext &C);
  /// The captured values of region Name, from the node's inputs.
  std::vector<Tensor> captured(const KernelContext &C, const std::string &Name);

  const ir::Node &N;
  RegionCompiler Compile;
  std::mutex Mu;
  std::vector<std::pair<std::string, std::unique_ptr<Executable>>> Compiled;
};

} // namespace nng::backends::reference
