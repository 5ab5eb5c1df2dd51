//===- InferIndexingTest.cpp - Inference tests for Concat/Split/Slice/Gather -===//
//
// Concat (symbolic and zero-size parts), Split (equal parts and sizes),
// Slice (negative, clamped and reversed bounds, symbolic dims, unknown
// bounds), Gather and GatherElements, with error messages.
//
//===----------------------------------------------------------------------===//

#include "IrTestUtils.h"

#include <limits>

using namespace nng;
using namespace nng::ir;
using namespace nng::ir::test;

namespace {

constexpr int64_t Max = std::numeric_limits<int64_t>::max();
constexpr int64_t Min = std::numeric_limits<int64_t>::min();

class InferIndexing : public IrTest {
protected:
  bool has(const std::string &S, std::string_view Part) {
    return S.find(Part) != std::string::npos;
  }
  std::string slice(std::string_view X, Ints Starts, Ints Ends, Ints Axes = {},
                    Ints Steps = {}) {
    std::vector<Value *> Ins{in(X), ints(Starts), ints(Ends)};
    if (!Axes.empty() || !Steps.empty())
      Ins.push_back(Axes.empty() ? nullptr : ints(Axes));
    if (!Steps.empty())
      Ins.push_back(ints(Steps));
    return infer(OpKind::Slice, Ins);
  }
};

TEST_F(InferIndexing, Concat) {
  auto A0 = attrs({{"axis", 0}});
  EXPECT_EQ(infer(OpKind::Concat, {in("f32[2,3]"), in("f32[4,3]")}, A0),
            "f32[6,3]");
  EXPECT_EQ(infer(OpKind::Concat, {in("f32[N,3]"), in("f32[N,5]")},
                  attrs({{"axis", -1}})),
            "f32[N,8]");
  EXPECT_EQ(infer(OpKind::Concat, {in("f32[N,3]"), in("f32[M,3]")}, A0),
            "f32[?,3]");
  EXPECT_EQ(infer(OpKind::Concat, {in("f32[N,3]"), in("f32[0,3]")}, A0),
            "f32[N,3]");
  EXPECT_EQ(infer(OpKind::Concat, {in("f32[?,3]"), in("f32[5,3]")},
                  attrs({{"axis", 1}})),
            "f32[5,6]");
  EXPECT_EQ(infer(OpKind::Concat, {in("f32[2,3]"), in("f32[*]")}, A0),
            "f32[?,3]");
  EXPECT_EQ(infer(OpKind::Concat, {in("i64[1]")}, A0), "i64[1]");
}

TEST_F(InferIndexing, ConcatErrors) {
  auto A0 = attrs({{"axis", 0}});
  std::string E =
      inferError(OpKind::Concat, {in("f32[2,3]"), in("f32[2,4]")}, A0);
  EXPECT_TRUE(has(E, "f32[2,3]") && has(E, "f32[2,4]") && has(E, "axis 1"))
      << E;
  E = inferError(OpKind::Concat, {in("f32[2,3]"), in("f32[2]")}, A0);
  EXPECT_TRUE(has(E, "same rank")) << E;
  E = inferError(OpKind::Concat, {in("f32[]"), in("f32[]")}, A0);
  EXPECT_TRUE(has(E, "scalars")) << E;
  E = inferError(OpKind::Concat, {in("f32[2]"), in("i64[2]")}, A0);
  EXPECT_TRUE(has(E, "i64[2]") && has(E, "inputs[1]")) << E;
  E = inferError(OpKind::Concat, {in("f32[2]"), in("f32[2]")});
  EXPECT_TRUE(has(E, "'axis' is required")) << E;
  E = inferError(OpKind::Concat, {in("f32[2]")}, attrs({{"axis", 1}}));
  EXPECT_TRUE(has(E, "axis 1 is out of range for rank 1")) << E;
}

TEST_F(InferIndexing, Split) {
  Value *X = in("f32[6,4]");
  EXPECT_EQ(inferAll(OpKind::Split, {X}, {}, 3),
            (std::vector<std::string>{"f32[2,4]", "f32[2,4]", "f32[2,4]"}));
  EXPECT_EQ(inferAll(OpKind::Split, {X, ints({1, 5})}, {}, 2),
            (std::vector<std::string>{"f32[1,4]", "f32[5,4]"}));
  EXPECT_EQ(
      inferAll(OpKind::Split, {X, ints({0, 4})}, attrs({{"axis", -1}}), 2),
      (std::vector<std::string>{"f32[6,0]", "f32[6,4]"}));
  EXPECT_EQ(inferAll(OpKind::Split, {in("f32[N,4]")}, {}, 2),
            (std::vector<std::string>{"f32[?,4]", "f32[?,4]"}));
  EXPECT_EQ(inferAll(OpKind::Split, {in("f32[N,4]")}, attrs({{"axis", 1}}), 2),
            (std::vector<std::string>{"f32[N,2]", "f32[N,2]"}));
  EXPECT_EQ(inferAll(OpKind::Split, {X, in("i64[2]")}, {}, 2),
            (std::vector<std::string>{"f32[?,4]", "f32[?,4]"}));
  EXPECT_EQ(inferConcrete(OpKind::Split, {zeros({5, 2}), i64s({2, 3})}, {}, 2),
            (std::vector<std::string>{"f32[2,2]", "f32[3,2]"}));
}

TEST_F(InferIndexing, SplitErrors) {
  Value *X = in("f32[6,4]");
  std::string E = inferError(OpKind::Split, {X, ints({1, 2})}, {}, 2);
  EXPECT_TRUE(has(E, "adds up to 3") && has(E, "f32[6,4]")) << E;
  E = inferError(OpKind::Split, {X, ints({1, 2, 3})}, {}, 2);
  EXPECT_TRUE(has(E, "3 sizes") && has(E, "2 outputs")) << E;
  E = inferError(OpKind::Split, {X}, {}, 4);
  EXPECT_TRUE(has(E, "4 equal parts")) << E;
  E = inferError(OpKind::Split, {X}, attrs({{"axis", 2}}), 2);
  EXPECT_TRUE(has(E, "axis 2 is out of range")) << E;
}

TEST_F(InferIndexing, SliceStatic) {
  EXPECT_EQ(slice("f32[10,20]", {1}, {5}), "f32[4,20]");
  EXPECT_EQ(slice("f32[10,20]", {0, -3}, {Max, -1}), "f32[10,2]");
  EXPECT_EQ(slice("f32[10,20]", {2}, {-2}, {-1}), "f32[10,16]");
  EXPECT_EQ(slice("f32[10,20]", {0}, {10}, {0}, {3}), "f32[4,20]");
  EXPECT_EQ(slice("f32[10,20]", {100}, {200}), "f32[0,20]");
  EXPECT_EQ(slice("f32[10,20]", {-100}, {3}), "f32[3,20]");
  EXPECT_EQ(slice("f32[10,20]", {5}, {2}), "f32[0,20]");
  EXPECT_EQ(slice("f32[0,3]", {0}, {1}), "f32[0,3]");
  EXPECT_EQ(slice("f32[10]", {1}, {8}, {}, {Max}), "f32[1]");
}

TEST_F(InferIndexing, SliceNegativeSteps) {
  EXPECT_EQ(slice("f32[10]", {-1}, {Min}, {0}, {-1}), "f32[10]");
  EXPECT_EQ(slice("f32[10]", {5}, {-100}, {0}, {-2}), "f32[3]");
  EXPECT_EQ(slice("f32[10]", {Max}, {0}, {0}, {-3}), "f32[3]");
  EXPECT_EQ(slice("f32[10]", {2}, {5}, {0}, {-1}), "f32[0]");
  EXPECT_EQ(slice("f32[0]", {-1}, {Min}, {0}, {-1}), "f32[0]");
}

TEST_F(InferIndexing, SliceSymbolicAndUnknown) {
  EXPECT_EQ(slice("f32[N,8]", {0}, {Max}), "f32[N,8]");
  EXPECT_EQ(slice("f32[N,8]", {1}, {Max}), "f32[?,8]");
  EXPECT_EQ(slice("f32[N,8]", {2}, {6}, {1}), "f32[N,4]");
  EXPECT_EQ(infer(OpKind::Slice,
                  {in("f32[4,8]"), in("i64[1]"), in("i64[1]"), ints({1})}),
            "f32[4,?]");
  EXPECT_EQ(infer(OpKind::Slice, {in("f32[4,8]"), in("i64[1]"), in("i64[1]")}),
            "f32[?,?]");
  EXPECT_EQ(infer(OpKind::Slice, {in("f32[*]"), ints({0}), ints({1})}),
            "f32[*]");
  EXPECT_EQ(inferConcrete(OpKind::Slice, {zeros({7, 3}), i64s({1}), i64s({-1}),
                                          i64s({0}), i64s({2})})
                .at(0),
            "f32[3,3]");
}

TEST_F(InferIndexing, SliceErrors) {
  std::string E = inferError(OpKind::Slice, {in("f32[4]"), ints({0}), ints({4}),
                                             ints({0}), ints({0})});
  EXPECT_TRUE(has(E, "zero step")) << E;
  E = inferError(OpKind::Slice,
                 {in("f32[4,4]"), ints({0, 0}), ints({1, 1}), ints({1, -1})});
  EXPECT_TRUE(has(E, "twice")) << E;
  E = inferError(OpKind::Slice, {in("f32[4,4]"), ints({0, 0}), ints({1})});
  EXPECT_TRUE(has(E, "differ in length")) << E;
  E = inferError(OpKind::Slice,
                 {in("f32[4]"), ints({0}), ints({1}), ints({1})});
  EXPECT_TRUE(has(E, "out of range for rank 1")) << E;
  E = inferError(OpKind::Slice, {in("f32[4]"), in("f32[1]"), ints({1})});
  EXPECT_TRUE(has(E, "i64 or i32")) << E;
}

TEST_F(InferIndexing, Gather) {
  Value *X = in("f32[5,4]");
  EXPECT_EQ(infer(OpKind::Gather, {X, in("i64[3]")}), "f32[3,4]");
  EXPECT_EQ(infer(OpKind::Gather, {X, in("i32[N,2]")}, attrs({{"axis", 1}})),
            "f32[5,N,2]");
  EXPECT_EQ(infer(OpKind::Gather, {X, scalar<int64_t>(-1)}), "f32[4]");
  EXPECT_EQ(
      infer(OpKind::Gather, {X, scalar<int64_t>(2)}, attrs({{"axis", -1}})),
      "f32[5]");
  EXPECT_EQ(infer(OpKind::Gather, {in("f32[V,D]"), in("i64[B,T]")}),
            "f32[B,T,D]");
  EXPECT_EQ(infer(OpKind::Gather, {X, in("i64[0]")}), "f32[0,4]");
  std::string E = inferError(OpKind::Gather, {X, ints({1, 7})});
  EXPECT_TRUE(has(E, "index 7 is out of range for axis 0") &&
              has(E, "f32[5,4]"))
      << E;
  E = inferError(OpKind::Gather, {X, in("f32[2]")});
  EXPECT_TRUE(has(E, "i64 or i32")) << E;
  E = inferError(OpKind::Gather, {in("f32[]"), in("i64[]")});
  EXPECT_TRUE(has(E, "rank >= 1")) << E;
  E = inferError(OpKind::Gather, {X, in("i64[]")}, attrs({{"axis", 2}}));
  EXPECT_TRUE(has(E, "axis 2")) << E;
}

TEST_F(InferIndexing, GatherElements) {
  EXPECT_EQ(infer(OpKind::GatherElements, {in("f32[3,4]"), in("i64[3,2]")},
                  attrs({{"axis", 1}})),
            "f32[3,2]");
  EXPECT_EQ(infer(OpKind::GatherElements, {in("f16[N,4]"), in("i32[N,4]")}),
            "f16[N,4]");
  std::string E =
      inferError(OpKind::GatherElements, {in("f32[3,4]"), in("i64[3]")});
  EXPECT_TRUE(has(E, "same rank")) << E;
}

} // namespace
