//===- WindowGeometryTest.cpp - Conv and pool windows, resolved -----------===//
//
// ir::readWindowAttrs (defaults from the op table, attributes an op lacks,
// the checks and their messages) and ir::forwardWindow /
// ir::transposedWindow (explicit pads, SAME_UPPER / SAME_LOWER splits,
// ceil_mode's dropped last window, output_padding and output_shape, unknown
// extents) as inference, the reference kernels and the cpu backend use
// them.
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/WindowGeometry.h"
#include "IrTestUtils.h"

using namespace nng::ir;
using namespace nng::ir::test;

namespace {

WindowAttrs read(OpKind K, const AttrMap &A, size_t R, Ints Kernel = {}) {
  return readWindowAttrs(getOpSchema(K), A, R, std::move(Kernel));
}

bool has(const std::string &S, std::string_view Part) {
  return S.find(Part) != std::string::npos;
}

TEST(WindowGeometry, DefaultsAndAttributesTheOpLacks) {
  WindowAttrs A = read(OpKind::Conv, {}, 2, {3, 3});
  ASSERT_TRUE(A.ok()) << A.Error;
  EXPECT_EQ(A.Kernel, (Ints{3, 3}));
  EXPECT_EQ(A.Strides, (Ints{1, 1}));
  EXPECT_EQ(A.Dilations, (Ints{1, 1}));
  EXPECT_EQ(A.Pads, (Ints{0, 0, 0, 0}));
  EXPECT_EQ(A.Pad, AutoPad::NotSet);
  EXPECT_FALSE(A.CeilMode);
  // AveragePool has no dilations: they read as 1 whatever the map holds.
  A = read(OpKind::AveragePool,
           attrs({{"kernel_shape", Ints{2, 2}},
                  {"dilations", Ints{2, 2}},
                  {"ceil_mode", 1}}),
           2);
  ASSERT_TRUE(A.ok()) << A.Error;
  EXPECT_EQ(A.Dilations, (Ints{1, 1}));
  EXPECT_TRUE(A.CeilMode);
  // kernel_shape wins over the kernel the caller passes.
  EXPECT_EQ(
      read(OpKind::Conv, attrs({{"kernel_shape", Ints{2}}}), 1, {5}).Kernel,
      (Ints{2}));
  // Pads are ignored unless auto_pad is NOTSET.
  A = read(OpKind::Conv, attrs({{"auto_pad", "VALID"}, {"pads", Ints{1, 1}}}),
           2, {3, 3});
  ASSERT_TRUE(A.ok()) << A.Error;
  EXPECT_EQ(A.Pads, (Ints{0, 0, 0, 0}));
}

TEST(WindowGeometry, AttributeErrors) {
  auto Err = [](OpKind K, const AttrMap &A, size_t R, Ints Kernel = {}) {
    return read(K, A, R, std::move(Kernel)).Error;
  };
  EXPECT_TRUE(has(Err(OpKind::MaxPool, {}, 2), "'kernel_shape' is required"));
  EXPECT_TRUE(has(Err(OpKind::MaxPool, attrs({{"kernel_shape", Ints{2}}}), 2),
                  "expected 2"));
  EXPECT_TRUE(has(Err(OpKind::Conv, attrs({{"strides", Ints{0, 1}}}), 2),
                  "strides [0, 1] has entry 0"));
  EXPECT_TRUE(
      has(Err(OpKind::Conv, attrs({{"pads", Ints{1, 1}}}), 2), "expected 4"));
  EXPECT_TRUE(has(Err(OpKind::Conv, attrs({{"pads", Ints{0, -1, 0, 0}}}), 2),
                  "must be >= 0"));
  EXPECT_TRUE(has(Err(OpKind::Conv, attrs({{"auto_pad", "SAME"}}), 2),
                  "auto_pad is 'SAME'"));
  EXPECT_TRUE(has(Err(OpKind::Conv, {}, 1, {0}), "must be positive"));
  EXPECT_TRUE(has(
      Err(OpKind::ConvTranspose, attrs({{"output_padding", Ints{-1}}}), 1, {3}),
      "output_padding"));
  EXPECT_TRUE(has(Err(OpKind::ConvTranspose,
                      attrs({{"output_shape", Ints{1, 2, 3}}}), 2, {3, 3}),
                  "output_shape"));
  // The first error wins.
  EXPECT_TRUE(has(Err(OpKind::Conv,
                      attrs({{"strides", Ints{0}}, {"auto_pad", "X"}}), 1, {3}),
                  "strides"));
}

TEST(WindowGeometry, ForwardPadsAndExtents) {
  WindowGeometry G = forwardWindow(
      read(OpKind::Conv,
           attrs({{"strides", Ints{2, 1}}, {"pads", Ints{1, 0, 2, 0}}}), 2,
           {3, 3}),
      {7, 5});
  ASSERT_TRUE(G.ok()) << G.Error;
  EXPECT_EQ(G.PadBegin, (Ints{1, 0}));
  EXPECT_EQ(G.PadEnd, (Ints{2, 0}));
  EXPECT_EQ(G.Out, (Ints{4, 3})); // (7 + 3 - 3) / 2 + 1, 5 - 3 + 1
  EXPECT_EQ(G.outNumel(), 12);
  EXPECT_EQ(G.kernelNumel(), 9);
  // SAME_UPPER puts the odd padding at the end, SAME_LOWER at the start.
  G = forwardWindow(
      read(OpKind::Conv,
           attrs({{"auto_pad", "SAME_UPPER"}, {"strides", Ints{2}}}), 1, {4}),
      {7});
  EXPECT_EQ(G.Out, (Ints{4})); // padding (4 - 1) * 2 + 4 - 7 = 3
  EXPECT_EQ(G.PadBegin, (Ints{1}));
  EXPECT_EQ(G.PadEnd, (Ints{2}));
  G = forwardWindow(
      read(OpKind::Conv,
           attrs({{"auto_pad", "SAME_LOWER"}, {"strides", Ints{2}}}), 1, {4}),
      {7});
  EXPECT_EQ(G.PadBegin, (Ints{2}));
  EXPECT_EQ(G.PadEnd, (Ints{1}));
  // Dilation widens the kernel.
  G = forwardWindow(
      read(OpKind::MaxPool,
           attrs({{"kernel_shape", Ints{3}}, {"dilations", Ints{2}}}), 1),
      {10});
  EXPECT_EQ(G.Out, (Ints{6}));
}

TEST(WindowGeometry, CeilModeDropsAWindowStartingInTheEndPadding) {
  auto Out = [](Ints Pads) {
    return forwardWindow(read(OpKind::MaxPool,
                              attrs({{"kernel_shape", Ints{2}},
                                     {"strides", Ints{3}},
                                     {"pads", Pads},
                                     {"ceil_mode", 1}}),
                              1),
                         {4})
        .Out;
  };
  EXPECT_EQ(Out({0, 0}), (Ints{2}));
  // ceil((4 + 2 - 2) / 3) + 1 = 3 windows, but the third starts at 6 >= 4 + 1.
  EXPECT_EQ(Out({1, 1}), (Ints{2}));
}

TEST(WindowGeometry, ForwardUnknownExtentsAndErrors) {
  WindowAttrs A = read(OpKind::Conv, {}, 2, {3, 3});
  WindowGeometry G = forwardWindow(A, {UnknownExtent, 5});
  ASSERT_TRUE(G.ok()) << G.Error;
  EXPECT_EQ(G.Out, (Ints{UnknownExtent, 3}));
  // An unknown kernel leaves every extent unknown.
  G = forwardWindow(read(OpKind::Conv, {}, 1), {5});
  EXPECT_EQ(G.Out, (Ints{UnknownExtent}));
  G = forwardWindow(A, {2, 5});
  EXPECT_TRUE(has(G.Error, "kernel spans 3")) << G.Error;
  G = forwardWindow(A, {5});
  EXPECT_TRUE(has(G.Error, "spatial axes")) << G.Error;
}

TEST(WindowGeometry, Transposed) {
  auto T = [](const AttrMap &M, Ints In) {
    return transposedWindow(read(OpKind::ConvTranspose, M, In.size(), {3, 3}),
                            In);
  };
  WindowGeometry G = T({}, {3, 3});
  EXPECT_EQ(G.Out, (Ints{5, 5}));
  EXPECT_EQ(G.PadBegin, (Ints{0, 0}));
  EXPECT_EQ(G.PadEnd, (Ints{0, 0}));
  G = T(attrs({{"strides", Ints{3, 2}}, {"pads", Ints{1, 2, 1, 2}}}), {3, 3});
  EXPECT_EQ(G.Out, (Ints{7, 3}));
  EXPECT_EQ(G.PadBegin, (Ints{1, 2}));
  EXPECT_EQ(G.PadEnd, (Ints{1, 2}));
  // output_padding is negative end padding.
  G = T(attrs({{"strides", Ints{3, 2}}, {"output_padding", Ints{1, 1}}}),
        {3, 3});
  EXPECT_EQ(G.Out, (Ints{10, 8}));
  EXPECT_EQ(G.PadEnd, (Ints{-1, -1}));
  // output_shape (with or without N and C) gives the extents; the padding
  // that reaches them is split.
  G = T(attrs({{"strides", Ints{3, 2}}, {"output_shape", Ints{1, 2, 9, 6}}}),
        {3, 3});
  EXPECT_EQ(G.Out, (Ints{9, 6})); // full results 9 and 7
  EXPECT_EQ(G.PadBegin, (Ints{0, 1}));
  EXPECT_EQ(G.PadEnd, (Ints{0, 0}));
  G = T(attrs({{"strides", Ints{2, 2}}, {"auto_pad", "SAME_UPPER"}}), {3, 3});
  EXPECT_EQ(G.Out, (Ints{6, 6}));
  EXPECT_EQ(G.PadBegin, (Ints{0, 0}));
  EXPECT_EQ(G.PadEnd, (Ints{1, 1}));
  // output_shape is known even where the input extent is not.
  G = T(attrs({{"output_shape", Ints{4, 4}}}), {UnknownExtent, 3});
  EXPECT_EQ(G.Out, (Ints{4, 4}));
  G = T({}, {UnknownExtent, 3});
  EXPECT_EQ(G.Out, (Ints{UnknownExtent, 5}));
  G = T(attrs({{"pads", Ints{3, 3, 3, 3}}}), {1, 1});
  EXPECT_TRUE(has(G.Error, "would have extent")) << G.Error;
}

} // namespace
