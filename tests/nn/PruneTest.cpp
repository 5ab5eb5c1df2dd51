//===- PruneTest.cpp - nn::utils::prune on modules ------------------------===//
//
// torch.nn.utils.prune's semantics in C++, on hand-picked weights whose
// masks are known: every function (identity, random/L1 unstructured,
// random/Ln structured, custom_from_mask, global_unstructured), the
// reparametrization (weight_orig parameter, weight_mask buffer, the member
// forward reads), state_dict keys in PyTorch's order, iterative pruning
// (PruningContainer: amounts count what is left, structured pruning skips
// channels already gone; Python's half-to-even rounding), remove,
// is_pruned, gradients reaching weight_orig, determinism of the random
// methods under manual_seed, tracing, and the errors (with the argument
// and its value). PruneTorchTest.cpp checks the same against PyTorch.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/nn/utils/Prune.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/fx/Trace.h"
#include "nngraph/frontend/nn/NN.h"
#include "nngraph/ir/Graph.h"
#include "nngraph/passes/PassManager.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using namespace nng;
using namespace nng::nn;
namespace prune = nng::nn::utils::prune;

namespace {

template <typename F>
void expectError(F &&Fn, std::initializer_list<std::string> Needles) {
  try {
    Fn();
    ADD_FAILURE() << "expected an nng::Error";
  } catch (const Error &E) {
    for (const std::string &N : Needles)
      EXPECT_NE(std::string(E.what()).find(N), std::string::npos)
          << "message lacks '" << N << "':\n"
          << E.what();
  }
}

Tensor tensorOf(std::vector<float> V, std::vector<int64_t> Shape) {
  return Tensor(rt::Tensor::fromVector<float>(V, nng::Shape(Shape)));
}

void setData(Tensor &T, const Tensor &V) {
  NoGradGuard G;
  T.copy_(V);
}

/// Linear(4, 3) with distinct |weights| (the L1 order is known).
std::shared_ptr<Linear> knownLinear() {
  auto L = std::make_shared<Linear>(4, 3);
  setData(L->weight, tensorOf({0.1f, -0.9f, 0.5f, 0.3f,   //
                               -0.2f, 0.8f, -0.05f, 0.7f, //
                               0.6f, -0.4f, 1.0f, -0.15f},
                              {3, 4}));
  setData(L->bias, tensorOf({0.5f, -0.25f, 2.0f}, {3}));
  return L;
}

/// Conv2d(2, 4, 1): output channel L2 norms 1.41, 0.22, 3, 0.71; input
/// channel max norms 3 and 1.
std::shared_ptr<Conv2d> knownConv() {
  auto C = std::make_shared<Conv2d>(2, 4, 1);
  setData(C->weight, tensorOf({1.0f, 1.0f, 0.1f, 0.2f, 3.0f, 0.0f, 0.5f, -0.5f},
                              {4, 2, 1, 1}));
  return C;
}

std::vector<float> vec(const Tensor &T) { return T.to_vector<float>(); }

/// Positions of the zeros of T (row-major).
std::vector<int64_t> zerosOf(const Tensor &T) {
  std::vector<int64_t> R;
  std::vector<float> V = vec(T);
  for (size_t I = 0; I < V.size(); ++I)
    if (V[I] == 0)
      R.push_back(static_cast<int64_t>(I));
  return R;
}

std::vector<std::string> keysOf(const ModuleBase &M) {
  return M.state_dict().keys();
}

int64_t countZeros(const Tensor &T) {
  return static_cast<int64_t>(zerosOf(T).size());
}

} // namespace

TEST(Prune, IdentityReparametrizes) {
  auto L = knownLinear();
  Tensor W0 = L->weight;
  Tensor X = randn({2, 4});
  Tensor Before = (*L)(X);
  prune::identity(L, "weight");
  EXPECT_EQ(keysOf(*L),
            (std::vector<std::string>{"bias", "weight_orig", "weight_mask"}));
  EXPECT_TRUE(L->get_parameter("weight_orig").is_same(W0));
  EXPECT_EQ(countZeros(L->get_buffer("weight_mask")), 0);
  EXPECT_FALSE(L->get_buffer("weight_mask").requires_grad());
  EXPECT_TRUE(allclose((*L)(X), Before));
  EXPECT_TRUE(prune::is_pruned(*L));
}

TEST(Prune, L1UnstructuredMasksTheSmallestEntries) {
  auto L = knownLinear();
  prune::l1_unstructured(L, "weight", 0.25); // round(0.25 * 12) = 3
  Tensor Mask = L->get_buffer("weight_mask");
  EXPECT_EQ(zerosOf(Mask), (std::vector<int64_t>{0, 6, 11}));
  EXPECT_EQ(Mask.dtype(), DType::F32);
  // forward reads the member: it is weight_orig * weight_mask.
  Tensor Orig = L->get_parameter("weight_orig");
  EXPECT_TRUE(allclose(L->weight, Orig * Mask));
  Tensor X = randn({5, 4});
  EXPECT_TRUE(allclose((*L)(X), F::linear(X, Orig * Mask, L->bias)));
  // The member follows weight_orig: a change shows at the next forward.
  {
    NoGradGuard G;
    Orig.mul_(2.0);
  }
  EXPECT_TRUE(allclose((*L)(X), F::linear(X, Orig * Mask, L->bias)));
  EXPECT_TRUE(allclose(L->weight, Orig * Mask));
  // A count.
  auto L2 = knownLinear();
  prune::l1_unstructured(L2, "weight", 2);
  EXPECT_EQ(zerosOf(L2->get_buffer("weight_mask")),
            (std::vector<int64_t>{0, 6}));
  // Importance scores pick instead of |weight|.
  auto L3 = knownLinear();
  Tensor Scores = tensorOf({9, 9, 9, 1, 9, 9, 9, 9, 2, 9, 9, 9}, {3, 4});
  prune::l1_unstructured(L3, "weight", 2, Scores);
  EXPECT_EQ(zerosOf(L3->get_buffer("weight_mask")),
            (std::vector<int64_t>{3, 8}));
}

TEST(Prune, StateDictKeysFollowPyTorch) {
  auto L = knownLinear();
  prune::l1_unstructured(L, "weight", 1);
  EXPECT_EQ(keysOf(*L),
            (std::vector<std::string>{"bias", "weight_orig", "weight_mask"}));
  prune::l1_unstructured(L, "bias", 1);
  EXPECT_EQ(keysOf(*L), (std::vector<std::string>{"weight_orig", "bias_orig",
                                                  "weight_mask", "bias_mask"}));
  prune::random_unstructured(L, "weight", 0.5); // Masks keep their place.
  EXPECT_EQ(keysOf(*L), (std::vector<std::string>{"weight_orig", "bias_orig",
                                                  "weight_mask", "bias_mask"}));
  prune::remove(L, "weight"); // The parameter comes back last.
  EXPECT_EQ(keysOf(*L),
            (std::vector<std::string>{"bias_orig", "weight", "bias_mask"}));
  // Nested: prefixes as usual.
  auto Net = std::make_shared<Sequential>(
      knownLinear(), std::make_shared<ReLU>(), knownLinear());
  prune::l1_unstructured(Net->at<Linear>(2), "weight", 0.5);
  EXPECT_EQ(keysOf(*Net),
            (std::vector<std::string>{"0.weight", "0.bias", "2.bias",
                                      "2.weight_orig", "2.weight_mask"}));
}

TEST(Prune, IterativeUnstructuredCountsWhatIsLeft) {
  auto L = knownLinear();
  prune::l1_unstructured(L, "weight", 0.25); // 3 of 12: entries 0, 6, 11
  // 0.5 of the 9 left is round(4.5) = 4 (halves to even, as Python).
  prune::l1_unstructured(L, "weight", 0.5);
  EXPECT_EQ(zerosOf(L->get_buffer("weight_mask")),
            (std::vector<int64_t>{0, 2, 3, 4, 6, 9, 11}));
  // One hook, a container of both methods.
  int Hooks = 0;
  for (const auto &H : L->forward_pre_hooks())
    Hooks += H.second != nullptr;
  EXPECT_EQ(Hooks, 1);
  // A count beyond what is left is refused, and nothing changes.
  Tensor Mask = L->get_buffer("weight_mask").clone();
  expectError([&] { prune::l1_unstructured(L, "weight", 6); },
              {"amount=6 should be smaller than the number of parameters to "
               "prune=5",
               "l1_unstructured(Linear, 'weight')"});
  EXPECT_TRUE(allclose(L->get_buffer("weight_mask"), Mask));
  EXPECT_EQ(L->forward_pre_hooks().size(), 1u);
  // The rest, by count.
  prune::l1_unstructured(L, "weight", 5);
  EXPECT_EQ(countZeros(L->get_buffer("weight_mask")), 12);
  EXPECT_EQ(countZeros(L->weight), 12);
}

TEST(Prune, LnStructuredPrunesWholeChannels) {
  auto C = knownConv();
  prune::ln_structured(C, "weight", 0.5, 2, 0); // channels 1 and 3
  Tensor Mask = C->get_buffer("weight_mask");
  EXPECT_EQ(vec(Mask), (std::vector<float>{1, 1, 0, 0, 1, 1, 0, 0}));
  EXPECT_EQ(keysOf(*C),
            (std::vector<std::string>{"bias", "weight_orig", "weight_mask"}));
  // Again along dim 0: only channels 0 and 2 are candidates; L1 norms 2, 3.
  prune::ln_structured(C, "weight", 1, 1, 0);
  EXPECT_EQ(vec(C->get_buffer("weight_mask")),
            (std::vector<float>{0, 0, 0, 0, 1, 1, 0, 0}));
  // inf norm along the input channels (dim=-3 of [4, 2, 1, 1]): max 3 vs 1.
  auto C2 = knownConv();
  prune::ln_structured(C2, "weight", 1, INFINITY, -3);
  EXPECT_EQ(vec(C2->get_buffer("weight_mask")),
            (std::vector<float>{1, 0, 1, 0, 1, 0, 1, 0}));
  Tensor X = randn({1, 2, 3, 3});
  EXPECT_TRUE(allclose((*C2)(X), F::conv2d(X,
                                           C2->get_parameter("weight_orig") *
                                               C2->get_buffer("weight_mask"),
                                           C2->bias)));
}

TEST(Prune, StructuredAfterUnstructuredUsesTheMaskedWeight) {
  auto L = knownLinear();
  prune::l1_unstructured(L, "weight", 0.25); // zeros at 0, 6, 11
  // Row L2 norms of the masked weight: row 0 without 0.1, row 1 without
  // 0.05, row 2 without 0.15: 1.07, 1.08, 1.24 -> row 0 goes.
  prune::ln_structured(L, "weight", 1, 2, 0);
  EXPECT_EQ(vec(L->get_buffer("weight_mask")),
            (std::vector<float>{0, 0, 0, 0, 1, 1, 0, 1, 1, 1, 1, 0}));
  // Unstructured again: only entries still 1 are ranked (6 of them).
  prune::l1_unstructured(L, "weight", 1);
  EXPECT_EQ(zerosOf(L->get_buffer("weight_mask")),
            (std::vector<int64_t>{0, 1, 2, 3, 4, 6, 11}));
}

TEST(Prune, RandomMethodsAreRepeatableUnderManualSeed) {
  auto Draw = [](uint64_t Seed) {
    auto L = knownLinear();
    manual_seed(Seed);
    prune::random_unstructured(L, "weight", 0.5);
    return vec(L->get_buffer("weight_mask"));
  };
  std::vector<float> A = Draw(1), B = Draw(1), C = Draw(2);
  EXPECT_EQ(A, B);
  EXPECT_NE(A, C);
  EXPECT_EQ(std::count(A.begin(), A.end(), 0.0f), 6);

  auto DrawRows = [](uint64_t Seed) {
    auto L = std::make_shared<Linear>(5, 8);
    manual_seed(Seed);
    prune::random_structured(L, "weight", 3, 0);
    return vec(L->get_buffer("weight_mask"));
  };
  std::vector<float> R1 = DrawRows(4), R2 = DrawRows(4);
  EXPECT_EQ(R1, R2);
  int ZeroRows = 0;
  for (int R = 0; R < 8; ++R) {
    float S = 0;
    for (int K = 0; K < 5; ++K)
      S += R1[R * 5 + K];
    EXPECT_TRUE(S == 0 || S == 5) << "row " << R;
    ZeroRows += S == 0;
  }
  EXPECT_EQ(ZeroRows, 3);
}

TEST(Prune, CustomFromMask) {
  auto L = knownLinear();
  Tensor Mask = tensorOf({1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1}, {3, 4});
  prune::custom_from_mask(L, "weight", Mask);
  EXPECT_EQ(vec(L->get_buffer("weight_mask")), vec(Mask));
  // Composes with what is there (a product of masks).
  prune::custom_from_mask(
      L, "weight", tensorOf({0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, {3, 4}));
  EXPECT_EQ(zerosOf(L->get_buffer("weight_mask")),
            (std::vector<int64_t>{0, 1, 4, 10}));
  prune::custom_from_mask(L, "bias", tensorOf({1, 0, 1}, {3}));
  EXPECT_EQ(vec(L->bias), (std::vector<float>{0.5f, 0.0f, 2.0f}));
}

TEST(Prune, GlobalUnstructuredRanksAllTensorsTogether) {
  auto A = knownLinear();
  auto B = std::make_shared<Linear>(3, 2);
  setData(B->weight,
          tensorOf({0.01f, 2.0f, -0.02f, 0.35f, -3.0f, 0.12f}, {2, 3}));
  auto Net = std::make_shared<Sequential>(A, std::make_shared<ReLU>(), B);
  // 6 of 18 overall: 0.01, 0.02 (B), 0.05, 0.1 (A), 0.12 (B), 0.15 (A).
  prune::global_unstructured({{A, "weight"}, {B, "weight"}},
                             prune::method<prune::L1Unstructured>(), 6);
  EXPECT_EQ(zerosOf(A->get_buffer("weight_mask")),
            (std::vector<int64_t>{0, 6, 11}));
  EXPECT_EQ(zerosOf(B->get_buffer("weight_mask")),
            (std::vector<int64_t>{0, 2, 5}));
  // Again by fraction: 0.5 of the 12 left -> 6 more, ranked across both.
  prune::global_unstructured({{A, "weight"}, {B, "weight"}},
                             prune::method<prune::L1Unstructured>(), 0.5);
  EXPECT_EQ(countZeros(A->get_buffer("weight_mask")) +
                countZeros(B->get_buffer("weight_mask")),
            12);
  // 0.2, 0.3, 0.35 (B), 0.4, 0.5, 0.6 go; 0.7 stays.
  EXPECT_EQ(zerosOf(B->get_buffer("weight_mask")),
            (std::vector<int64_t>{0, 2, 3, 5}));
  EXPECT_EQ(zerosOf(A->get_buffer("weight_mask")),
            (std::vector<int64_t>{0, 2, 3, 4, 6, 8, 9, 11}));
  // Random: the count is right.
  auto C = std::make_shared<Linear>(10, 10);
  auto D = std::make_shared<Linear>(10, 5);
  manual_seed(5);
  prune::global_unstructured({{C, "weight"}, {D, "weight"}},
                             prune::method<prune::RandomUnstructured>(), 0.3);
  EXPECT_EQ(countZeros(C->get_buffer("weight_mask")) +
                countZeros(D->get_buffer("weight_mask")),
            45);
  // Structured methods are refused.
  expectError(
      [&] {
        prune::global_unstructured({{C, "weight"}},
                                   prune::method<prune::RandomStructured>(), 1);
      },
      {"Only \"unstructured\" PRUNING_TYPE", "RandomStructured", "structured",
       "global_unstructured"});
}

TEST(Prune, RemoveMakesItPermanent) {
  auto L = knownLinear();
  Tensor W0 = L->weight;
  prune::l1_unstructured(L, "weight", 3);
  Tensor Masked = L->weight.detach().clone();
  prune::remove(L, "weight");
  EXPECT_EQ(keysOf(*L), (std::vector<std::string>{"bias", "weight"}));
  EXPECT_TRUE(L->get_parameter("weight").is_same(W0)); // As PyTorch.
  EXPECT_TRUE(L->weight.is_same(W0));                  // The member too.
  EXPECT_TRUE(W0.requires_grad());
  EXPECT_EQ(vec(W0), vec(Masked));
  EXPECT_TRUE(L->forward_pre_hooks().empty());
  EXPECT_FALSE(prune::is_pruned(*L));
  Tensor X = randn({2, 4});
  EXPECT_TRUE(allclose((*L)(X), F::linear(X, Masked, L->bias)));
  // Pruning again starts afresh.
  prune::l1_unstructured(L, "weight", 1);
  EXPECT_EQ(countZeros(L->get_buffer("weight_mask")), 1);
  EXPECT_EQ(zerosOf(L->get_buffer("weight_mask")), (std::vector<int64_t>{0}));
}

TEST(Prune, IsPrunedLooksAtSubmodules) {
  auto Net = std::make_shared<Sequential>(
      std::make_shared<Linear>(4, 4), std::make_shared<ReLU>(),
      std::make_shared<Sequential>(std::make_shared<Linear>(4, 2)));
  EXPECT_FALSE(prune::is_pruned(*Net));
  auto Inner = Net->at<Sequential>(2)->at<Linear>(0);
  prune::random_unstructured(Inner, "bias", 1);
  EXPECT_TRUE(prune::is_pruned(*Net));
  EXPECT_FALSE(prune::is_pruned(*Net->at<Linear>(0)));
  prune::remove(Inner, "bias");
  EXPECT_FALSE(prune::is_pruned(*Net));
}

TEST(Prune, GradientsReachWeightOrigThroughTheMask) {
  auto L = knownLinear();
  prune::l1_unstructured(L, "weight", 0.5);
  Tensor X = randn({5, 4});
  Tensor G = randn({5, 3});
  ((*L)(X)*G).sum().backward();
  Tensor Orig = L->get_parameter("weight_orig");
  Tensor Mask = L->get_buffer("weight_mask");
  ASSERT_TRUE(Orig.grad().defined());
  EXPECT_TRUE(allclose(Orig.grad(), matmul(G.t(), X) * Mask, 1e-5, 1e-6));
  EXPECT_TRUE(allclose(L->bias.grad(), G.sum({0}), 1e-5, 1e-6));
  EXPECT_FALSE(Mask.grad().defined());
  // parameters() (what an optimizer takes) hold weight_orig, not the mask.
  std::vector<std::string> Names;
  for (auto &[N, P] : L->named_parameters())
    Names.push_back(N);
  EXPECT_EQ(Names, (std::vector<std::string>{"bias", "weight_orig"}));
}

TEST(Prune, WorksOnUserModulesAndConversions) {
  struct Affine : Module<Affine> {
    Tensor W = register_parameter("weight", ones({2, 3}));
    Tensor forward(const Tensor &X) { return matmul(X, W.t()); }
  };
  auto M = std::make_shared<Affine>();
  setData(M->W, tensorOf({1, -2, 3, -4, 5, -6}, {2, 3}));
  prune::l1_unstructured(M, "weight", 2);
  Tensor X = ones({1, 3});
  EXPECT_EQ(vec((*M)(X)), (std::vector<float>{3.0f, -5.0f}));
  M->to(DType::F64);
  EXPECT_EQ(M->get_buffer("weight_mask").dtype(), DType::F64);
  EXPECT_EQ((*M)(ones({1, 3}, DType::F64)).dtype(), DType::F64);
}

TEST(Prune, TracingComputesTheMaskedWeight) {
  auto L = knownLinear();
  prune::l1_unstructured(L, "weight", 0.5);
  fx::GraphModule GM = fx::symbolic_trace(*L, {fx::InputSpec({2, 4})});
  const ir::Graph &G = GM.graph();
  std::vector<std::string> Inits;
  for (const ir::Value *V : G.initializers())
    Inits.push_back(V->name());
  std::sort(Inits.begin(), Inits.end());
  EXPECT_EQ(Inits,
            (std::vector<std::string>{"bias", "weight_mask", "weight_orig"}));
  // weight = Mul(weight_mask, weight_orig) feeds the layer.
  bool FoundMul = false;
  for (const auto &N : G.nodes())
    if (N->op() == ir::OpKind::Mul && N->numInputs() == 2) {
      std::vector<std::string> In{N->input(0)->name(), N->input(1)->name()};
      std::sort(In.begin(), In.end());
      FoundMul |= In == std::vector<std::string>{"weight_mask", "weight_orig"};
    }
  EXPECT_TRUE(FoundMul) << GM.code();
  Tensor X = randn({2, 4});
  EXPECT_TRUE(allclose(GM({X}), (*L)(X), 1e-5, 1e-6));
  // No proxy outlives the trace: the member holds the masked weight.
  fx::GraphModule GM2 = fx::symbolic_trace(*L, {fx::InputSpec({2, 4})});
  EXPECT_FALSE(L->weight.is_proxy());
  EXPECT_TRUE(allclose(L->weight, L->get_parameter("weight_orig") *
                                      L->get_buffer("weight_mask")));
  // The graph keeps the state_dict contract: a new mask loads into it.
  nn::StateDict SD = GM2.state_dict();
  EXPECT_TRUE(SD.contains("weight_orig"));
  EXPECT_TRUE(SD.contains("weight_mask"));
  // canonicalize folds the product (its inputs are initializers).
  passes::PassManager PM;
  PM.addPipeline("canonicalize,dce");
  PM.run(GM2.graph());
  GM2.recompile();
  size_t Muls = 0;
  for (const auto &N : GM2.graph().nodes())
    Muls += N->op() == ir::OpKind::Mul;
  EXPECT_EQ(Muls, 0u) << GM2.code();
  EXPECT_TRUE(allclose(GM2({X}), (*L)(X), 1e-5, 1e-6));
}

TEST(Prune, TracingAPrunedLeafModule) {
  struct LeafTracer : fx::Tracer {
    bool is_leaf_module(const ModuleBase &, const std::string &Path) override {
      return Path == "0";
    }
  };
  auto Net =
      std::make_shared<Sequential>(knownLinear(), std::make_shared<ReLU>());
  prune::l1_unstructured(Net->at<Linear>(0), "weight", 0.5);
  fx::GraphModule GM = LeafTracer().trace(*Net, {fx::InputSpec({2, 4})});
  Tensor X = randn({2, 4});
  EXPECT_TRUE(allclose(GM({X}), (*Net)(X), 1e-5, 1e-6));
  EXPECT_FALSE(Net->at<Linear>(0)->weight.is_proxy());
}

/// The example of docs/modules.md, "Pruning".
TEST(Prune, DocsExample) {
  auto net = std::make_shared<nn::Sequential>(
      std::make_shared<nn::Conv2d>(3, 8, 3), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Flatten>(),
      std::make_shared<nn::Linear>(8 * 6 * 6, 10));
  auto conv = net->at<nn::Conv2d>(0);
  auto fc = net->at<nn::Linear>(3);

  prune::l1_unstructured(fc, "weight", 0.3);
  prune::ln_structured(conv, "weight", 2, 2.0, 0);
  prune::l1_unstructured(fc, "weight", 0.5);
  EXPECT_EQ(keysOf(*net), (std::vector<std::string>{
                              "0.bias", "0.weight_orig", "0.weight_mask",
                              "3.bias", "3.weight_orig", "3.weight_mask"}));
  Tensor y = (*net)(randn({1, 3, 8, 8}));
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{1, 10}));
  // 30% of 2880, then half of the 2016 left.
  EXPECT_EQ(countZeros(fc->get_buffer("weight_mask")), 864 + 1008);
  EXPECT_EQ(countZeros(conv->get_buffer("weight_mask")), 2 * 27);
  prune::remove(fc, "weight");
  EXPECT_EQ(keysOf(*net),
            (std::vector<std::string>{"0.bias", "0.weight_orig",
                                      "0.weight_mask", "3.bias", "3.weight"}));
  bool any = prune::is_pruned(*net);
  EXPECT_TRUE(any);
}

TEST(Prune, Errors) {
  auto L = knownLinear();
  expectError([&] { prune::l1_unstructured(L, "weight", 1.5); },
              {"amount=1.5 should either be a float in the range [0, 1] or a "
               "non-negative integer",
               "in prune::l1_unstructured(Linear, 'weight')"});
  expectError([&] { prune::random_unstructured(L, "weight", -1); },
              {"amount=-1 should either be"});
  expectError([&] { prune::l1_unstructured(L, "weight", -0.1); },
              {"amount=-0.1"});
  expectError([&] { prune::l1_unstructured(L, "weight", 13); },
              {"amount=13 should be smaller than the number of parameters to "
               "prune=12"});
  expectError([&] { prune::ln_structured(L, "weight", 1, 2, 2); },
              {"Invalid index 2 for tensor of size [3, 4]",
               "in prune::ln_structured(Linear, 'weight')"});
  expectError([&] { prune::random_structured(L, "weight", 4, 0); },
              {"amount=4 should be smaller than the number of parameters to "
               "prune=3"});
  expectError([&] { prune::ln_structured(L, "bias", 1, 2, 0); },
              {"Structured pruning can only be applied to multidimensional "
               "tensors",
               "[3]"});
  expectError([&] { prune::remove(L, "weight"); },
              {"Parameter 'weight' of module Linear has to be pruned before "
               "pruning can be removed"});
  expectError([&] { prune::l1_unstructured(L, "wieght", 1); },
              {"Linear has no parameter 'wieght'", "weight, bias"});
  expectError(
      [&] {
        prune::l1_unstructured(L, "weight", 1, ones({4, 3}));
      },
      {"importance_scores should have the same shape as parameter "
       "weight",
       "[4, 3]", "[3, 4]"});
  expectError([&] { prune::custom_from_mask(L, "weight", ones({12})); },
              {"CustomFromMask", "[12]", "[3, 4]"});
  // Nothing changed on L.
  EXPECT_EQ(keysOf(*L), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_FALSE(prune::is_pruned(*L));

  BatchNorm1d BN(3);
  expectError([&] { prune::l1_unstructured(BN, "running_mean", 1); },
              {"'running_mean' is a buffer"});
  Linear NoBias(2, 2, false);
  expectError([&] { prune::l1_unstructured(NoBias, "bias", 1); },
              {"parameter 'bias' is None"});
  // A parameter that forward does not read through a member.
  struct Unbound : Module<Unbound> {
    Unbound() { register_parameter("w", ones({2, 2})); }
    Tensor forward(const Tensor &X) { return X * get_parameter("w"); }
  };
  Unbound U;
  expectError([&] { prune::l1_unstructured(U, "w", 1); },
              {"parameter 'w' is not bound to a C++ member", "bind_member"});
  EXPECT_EQ(keysOf(U), (std::vector<std::string>{"w"}));
  std::shared_ptr<Linear> Null;
  expectError([&] { prune::identity(Null, "weight"); }, {"module is null"});
}
