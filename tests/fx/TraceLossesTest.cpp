//===- TraceLossesTest.cpp - The loss modules traced == eager -------------===//
//
// Each loss module of nn/Loss.h traced with symbolic_trace's core
// (Tracer::trace_graph) on static input and target specs, for every
// reduction and the main options, and run on the reference backend,
// matches eager (atol 1e-5); the weight buffers become initializers under
// their state_dict keys.
//
//===----------------------------------------------------------------------===//

#include "FxTestUtils.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/nn/Loss.h"

using namespace nng;
using namespace nng::fxtest;
using fx::InputSpec;

namespace {

InputSpec specOf(const Tensor &T) {
  std::vector<fx::Dim> Dims;
  for (int64_t D : T.sizes())
    Dims.emplace_back(D);
  return InputSpec(Dims, T.dtype());
}

/// Traces M on (Input, Target) and compares with eager.
fx::TraceResult check(nn::ModuleBase &M, const Tensor &Input,
                      const Tensor &Target) {
  fx::TraceResult R =
      traceAndCompare(M, {specOf(Input), specOf(Target)}, {Input, Target});
  EXPECT_GT(R.Graph->numNodes(), 1u) << M.type_name() << " traced to nothing";
  return R;
}

const char *const Reductions[] = {"mean", "sum", "none"};

} // namespace

TEST(TraceLosses, CrossEntropyAndNLL) {
  manual_seed(0);
  for (std::string R : Reductions) {
    nn::CrossEntropyLoss Ce(rand({5}) + 0.5, 2, R, 0.1);
    auto Res = check(Ce, randn({6, 5}), randint(0, 5, {6}));
    EXPECT_EQ(initializerNames(*Res.Graph), std::vector<std::string>{"weight"});
    nn::CrossEntropyLoss Probs(rand({5}) + 0.5, -100, R, 0.2);
    check(Probs, randn({2, 5, 3}), softmax(randn({2, 5, 3}), 1));
    nn::NLLLoss Nll(Tensor(), -100, R);
    check(Nll, randn({4, 3}), randint(0, 3, {4}));
  }
}

TEST(TraceLosses, Elementwise) {
  manual_seed(1);
  for (std::string R : Reductions) {
    nn::MSELoss Mse(R);
    check(Mse, randn({3, 4}), randn({3, 4}));
    nn::L1Loss L1(R);
    check(L1, randn({3, 4}), randn({4}));
    nn::SmoothL1Loss S(R, 0.5);
    check(S, randn({3, 4}), randn({3, 4}));
    nn::BCEWithLogitsLoss B(rand({4}), R, rand({4}) + 0.5);
    check(B, randn({3, 4}), rand({3, 4}));
  }
  for (std::string R : {"mean", "batchmean", "sum", "none"})
    for (bool LogTarget : {false, true}) {
      nn::KLDivLoss K(R, LogTarget);
      Tensor T = softmax(randn({3, 4}), 1);
      check(K, log_softmax(randn({3, 4}), 1), LogTarget ? log(T) : T);
    }
}
