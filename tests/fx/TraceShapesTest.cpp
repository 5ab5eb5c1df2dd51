//===- TraceShapesTest.cpp - Tracing computes types, not values -----------===//
//
// What the tracer computes while it records: the results of ops that depend
// on a graph input and whose floating-point types inference fixes are zero
// example data of the example shape (the convolution is never run);
// results of parameters alone are computed exactly (a hook may keep them);
// integer shape arithmetic runs, so shapes built from sizes stay right; and
// the traced graph still equals eager.
//
//===----------------------------------------------------------------------===//

#include "FxTestUtils.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/nn/NN.h"

using namespace nng;
using namespace nng::fxtest;
using fx::InputSpec;

namespace {

/// Keeps the example data the tracer gave its intermediate results.
struct Recorder : nn::Module<Recorder> {
  std::shared_ptr<nn::Conv2d> conv =
      register_module("conv", nn::make<nn::Conv2d>(2, 3, 3, 1, 1));
  rt::Tensor Activation, Scaled;
  Tensor forward(const Tensor &x) {
    Tensor Y = (*conv)(x) + 1.0;
    Tensor W2 = conv->weight * 2.0; // Parameters alone.
    if (fx::isTracing()) {
      Activation = Y.impl()->Data;
      Scaled = W2.impl()->Data;
    }
    // A shape from sizes: integer arithmetic that must run.
    Tensor Flat = Y.reshape({Y.size(0), -1});
    return Flat.sum({1}) + W2.sum();
  }
};

TEST(TraceShapes, InputDependentResultsAreZeroExamplesOfTheRightShape) {
  manual_seed(0);
  auto M = nn::make<Recorder>();
  fx::GraphModule GM = fx::symbolic_trace(*M, {InputSpec({"N", 2, 4, 4})});
  // N's example extent is 5.
  ASSERT_TRUE(M->Activation.defined());
  EXPECT_EQ(M->Activation.shape(), Shape({5, 3, 4, 4}));
  for (int64_t I = 0; I < M->Activation.numel(); ++I)
    ASSERT_EQ(M->Activation.getFlat(I), 0.0) << "element " << I;
  // Computed from the weight alone: exact.
  rt::Tensor Want = (M->conv->weight * 2.0).data();
  ASSERT_EQ(M->Scaled.shape(), Want.shape());
  for (int64_t I = 0; I < Want.numel(); ++I)
    EXPECT_EQ(M->Scaled.getFlat(I), Want.getFlat(I));
  // The graph is right at other batch sizes.
  for (int64_t B : {1, 3}) {
    Tensor X = randn({B, 2, 4, 4});
    EXPECT_TRUE(allclose(GM({X}), (*M)(X), 1e-5, 1e-5)) << "batch " << B;
  }
}

} // namespace
