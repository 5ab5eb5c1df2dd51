//===- KernelsModuleCall.cpp - Reference kernel of nng.ModuleCall --------===//
//
// Runs a leaf module node by calling back into C++ (backends/Callbacks.h):
// the inputs go to the registered function as they are, and its outputs,
// checked against the node's declared types, become the node's outputs.
// The CPU backend serves the node with this kernel too (its fallback).
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "nngraph/backends/Callbacks.h"

namespace nng::backends::reference {

void kernelModuleCall(KernelContext &C) {
  std::vector<Tensor> Outs = runModuleCall(C.N, C.Inputs);
  C.Outputs.resize(Outs.size());
  for (size_t I = 0; I < Outs.size(); ++I)
    C.Outputs[I] = std::move(Outs[I]);
}

} // namespace nng::backends::reference
