//===- InferLossScatterSortTest.cpp - Inference tests: losses, gather/scatter, sorting, Einsum -===//
//
// Losses, Trilu, CumSum, EyeLike, Det, MVN, LRN, DepthToSpace/SpaceToDepth,
// MaxUnpool, Einsum (equation planning, symbolic dims, errors), and the
// value-dependent outputs of Compress, OneHot, TopK, Unique and NonZero
// (exact with known values, unknown extents otherwise), ScatterElements,
// ScatterND, GatherND and ReverseSequence.
//
//===----------------------------------------------------------------------===//

#include "IrTestUtils.h"
#include "nngraph/ir/EinsumEquation.h"

#include <cmath>

using namespace nng;
using namespace nng::ir;
using namespace nng::ir::test;

namespace {

class InferLossScatterSort : public IrTest {
protected:
  bool has(const std::string &S, std::string_view Part) {
    return S.find(Part) != std::string::npos;
  }
  Value *boolConst(std::vector<int> V) {
    nng::rt::Tensor T =
        nng::rt::Tensor::empty(Shape{static_cast<int64_t>(V.size())}, DType::Bool);
    for (size_t I = 0; I < V.size(); ++I)
      T.data<bool>()[I] = V[I] != 0;
    return G.addInitializer("b" + std::to_string(Counter++), T);
  }
};

TEST_F(InferLossScatterSort, Losses) {
  auto None = attrs({{"reduction", "none"}});
  EXPECT_EQ(
      infer(OpKind::NegativeLogLikelihoodLoss, {in("f32[N,5]"), in("i64[N]")}),
      "f32[]");
  EXPECT_EQ(infer(OpKind::NegativeLogLikelihoodLoss,
                  {in("f32[N,5,3,4]"), in("i64[N,3,4]"), in("f32[5]")}, None),
            "f32[N,3,4]");
  EXPECT_EQ(infer(OpKind::NegativeLogLikelihoodLoss,
                  {in("f32[2,5,3]"), in("i32[*]")}, None),
            "f32[2,3]");
  auto Outs = inferAll(OpKind::SoftmaxCrossEntropyLoss,
                       {in("f16[2,5]"), in("i64[2]")}, None, 2);
  EXPECT_EQ(Outs, (std::vector<std::string>{"f16[2]", "f16[2,5]"}));
  EXPECT_TRUE(has(inferError(OpKind::NegativeLogLikelihoodLoss,
                             {in("f32[2,5]"), in("i64[3]")}),
                  "labels"));
  EXPECT_TRUE(has(inferError(OpKind::NegativeLogLikelihoodLoss,
                             {in("f32[2,5]"), in("i64[2]"), in("f32[4]")}),
                  "one entry per class"));
  EXPECT_TRUE(has(inferError(OpKind::SoftmaxCrossEntropyLoss,
                             {in("f32[2,5]"), in("f32[2]")}),
                  "i64 or i32"));
  EXPECT_TRUE(has(inferError(OpKind::SoftmaxCrossEntropyLoss,
                             {in("f32[2,5]"), in("i64[2]")},
                             attrs({{"reduction", "avg"}})),
                  "reduction"));
}

TEST_F(InferLossScatterSort, ElementwiseLike) {
  EXPECT_EQ(infer(OpKind::Trilu, {in("f32[N,3,4]")}), "f32[N,3,4]");
  EXPECT_EQ(infer(OpKind::Trilu, {in("i32[3,4]"), scalar<int64_t>(1)}),
            "i32[3,4]");
  EXPECT_TRUE(has(inferError(OpKind::Trilu, {in("f32[4]")}), "rank >= 2"));
  EXPECT_EQ(infer(OpKind::CumSum, {in("f32[N,3]"), scalar<int32_t>(-1)}),
            "f32[N,3]");
  EXPECT_TRUE(has(inferError(OpKind::CumSum, {in("f32[3]"), ints({1})}),
                  "out of range"));
  EXPECT_EQ(infer(OpKind::EyeLike, {in("f32[3,N]")}), "f32[3,N]");
  EXPECT_EQ(infer(OpKind::EyeLike, {in("f32[3,4]")}, attrs({{"dtype", 7}})),
            "i64[3,4]");
  EXPECT_TRUE(has(inferError(OpKind::EyeLike, {in("f32[3]")}), "rank 2"));
  EXPECT_EQ(infer(OpKind::Det, {in("f32[N,3,3]")}), "f32[N]");
  EXPECT_EQ(infer(OpKind::Det, {in("f64[M,M]")}), "f64[]");
  EXPECT_TRUE(has(inferError(OpKind::Det, {in("f32[2,3]")}), "square"));
  EXPECT_EQ(infer(OpKind::MeanVarianceNormalization, {in("f32[N,3,4,4]")}),
            "f32[N,3,4,4]");
  EXPECT_TRUE(
      has(inferError(OpKind::MeanVarianceNormalization, {in("f32[3,4]")}),
          "out of range"));
  EXPECT_EQ(infer(OpKind::LRN, {in("f32[N,3,8,8]")}, attrs({{"size", 3}})),
            "f32[N,3,8,8]");
  EXPECT_TRUE(has(
      inferError(OpKind::LRN, {in("f32[1,3]")}, attrs({{"size", 0}})), "size"));
  EXPECT_EQ(infer(OpKind::ReverseSequence, {in("f32[T,B,3]"), in("i64[B]")}),
            "f32[T,B,3]");
  EXPECT_TRUE(
      has(inferError(OpKind::ReverseSequence, {in("f32[4,2,3]"), in("i64[3]")}),
          "one entry per batch"));
}

TEST_F(InferLossScatterSort, Blocks) {
  auto B2 = attrs({{"blocksize", 2}});
  EXPECT_EQ(infer(OpKind::DepthToSpace, {in("f32[N,8,3,W]")}, B2),
            "f32[N,2,6,?]");
  EXPECT_EQ(infer(OpKind::SpaceToDepth, {in("f32[N,3,4,6]")}, B2),
            "f32[N,12,2,3]");
  EXPECT_EQ(infer(OpKind::SpaceToDepth, {in("f32[*]")}, B2), "f32[?,?,?,?]");
  EXPECT_TRUE(has(inferError(OpKind::DepthToSpace, {in("f32[1,6,2,2]")}, B2),
                  "not divisible by 4"));
  EXPECT_TRUE(has(inferError(OpKind::SpaceToDepth, {in("f32[1,1,2,3]")}, B2),
                  "width 3"));
  EXPECT_TRUE(has(inferError(OpKind::DepthToSpace, {in("f32[1,4,2,2]")},
                             attrs({{"blocksize", 2}, {"mode", "XYZ"}})),
                  "mode"));
}

TEST_F(InferLossScatterSort, MaxUnpool) {
  auto K = attrs({{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}});
  EXPECT_EQ(
      infer(OpKind::MaxUnpool, {in("f32[N,3,2,H]"), in("i64[N,3,2,H]")}, K),
      "f32[N,3,4,?]");
  EXPECT_EQ(infer(OpKind::MaxUnpool,
                  {in("f32[1,1,2,2]"), in("i64[1,1,2,2]"), ints({1, 1, 5, 5})},
                  K),
            "f32[1,1,5,5]");
  EXPECT_EQ(infer(OpKind::MaxUnpool,
                  {in("f32[1,1,2,2]"), in("i64[1,1,2,2]"), in("i64[4]")}, K),
            "f32[?,?,?,?]");
  EXPECT_TRUE(has(
      inferError(OpKind::MaxUnpool,
                 {in("f32[1,1,2,2]"), in("i64[1,1,2,2]"), ints({1, 5, 5})}, K),
      "must have 4 entries"));
}

TEST_F(InferLossScatterSort, EinsumPlan) {
  EinsumPlan P;
  std::string E;
  ASSERT_TRUE(planEinsum("...ij,jk", {4, 2}, P, E)) << E;
  EXPECT_EQ(P.EllipsisRank, 2);
  EXPECT_EQ(P.InputLabels[0], (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(P.InputLabels[1], (std::vector<int>{3, 4}));
  // Implicit: the ellipsis, then i and k (j occurs twice).
  EXPECT_EQ(P.OutputLabels, (std::vector<int>{0, 1, 2, 4}));
  ASSERT_TRUE(planEinsum("ii", {2}, P, E));
  EXPECT_TRUE(P.OutputLabels.empty());
  ASSERT_TRUE(planEinsum("Ba,aB->", {2, 2}, P, E));
  EXPECT_TRUE(P.OutputLabels.empty());
  ASSERT_TRUE(planEinsum("ba", {2}, P, E));
  EXPECT_EQ(P.OutputLabels, (std::vector<int>{1, 0}));
  EXPECT_FALSE(planEinsum("i...j...", {3}, P, E));
  EXPECT_TRUE(has(E, "more than one ellipsis")) << E;
  EXPECT_FALSE(planEinsum("ij->i->j", {2}, P, E));
  EXPECT_FALSE(planEinsum("i.j", {2}, P, E));
}

TEST_F(InferLossScatterSort, Einsum) {
  auto Eq = [](const char *S) { return attrs({{"equation", S}}); };
  EXPECT_EQ(infer(OpKind::Einsum, {in("f32[N,3,4]"), in("f32[N,4,5]")},
                  Eq("bij,bjk->bik")),
            "f32[N,3,5]");
  EXPECT_EQ(
      infer(OpKind::Einsum, {in("f32[N,?,4]"), in("f32[4,M]")}, Eq("...j,jk")),
      "f32[N,?,M]");
  EXPECT_EQ(infer(OpKind::Einsum, {in("f32[2,1,4]"), in("f32[3,4]")},
                  Eq("...j,...j")),
            "f32[2,3]");
  EXPECT_EQ(infer(OpKind::Einsum, {in("f32[?,3]")}, Eq("ii")), "f32[]");
  EXPECT_EQ(infer(OpKind::Einsum, {in("f32[?,3]")}, Eq("ii->i")), "f32[3]");
  EXPECT_EQ(infer(OpKind::Einsum, {in("f32[*]")}, Eq("ij->ji")), "f32[*]");
  EXPECT_TRUE(has(inferError(OpKind::Einsum, {in("f32[2,3]"), in("f32[4,5]")},
                             Eq("ij,jk->ik")),
                  "label 'j' has extent 3 and extent 4"));
  EXPECT_TRUE(has(inferError(OpKind::Einsum, {in("f32[2,3]"), in("f32[4,3]")},
                             Eq("...,...")),
                  "do not broadcast"));
  EXPECT_TRUE(has(
      inferError(OpKind::Einsum, {in("f32[2,3]"), in("i64[3]")}, Eq("ij,j")),
      "same dtype"));
}

TEST_F(InferLossScatterSort, ValueDependent) {
  // Compress: exact with a known condition.
  EXPECT_EQ(infer(OpKind::Compress, {in("f32[3,2]"), boolConst({0, 1, 1})},
                  attrs({{"axis", 0}})),
            "f32[2,2]");
  EXPECT_EQ(infer(OpKind::Compress, {in("f32[3,2]"), in("bool[3]")},
                  attrs({{"axis", 1}})),
            "f32[3,?]");
  EXPECT_EQ(infer(OpKind::Compress, {in("f32[3,2]"), boolConst({1, 0, 1})}),
            "f32[2]");
  EXPECT_TRUE(has(inferError(OpKind::Compress,
                             {in("f32[3,2]"), boolConst({0, 0, 0, 1})},
                             attrs({{"axis", 0}})),
                  "condition entry 3"));
  // OneHot: depth known or not.
  EXPECT_EQ(infer(OpKind::OneHot, {in("i64[N,3]"), ints({10}), in("f32[2]")}),
            "f32[N,3,10]");
  EXPECT_EQ(infer(OpKind::OneHot, {in("i64[N,3]"), in("i64[]"), in("i64[2]")},
                  attrs({{"axis", 0}})),
            "i64[?,N,3]");
  // TopK.
  auto Outs = inferAll(OpKind::TopK, {in("f32[N,10]"), ints({3})}, {}, 2);
  EXPECT_EQ(Outs, (std::vector<std::string>{"f32[N,3]", "i64[N,3]"}));
  Outs = inferAll(OpKind::TopK, {in("f32[N,10]"), in("i64[1]")},
                  attrs({{"axis", 0}}), 2);
  EXPECT_EQ(Outs, (std::vector<std::string>{"f32[?,10]", "i64[?,10]"}));
  EXPECT_TRUE(
      has(inferError(OpKind::TopK, {in("f32[4]"), ints({5})}, {}, 2), "K = 5"));
  // NonZero.
  EXPECT_EQ(infer(OpKind::NonZero, {in("f32[N,3]")}), "i64[2,?]");
  EXPECT_EQ(infer(OpKind::NonZero, {ints({0, 4, 0, 2})}), "i64[1,2]");
}

TEST_F(InferLossScatterSort, Unique) {
  auto Outs4 = inferAll(OpKind::Unique, {ints({2, 1, 1, 3})}, {}, 4);
  EXPECT_EQ(Outs4,
            (std::vector<std::string>{"i64[3]", "i64[3]", "i64[4]", "i64[3]"}));
  Outs4 = inferAll(OpKind::Unique, {in("f32[2,5]")}, {}, 4);
  EXPECT_EQ(Outs4, (std::vector<std::string>{"f32[?]", "i64[?]", "i64[10]",
                                             "i64[?]"}));
  Outs4 = inferAll(OpKind::Unique, {in("f32[2,N]")}, attrs({{"axis", -1}}), 4);
  EXPECT_EQ(Outs4, (std::vector<std::string>{"f32[2,?]", "i64[?]", "i64[N]",
                                             "i64[?]"}));
  // Known values with an axis: the distinct rows.
  nng::rt::Tensor X =
      nng::rt::Tensor::fromVector<float>({1, 2, 1, 2, 0, 0}, Shape{3, 2});
  EXPECT_EQ(
      inferConcrete(OpKind::Unique, {X}, attrs({{"axis", 0}}), 4),
      (std::vector<std::string>{"f32[2,2]", "i64[2]", "i64[3]", "i64[2]"}));
  nng::rt::Tensor Nan = nng::rt::Tensor::fromVector<float>({NAN, NAN, 1}, Shape{3});
  EXPECT_EQ(inferConcrete(OpKind::Unique, {Nan}).at(0), "f32[2]");
}

TEST_F(InferLossScatterSort, ScatterGather) {
  EXPECT_EQ(infer(OpKind::ScatterElements,
                  {in("f32[N,5]"), in("i64[N,2]"), in("f32[N,2]")},
                  attrs({{"axis", 1}})),
            "f32[N,5]");
  EXPECT_TRUE(has(inferError(OpKind::ScatterElements,
                             {in("f32[3,5]"), in("i64[3,2]"), in("f32[3,3]")}),
                  "shape of indices"));
  EXPECT_TRUE(has(inferError(OpKind::ScatterElements,
                             {in("f32[3,5]"), in("i64[3,2]"), in("f32[3,2]")},
                             attrs({{"reduction", "max"}})),
                  "reduction"));
  EXPECT_EQ(infer(OpKind::ScatterND,
                  {in("f32[4,5,6]"), in("i64[N,2]"), in("f32[N,6]")}),
            "f32[4,5,6]");
  EXPECT_TRUE(
      has(inferError(OpKind::ScatterND,
                     {in("f32[4,5,6]"), in("i64[3,2]"), in("f32[3,5]")}),
          "must have shape f32[3,6]"));
  EXPECT_EQ(infer(OpKind::GatherND, {in("f32[2,3,4]"), in("i64[N,2]")}),
            "f32[N,4]");
  EXPECT_EQ(infer(OpKind::GatherND, {in("f32[B,3,4]"), in("i64[B,5,1]")},
                  attrs({{"batch_dims", 1}})),
            "f32[B,5,4]");
  EXPECT_EQ(infer(OpKind::GatherND, {in("f32[2,3]"), in("i64[4,?]")}),
            "f32[*]");
  EXPECT_TRUE(
      has(inferError(OpKind::GatherND, {in("f32[2,3]"), in("i64[4,3]")}),
          "last axis of indices"));
  EXPECT_TRUE(has(inferError(OpKind::GatherND, {in("f32[2,3]"), in("i64[4,1]")},
                             attrs({{"batch_dims", 1}})),
                  "batch axis 0 differs"));
}

} // namespace
