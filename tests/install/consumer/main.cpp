//===- main.cpp - A user of the installed nngraph package -----------------===//
//
// Builds a one-node graph (y = Relu(x)) with the IR API, runs it on the
// reference backend and checks the result; then trains an nn::Linear one
// eager SGD step, checking that the loss goes down. Exit 0 when both work.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/NN.h"
#include "nngraph/frontend/optim/Optim.h"
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

    rt::Tensor In =
        rt::Tensor::fromVector<float>({-1, 2, -3, 4, -5, 6}, Shape{2, 3});
    std::vector<rt::Tensor> Out = backends::runReference(G, {In});
    rt::Tensor Expected =
        rt::Tensor::fromVector<float>({0, 2, 0, 4, 0, 6}, Shape{2, 3});
    if (Out.size() != 1 || !Out[0].equals(Expected)) {
      std::fprintf(stderr, "consumer: wrong result %s\n",
                   Out.empty() ? "(none)" : Out[0].toString().c_str());
      return 1;
    }
    std::printf("consumer: relu on the reference backend: %s\n",
                Out[0].toString().c_str());

    // The eager API: one SGD step on a linear model lowers its loss.
    manual_seed(0);
    auto Model = std::make_shared<nn::Linear>(3, 1);
    optim::SGD Opt(Model->parameters(), {.lr = 0.1});
    Tensor X2 = randn({8, 3}), Y2 = randn({8, 1});
    Tensor Loss0 = F::mse_loss((*Model)(X2), Y2);
    Opt.zero_grad();
    Loss0.backward();
    Opt.step();
    Tensor Loss1 = F::mse_loss((*Model)(X2), Y2);
    if (!(Loss1.item<float>() < Loss0.item<float>())) {
      std::fprintf(stderr, "consumer: loss did not go down: %g -> %g\n",
                   Loss0.item<double>(), Loss1.item<double>());
      return 1;
    }
    std::printf("consumer: eager SGD step: loss %.4f -> %.4f\n",
                Loss0.item<double>(), Loss1.item<double>());
    return 0;
  } catch (const std::exception &E) {
    std::fprintf(stderr, "consumer: error: %s\n", E.what());
    return 1;
  }
}
