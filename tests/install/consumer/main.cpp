//===- main.cpp - A user of the installed nngraph package -----------------===//
//
// Builds a one-node graph (y = Relu(x)) with the IR API, runs it on the
// reference backend and checks the result. Exit 0 when it matches.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/ir/Verifier.h"

#include <cstdio>
#include <exception>

int main() {
  try {
    using namespace nng;
    ir::Graph G;
    G.setName("relu");
    ir::Value *X = G.addInput("x", ir::TensorType(DType::F32, Shape{2, 3}));
    ir::Node *N = G.addNode(ir::OpKind::Relu, {X}, {"y"});
    G.addOutput(N->output());
    ir::inferTypes(G);
    ir::verifyOrThrow(G);

    Tensor In = Tensor::fromVector<float>({-1, 2, -3, 4, -5, 6}, Shape{2, 3});
    std::vector<Tensor> Out = backends::runReference(G, {In});
    Tensor Expected =
        Tensor::fromVector<float>({0, 2, 0, 4, 0, 6}, Shape{2, 3});
    if (Out.size() != 1 || !Out[0].equals(Expected)) {
      std::fprintf(stderr, "consumer: wrong result %s\n",
                   Out.empty() ? "(none)" : Out[0].toString().c_str());
      return 1;
    }
    std::printf("consumer: relu on the reference backend: %s\n",
                Out[0].toString().c_str());
    return 0;
  } catch (const std::exception &E) {
    std::fprintf(stderr, "consumer: error: %s\n", E.what());
    return 1;
  }
}
