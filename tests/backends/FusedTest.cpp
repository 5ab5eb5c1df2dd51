//===- FusedTest.cpp - nng.FusedConv and nng.FusedGemm --------------------===//
//
// The fused ops against the two ops they stand for: every activation of the
// FusedActivation table, with default and explicit parameters, on grouped
// and padded convolutions and on Gemm with transposes, alpha/beta and a
// bias, must give exactly what Conv/Gemm followed by the standalone
// activation gives. Bad activations, parameter counts and dtypes fail with
// messages that name them.
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"
#include "nngraph/ir/FusedActivation.h"

#include <limits>

using namespace nng;
using namespace nng::reftest;

namespace {

/// Deterministic values in [-Amp, Amp).
Tensor wave(Shape S, double Phase, double Amp = 2.0) {
  Tensor T = Tensor::empty(S, DType::F32);
  for (int64_t I = 0; I < T.numel(); ++I)
    T.setFlat(I, Amp * std::sin(0.7 * static_cast<double>(I) + Phase));
  return T;
}

/// The standalone op of activation Name applied to X with Params.
Tensor standalone(const std::string &Name, const std::vector<float> &Params,
                  const Tensor &X) {
  const ir::FusedActivationInfo *A = ir::lookupFusedActivation(Name);
  EXPECT_NE(A, nullptr) << Name;
  std::vector<float> P = ir::fusedActivationParams(*A, Params);
  OpTest T(A->Op);
  T.in(X);
  if (A->ParamsAreInputs) {
    for (float V : P)
      T.constIn(Tensor::scalar<float>(V));
  } else {
    for (size_t I = 0; I < P.size(); ++I)
      T.attr(std::string(A->Params[I].Name), ir::Attribute(P[I]));
  }
  if (!A->GeluApproximate.empty())
    T.attr("approximate", ir::Attribute(std::string(A->GeluApproximate)));
  return T.run1();
}

struct ActCase {
  std::string Name;
  std::vector<float> Params;
};

std::vector<ActCase> activationCases() {
  std::vector<ActCase> Cases;
  for (const ir::FusedActivationInfo &A : ir::fusedActivations())
    Cases.push_back({std::string(A.Name), {}});
  Cases.push_back({"LeakyRelu", {0.2f}});
  Cases.push_back({"Clip", {0.0f, 6.0f}});
  Cases.push_back({"Clip", {-1.0f}});
  Cases.push_back({"HardSigmoid", {0.3f, 0.4f}});
  Cases.push_back({"Elu", {0.5f}});
  return Cases;
}

OpTest &withActivation(OpTest &T, const ActCase &A) {
  T.attr("activation", ir::Attribute(A.Name));
  if (!A.Params.empty())
    T.attr("activation_params", ir::Attribute(A.Params));
  return T;
}

} // namespace

TEST(FusedConvTest, EveryActivationMatchesConvThenActivation) {
  Tensor X = wave({2, 4, 5, 5}, 0.1), W = wave({6, 2, 3, 3}, 0.7, 0.5),
         B = wave({6}, 1.3);
  for (const ActCase &A : activationCases()) {
    SCOPED_TRACE(A.Name);
    auto Conv = [&](OpTest T) {
      T.in(X).constIn(W).constIn(B);
      T.attr("group", ir::Attribute(int64_t(2)));
      T.attr("pads", ir::Attribute(std::vector<int64_t>{1, 0, 1, 2}));
      T.attr("strides", ir::Attribute(std::vector<int64_t>{1, 2}));
      return T;
    };
    OpTest Fused = Conv(OpTest(OpKind::FusedConv));
    withActivation(Fused, A);
    Tensor Want =
        standalone(A.Name, A.Params, Conv(OpTest(OpKind::Conv)).run1());
    EXPECT_TENSOR_TOL(Fused.run1(), Want, 0.0);
  }
}

TEST(FusedConvTest, DefaultActivationIsReluAndBiasIsOptional) {
  Tensor X = wave({1, 3, 4}, 0.3), W = wave({2, 3, 2}, 0.9);
  Tensor Got = OpTest(OpKind::FusedConv).in(X).constIn(W).run1();
  Tensor Conv = OpTest(OpKind::Conv).in(X).constIn(W).run1();
  EXPECT_TENSOR_TOL(Got, OpTest(OpKind::Relu).in(Conv).run1(), 0.0);
  EXPECT_EQ(Got.shape(), (Shape{1, 2, 3}));
}

TEST(FusedConvTest, DoubleAndHalfPrecision) {
  Tensor X = wave({1, 2, 3, 3}, 0.2).to(DType::F64);
  Tensor W = wave({2, 2, 1, 1}, 0.4).to(DType::F64);
  OpTest T(OpKind::FusedConv);
  T.in(X).constIn(W).attr("activation", ir::Attribute("Tanh"));
  Tensor Conv = OpTest(OpKind::Conv).in(X).constIn(W).run1();
  EXPECT_TENSOR_TOL(T.run1(), OpTest(OpKind::Tanh).in(Conv).run1(), 0.0);

  Tensor Xh = X.to(DType::F16), Wh = W.to(DType::F16);
  Tensor Convh = OpTest(OpKind::Conv).in(Xh).constIn(Wh).run1();
  Tensor Got = OpTest(OpKind::FusedConv)
                   .in(Xh)
                   .constIn(Wh)
                   .attr("activation", ir::Attribute("Sigmoid"))
                   .run1();
  EXPECT_TENSOR_TOL(Got, OpTest(OpKind::Sigmoid).in(Convh).run1(), 0.0);
}

TEST(FusedGemmTest, EveryActivationMatchesGemmThenActivation) {
  Tensor A = wave({3, 5}, 0.2), B = wave({4, 5}, 0.5, 0.8), C = wave({4}, 1.1);
  for (const ActCase &Act : activationCases()) {
    SCOPED_TRACE(Act.Name);
    auto Gemm = [&](OpTest T) {
      T.in(A).constIn(B).constIn(C);
      T.attr("transB", ir::Attribute(int64_t(1)));
      T.attr("alpha", ir::Attribute(0.75f));
      T.attr("beta", ir::Attribute(1.5f));
      return T;
    };
    OpTest Fused = Gemm(OpTest(OpKind::FusedGemm));
    withActivation(Fused, Act);
    Tensor Want =
        standalone(Act.Name, Act.Params, Gemm(OpTest(OpKind::Gemm)).run1());
    EXPECT_TENSOR_TOL(Fused.run1(), Want, 0.0);
  }
}

TEST(FusedGemmTest, TransAWithoutBias) {
  Tensor A = wave({5, 3}, 0.6), B = wave({5, 2}, 0.1);
  Tensor Got = OpTest(OpKind::FusedGemm)
                   .in(A)
                   .constIn(B)
                   .none()
                   .attr("transA", ir::Attribute(int64_t(1)))
                   .attr("activation", ir::Attribute("GeluTanh"))
                   .run1();
  Tensor G = OpTest(OpKind::Gemm)
                 .in(A)
                 .constIn(B)
                 .attr("transA", ir::Attribute(int64_t(1)))
                 .run1();
  Tensor Want = OpTest(OpKind::Gelu)
                    .in(G)
                    .attr("approximate", ir::Attribute("tanh"))
                    .run1();
  EXPECT_TENSOR_TOL(Got, Want, 0.0);
  EXPECT_EQ(Got.shape(), (Shape{3, 2}));
}

TEST(FusedTest, BadActivationsFail) {
  Tensor X = wave({1, 1, 3, 3}, 0.0), W = wave({1, 1, 1, 1}, 0.0);
  EXPECT_FAILS(OpTest(OpKind::FusedConv)
                   .in(X)
                   .constIn(W)
                   .attr("activation", ir::Attribute("Swish")),
               "unknown activation 'Swish'");
  EXPECT_FAILS(
      OpTest(OpKind::FusedConv)
          .in(X)
          .constIn(W)
          .attr("activation", ir::Attribute("Relu"))
          .attr("activation_params", ir::Attribute(std::vector<float>{1})),
      "takes 0 parameter(s)");
  EXPECT_FAILS(OpTest(OpKind::FusedGemm)
                   .in(i32({1, 2}, {1, 2}))
                   .constIn(i32({1, 2}, {2, 1})),
               "floating");
}

TEST(FusedTest, ActivationTableIsConsistent) {
  for (const ir::FusedActivationInfo &A : ir::fusedActivations()) {
    EXPECT_EQ(ir::lookupFusedActivation(A.Name), &A);
    EXPECT_EQ(ir::fusedActivationParams(A, {}).size(), A.Params.size());
    EXPECT_NE(ir::fusedActivationNames().find(std::string(A.Name)),
              std::string::npos);
  }
  EXPECT_EQ(ir::lookupFusedActivation("Swish"), nullptr);
  const ir::FusedActivationInfo *Clip = ir::lookupFusedActivation("Clip");
  ASSERT_NE(Clip, nullptr);
  std::vector<float> P = ir::fusedActivationParams(*Clip, {0.0f});
  ASSERT_EQ(P.size(), 2u);
  EXPECT_EQ(P[1], std::numeric_limits<float>::infinity());
}
