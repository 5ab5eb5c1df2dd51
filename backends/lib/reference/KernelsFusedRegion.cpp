//===- KernelsFusedRegion.cpp - Reference kernel of nng.FusedRegion -------===//
//
// Runs a fused region's body node by node on the reference backend, so a
// region means exactly what its nodes meant before they were grouped (the
// oracle for the kernels compiled from it).
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/ir/FusedRegion.h"

namespace nng::backends::reference {

void kernelFusedRegion(KernelContext &C) {
  std::vector<ir::TensorType> Types;
  Types.reserve(C.Inputs.size());
  for (size_t I = 0; I < C.Inputs.size(); ++I) {
    if (!C.hasInput(I))
      C.fail("input ", I, " of a fused region is absent");
    Types.emplace_back(C.in(I).dtype(), C.in(I).shape());
  }
  std::vector<const ir::TensorType *> Ptrs;
  for (const ir::TensorType &T : Types)
    Ptrs.push_back(&T);
  std::unique_ptr<ir::Graph> Body =
      ir::instantiateRegionBody(C.attrString("body"), Ptrs, C.N.describe());
  std::vector<Tensor> Outs = runReference(*Body, C.Inputs);
  C.Outputs.resize(Outs.size());
  for (size_t I = 0; I < Outs.size(); ++I)
    C.Outputs[I] = std::move(Outs[I]);
}

} // namespace nng::backends::reference
