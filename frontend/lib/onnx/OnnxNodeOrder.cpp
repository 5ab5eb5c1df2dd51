//===- OnnxNodeOrder.cpp - Dependency order of a GraphProto's nodes -------===//
//
// The one topological sort of the ONNX frontend: the importer orders nodes
// with it (checking for cycles), and the Gradient expansion uses it to sort
// the nodes it emits and to walk the forward graph.
//
//===----------------------------------------------------------------------===//

#include "OnnxProto.h"

#include <set>

namespace nng::frontend::onnxio {

std::vector<int> stableTopologicalOrder(
    const std::vector<std::vector<int>> &Users, std::vector<int> Pending) {
  std::set<int> Ready;
  for (int I = 0; I < static_cast<int>(Pending.size()); ++I)
    if (!Pending[I])
      Ready.insert(I);
  std::vector<int> Order;
  while (!Ready.empty()) {
    int I = *Ready.begin();
    Ready.erase(Ready.begin());
    Order.push_back(I);
    for (int U : Users[I])
      if (--Pending[U] == 0)
        Ready.insert(U);
  }
  return Order;
}

} // namespace nng::frontend::onnxio
