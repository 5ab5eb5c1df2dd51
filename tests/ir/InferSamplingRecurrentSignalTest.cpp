//===- InferSamplingRecurrentSignalTest.cpp - Inference tests: resize, sampling,
//recurrent, signal, integer ops -===//
//
// Resize (sizes, scales, unknown values, empty scales), GridSample,
// RoiAlign, NonMaxSuppression (exact count when small values are known),
// RNN / GRU / LSTM (both layouts, directions, hidden_size from R), DFT,
// STFT, the windows and MelWeightMatrix (extents from constant inputs),
// the integer and quantized conv / matmul ops and DynamicQuantizeLinear,
// with their error messages.
//
//===----------------------------------------------------------------------===//

#include "IrTestUtils.h"

using namespace nng;
using namespace nng::ir;
using namespace nng::ir::test;

namespace {

using Strings = std::vector<std::string>;

class InferSamplingRecurrentSignal : public IrTest {
protected:
  bool has(const std::string &S, std::string_view Part) {
    return S.find(Part) != std::string::npos;
  }
  /// A 1-D f32 initializer.
  Value *floats(const std::vector<float> &V) {
    return G.addInitializer("f" + std::to_string(Counter++),
                            nng::rt::Tensor::fromVector<float>(
                                V, Shape{static_cast<int64_t>(V.size())}));
  }
  /// A tensor initializer.
  Value *constant(const nng::rt::Tensor &T) {
    return G.addInitializer("t" + std::to_string(Counter++), T);
  }
};

TEST_F(InferSamplingRecurrentSignal, ResizeExtents) {
  EXPECT_EQ(infer(OpKind::Resize,
                  {in("f32[N,3,10,20]"), nullptr, nullptr, ints({1, 3, 5, 7})}),
            "f32[1,3,5,7]");
  EXPECT_EQ(infer(OpKind::Resize,
                  {in("f32[N,3,10,20]"), nullptr, floats({1, 1, 2, 0.55f})}),
            "f32[N,3,20,11]");
  // Unknown values: the rank is kept.
  EXPECT_EQ(
      infer(OpKind::Resize, {in("f32[N,3,10,20]"), nullptr, in("f32[4]")}),
      "f32[?,?,?,?]");
  EXPECT_EQ(
      infer(OpKind::Resize, {in("u8[*]"), nullptr, nullptr, in("i64[3]")}),
      "u8[*]");
  // An empty scales constant with sizes (opset-11 style).
  EXPECT_EQ(infer(OpKind::Resize,
                  {in("f32[2,2]"), floats({}), floats({}), ints({4, 6})}),
            "f32[4,6]");
}

TEST_F(InferSamplingRecurrentSignal, ResizeErrors) {
  EXPECT_TRUE(has(inferError(OpKind::Resize, {in("f32[2,2]"), nullptr,
                                              floats({2, 2}), ints({4, 4})}),
                  "not both"));
  EXPECT_TRUE(has(inferError(OpKind::Resize, {in("f32[2,2]")}), "sizes"));
  EXPECT_TRUE(has(
      inferError(OpKind::Resize, {in("f32[2,2]"), nullptr, nullptr, ints({4})}),
      "rank 2"));
  EXPECT_TRUE(
      has(inferError(OpKind::Resize, {in("f32[2,2]"), nullptr, floats({1, 0})}),
          "positive"));
  EXPECT_TRUE(has(inferError(OpKind::Resize,
                             {in("f32[2,2]"), nullptr, nullptr, ints({4, 4})},
                             attrs({{"mode", "area"}})),
                  "'area'"));
  EXPECT_TRUE(has(inferError(OpKind::Resize,
                             {in("f32[2,2]"), nullptr, nullptr, in("f32[2]")}),
                  "i64"));
}

TEST_F(InferSamplingRecurrentSignal, GridSampleAndRoiAlign) {
  EXPECT_EQ(infer(OpKind::GridSample, {in("f32[N,3,8,8]"), in("f32[N,5,6,2]")}),
            "f32[N,3,5,6]");
  EXPECT_TRUE(has(
      inferError(OpKind::GridSample, {in("f32[1,3,8,8]"), in("f32[1,5,6,3]")}),
      "(x, y)"));
  EXPECT_TRUE(has(
      inferError(OpKind::GridSample, {in("f32[2,3,8,8]"), in("f32[1,5,6,2]")}),
      "batch"));
  EXPECT_EQ(infer(OpKind::RoiAlign,
                  {in("f32[2,16,32,32]"), in("f32[R,4]"), in("i64[R]")},
                  attrs({{"output_height", 7}, {"output_width", 5}})),
            "f32[R,16,7,5]");
  EXPECT_EQ(infer(OpKind::RoiAlign,
                  {in("f32[2,16,32,32]"), in("f32[?,4]"), in("i64[9]")}),
            "f32[9,16,1,1]");
  EXPECT_TRUE(has(inferError(OpKind::RoiAlign, {in("f32[2,16,32,32]"),
                                                in("f32[3,5]"), in("i64[3]")}),
                  "[num_rois, 4]"));
  EXPECT_TRUE(
      has(inferError(OpKind::RoiAlign,
                     {in("f32[2,16,32,32]"), in("f32[3,4]"), in("i64[3]")},
                     attrs({{"mode", "min"}})),
          "'min'"));
}

TEST_F(InferSamplingRecurrentSignal, NonMaxSuppression) {
  EXPECT_EQ(infer(OpKind::NonMaxSuppression,
                  {in("f32[1,6,4]"), in("f32[1,1,6]"), ints({3})}),
            "i64[?,3]");
  // Known values: the selection is counted. Boxes 0 and 1 overlap (IoU
  // 0.82); box 2 is apart.
  Value *Boxes = constant(nng::rt::Tensor::fromVector<float>(
      {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 5, 1, 6}, Shape{1, 3, 4}));
  Value *Scores = constant(
      nng::rt::Tensor::fromVector<float>({0.9f, 0.8f, 0.7f}, Shape{1, 1, 3}));
  EXPECT_EQ(infer(OpKind::NonMaxSuppression,
                  {Boxes, Scores, ints({10}), floats({0.5f})}),
            "i64[2,3]");
  EXPECT_EQ(infer(OpKind::NonMaxSuppression,
                  {Boxes, Scores, ints({10}), floats({0.9f})}),
            "i64[3,3]");
  EXPECT_EQ(infer(OpKind::NonMaxSuppression,
                  {Boxes, Scores, ints({10}), floats({0.5f}), floats({0.75f})}),
            "i64[1,3]");
  EXPECT_EQ(infer(OpKind::NonMaxSuppression, {Boxes, Scores}), "i64[0,3]");
  // Known but large (a detector's anchors by its classes, here 8 x 1024):
  // left to the kernel, which selects them at run time anyway.
  Value *ManyBoxes = constant(nng::rt::Tensor::fromVector<float>(
      std::vector<float>(1024 * 4, 0.0f), Shape{1, 1024, 4}));
  Value *ManyScores = constant(nng::rt::Tensor::fromVector<float>(
      std::vector<float>(8 * 1024, 0.5f), Shape{1, 8, 1024}));
  EXPECT_EQ(infer(OpKind::NonMaxSuppression,
                  {ManyBoxes, ManyScores, ints({10}), floats({0.5f})}),
            "i64[?,3]");
  EXPECT_TRUE(has(inferError(OpKind::NonMaxSuppression,
                             {in("f32[1,6,4]"), in("f32[1,1,5]")}),
                  "disagree"));
}

TEST_F(InferSamplingRecurrentSignal, RecurrentShapes) {
  // RNN, layout 0: Y [seq, dirs, batch, hidden], Y_h [dirs, batch, hidden].
  EXPECT_EQ(
      inferAll(OpKind::RNN,
               {in("f32[T,B,10]"), in("f32[1,16,10]"), in("f32[1,16,16]")}, {},
               2),
      (Strings{"f32[T,1,B,16]", "f32[1,B,16]"}));
  // GRU, bidirectional, layout 1: Y [batch, seq, dirs, hidden].
  EXPECT_EQ(inferAll(OpKind::GRU,
                     {in("f32[4,7,3]"), in("f32[2,15,3]"), in("f32[2,15,5]")},
                     attrs({{"direction", "bidirectional"}, {"layout", 1}}), 2),
            (Strings{"f32[4,7,2,5]", "f32[4,2,5]"}));
  // LSTM with every optional input and all three outputs.
  EXPECT_EQ(inferAll(OpKind::LSTM,
                     {in("f32[5,2,3]"), in("f32[1,16,3]"), in("f32[1,16,4]"),
                      in("f32[1,32]"), in("i32[2]"), in("f32[1,2,4]"),
                      in("f32[1,2,4]"), in("f32[1,12]")},
                     attrs({{"hidden_size", 4}}), 3),
            (Strings{"f32[5,1,2,4]", "f32[1,2,4]", "f32[1,2,4]"}));
}

TEST_F(InferSamplingRecurrentSignal, RecurrentErrors) {
  EXPECT_TRUE(has(inferError(OpKind::LSTM, {in("f32[5,2,3]"), in("f32[1,12,3]"),
                                            in("f32[1,16,4]")}),
                  "operand W"));
  EXPECT_TRUE(
      has(inferError(OpKind::RNN,
                     {in("f32[5,2,3]"), in("f32[1,4,3]"), in("f32[1,4,4]")},
                     attrs({{"hidden_size", 5}})),
          "hidden_size"));
  EXPECT_TRUE(
      has(inferError(OpKind::RNN,
                     {in("f32[5,2,3]"), in("f32[1,4,3]"), in("f32[1,4,4]")},
                     attrs({{"direction", "bidirectional"}})),
          "num_directions"));
  EXPECT_TRUE(has(inferError(OpKind::GRU, {in("f32[5,2,3]"), in("f32[1,12,3]"),
                                           in("f32[1,12,4]"), nullptr, nullptr,
                                           in("f32[1,3,4]")}),
                  "initial_h"));
  EXPECT_TRUE(
      has(inferError(OpKind::GRU,
                     {in("f32[5,2,3]"), in("f32[1,12,3]"), in("f32[1,12,4]")},
                     attrs({{"activations", Strings{"Tanh"}}})),
          "activations"));
  EXPECT_TRUE(has(inferError(OpKind::RNN, {in("i32[5,2,3]"), in("i32[1,4,3]"),
                                           in("i32[1,4,4]")}),
                  "floating-point"));
}

TEST_F(InferSamplingRecurrentSignal, DftAndStft) {
  EXPECT_EQ(infer(OpKind::DFT, {in("f32[N,10,10,1]")}), "f32[N,10,10,2]");
  EXPECT_EQ(infer(OpKind::DFT, {in("f32[N,10,10,1]")},
                  attrs({{"axis", 2}, {"onesided", 1}})),
            "f32[N,10,6,2]");
  EXPECT_EQ(infer(OpKind::DFT, {in("f32[1,10,2]"), scalar<int64_t>(16)}),
            "f32[1,16,2]");
  EXPECT_EQ(infer(OpKind::DFT, {in("f32[1,10,2]"), in("i64[]")}), "f32[1,?,2]");
  EXPECT_TRUE(has(inferError(OpKind::DFT, {in("f32[1,10,3]")}), "1 (real)"));
  EXPECT_TRUE(
      has(inferError(OpKind::DFT, {in("f32[1,10,1]")}, attrs({{"axis", -1}})),
          "complex axis"));
  EXPECT_TRUE(has(
      inferError(OpKind::DFT, {in("f32[1,10,2]")}, attrs({{"onesided", 1}})),
      "real"));
  // STFT: frames = 1 + (128 - 16) / 8 = 15, bins = 16 / 2 + 1.
  EXPECT_EQ(infer(OpKind::STFT, {in("f32[1,128,1]"), scalar<int64_t>(8),
                                 nullptr, scalar<int64_t>(16)}),
            "f32[1,15,9,2]");
  EXPECT_EQ(infer(OpKind::STFT,
                  {in("f32[B,128,1]"), scalar<int64_t>(8), in("f32[16]")},
                  attrs({{"onesided", 0}})),
            "f32[B,15,16,2]");
  EXPECT_EQ(
      infer(OpKind::STFT, {in("f32[1,128,1]"), in("i64[]"), in("f32[16]")}),
      "f32[1,?,9,2]");
  EXPECT_TRUE(
      has(inferError(OpKind::STFT, {in("f32[1,128,1]"), scalar<int64_t>(8)}),
          "window or a frame_length"));
  EXPECT_TRUE(
      has(inferError(OpKind::STFT, {in("f32[1,8,1]"), scalar<int64_t>(8),
                                    nullptr, scalar<int64_t>(16)}),
          "shorter"));
}

TEST_F(InferSamplingRecurrentSignal, WindowsAndMel) {
  EXPECT_EQ(infer(OpKind::HannWindow, {scalar<int32_t>(10)}), "f32[10]");
  EXPECT_EQ(infer(OpKind::HammingWindow, {scalar<int64_t>(7)},
                  attrs({{"output_datatype", 11}})),
            "f64[7]");
  EXPECT_EQ(infer(OpKind::BlackmanWindow, {in("i64[]")}), "f32[?]");
  EXPECT_TRUE(has(inferError(OpKind::HannWindow, {in("f32[]")}), "integer"));
  EXPECT_TRUE(has(inferError(OpKind::HannWindow, {scalar<int64_t>(4)},
                             attrs({{"output_datatype", 99}})),
                  "output_datatype"));
  EXPECT_EQ(
      infer(OpKind::MelWeightMatrix,
            {scalar<int32_t>(8), scalar<int32_t>(16), scalar<int32_t>(8192),
             scalar<float>(0), scalar<float>(4096)}),
      "f32[9,8]");
  EXPECT_EQ(
      infer(OpKind::MelWeightMatrix, {in("i64[]"), scalar<int64_t>(512),
                                      in("i64[]"), in("f32[]"), in("f32[]")}),
      "f32[257,?]");
}

TEST_F(InferSamplingRecurrentSignal, IntegerAndQuantized) {
  EXPECT_EQ(infer(OpKind::ConvInteger,
                  {in("u8[N,3,8,8]"), in("i8[16,3,3,3]"), in("u8[]")},
                  attrs({{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}})),
            "i32[N,16,4,4]");
  EXPECT_EQ(infer(OpKind::MatMulInteger, {in("u8[B,4,3]"), in("u8[3,2]")}),
            "i32[B,4,2]");
  EXPECT_EQ(infer(OpKind::QLinearConv,
                  {in("u8[1,3,8,8]"), in("f32[]"), in("u8[]"),
                   in("i8[16,3,3,3]"), in("f32[16]"), in("i8[16]"), in("f32[]"),
                   in("i8[]"), in("i32[16]")}),
            "i8[1,16,6,6]");
  EXPECT_EQ(infer(OpKind::QLinearMatMul,
                  {in("u8[2,4]"), in("f32[]"), in("u8[]"), in("u8[4,3]"),
                   in("f32[]"), in("u8[]"), in("f32[]"), in("u8[]")}),
            "u8[2,3]");
  EXPECT_EQ(inferAll(OpKind::DynamicQuantizeLinear, {in("f32[N,7]")}, {}, 3),
            (Strings{"u8[N,7]", "f32[]", "u8[]"}));
  // Conv's and MatMul's own checks apply, named as such.
  std::string E =
      inferError(OpKind::ConvInteger, {in("u8[1,4,8,8]"), in("u8[16,3,3,3]")});
  EXPECT_TRUE(has(E, "as Conv") && has(E, "channels")) << E;
  E = inferError(OpKind::MatMulInteger, {in("u8[2,4]"), in("u8[3,2]")});
  EXPECT_TRUE(has(E, "inner dimensions")) << E;
  EXPECT_TRUE(has(
      inferError(OpKind::ConvInteger, {in("f32[1,3,8,8]"), in("u8[16,3,3,3]")}),
      "u8 or i8"));
  EXPECT_TRUE(has(inferError(OpKind::MatMulInteger,
                             {in("u8[2,4]"), in("u8[4,2]"), in("i8[]")}),
                  "same dtype"));
  EXPECT_TRUE(has(inferError(OpKind::QLinearConv,
                             {in("u8[1,3,8,8]"), in("f32[]"), in("u8[]"),
                              in("u8[16,3,3,3]"), in("f32[]"), in("u8[]"),
                              in("f32[]"), in("u8[]"), in("f32[16]")}),
                  "i32"));
  EXPECT_TRUE(has(
      inferError(OpKind::DynamicQuantizeLinear, {in("f16[3]")}, {}, 3), "f32"));
}

TEST_F(InferSamplingRecurrentSignal, RuntimeInferenceIsExact) {
  // The reference backend infers with every value known.
  EXPECT_EQ(inferConcrete(
                OpKind::Resize,
                {zeros(Shape{1, 1, 4, 4}), nng::rt::Tensor(),
                 nng::rt::Tensor::fromVector<float>({1, 1, 0.5f, 3}, Shape{4})}),
            (Strings{"f32[1,1,2,12]"}));
  EXPECT_EQ(
      inferConcrete(OpKind::HannWindow, {nng::rt::Tensor::scalar<int64_t>(5)}),
      (Strings{"f32[5]"}));
}

} // namespace
