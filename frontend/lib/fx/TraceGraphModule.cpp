//===- TraceGraphModule.cpp - symbolic_trace: a trace as a GraphModule ----===//
//
// Tracer::trace and symbolic_trace wrap Tracer::trace_graph's result in a
// GraphModule (GraphModule.cpp). Kept apart from the tracer so the tracer
// links without GraphModule's backend machinery.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/fx/Trace.h"

namespace nng::fx {

GraphModule Tracer::trace(nn::ModuleBase &Root,
                          const std::vector<InputSpec> &Inputs,
                          const ArgPacker &Pack) {
  TraceResult R = trace_graph(Root, Inputs, Pack);
  return GraphModule(std::move(R.Graph), std::move(R.Out),
                     std::move(R.KeepAlive), std::move(R.SourceType));
}

GraphModule symbolic_trace(nn::ModuleBase &Root,
                           const std::vector<InputSpec> &Inputs,
                           const ArgPacker &Pack) {
  Tracer T;
  return T.trace(Root, Inputs, Pack);
}

} // namespace nng::fx
