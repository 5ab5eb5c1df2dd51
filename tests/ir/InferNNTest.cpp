//===- InferNNTest.cpp - Inference tests for NN ops ----------------------===//
//
// MatMul (1-D promotion, batch broadcasting), Gemm, Conv and ConvTranspose
// (strides, dilations, pads, auto_pad, groups, output_padding,
// output_shape), pools (ceil_mode, dilations, auto_pad), global pools,
// normalizations, Dropout and quantization, with the error messages.
//
//===----------------------------------------------------------------------===//

#include "IrTestUtils.h"

using namespace nng;
using namespace nng::ir;
using namespace nng::ir::test;

namespace {

class InferNN : public IrTest {
protected:
  bool has(const std::string &S, std::string_view Part) {
    return S.find(Part) != std::string::npos;
  }
};

TEST_F(InferNN, MatMulShapes) {
  EXPECT_EQ(infer(OpKind::MatMul, {in("f32[2,3]"), in("f32[3,4]")}),
            "f32[2,4]");
  EXPECT_EQ(infer(OpKind::MatMul, {in("f32[N,T,C]"), in("f32[C,64]")}),
            "f32[N,T,64]");
  EXPECT_EQ(infer(OpKind::MatMul, {in("f32[3]"), in("f32[3]")}), "f32[]");
  EXPECT_EQ(infer(OpKind::MatMul, {in("f32[3]"), in("f32[3,4]")}), "f32[4]");
  EXPECT_EQ(infer(OpKind::MatMul, {in("f32[2,3]"), in("f32[3]")}), "f32[2]");
  EXPECT_EQ(infer(OpKind::MatMul, {in("f32[2,1,3,4]"), in("f32[5,4,6]")}),
            "f32[2,5,3,6]");
  EXPECT_EQ(infer(OpKind::MatMul, {in("f32[B,3,4]"), in("f32[4]")}),
            "f32[B,3]");
  EXPECT_EQ(infer(OpKind::MatMul, {in("f32[0,3]"), in("f32[3,2]")}),
            "f32[0,2]");
  EXPECT_EQ(infer(OpKind::MatMul, {in("f32[*]"), in("f32[3,2]")}), "f32[*]");
}

TEST_F(InferNN, MatMulInnerMismatchNamesBothShapes) {
  std::string E = inferError(OpKind::MatMul, {in("f32[2,3]"), in("f32[4,5]")});
  EXPECT_TRUE(has(E, "f32[2,3]") && has(E, "f32[4,5]")) << E;
  EXPECT_TRUE(has(E, "inner dimensions")) << E;
  E = inferError(OpKind::MatMul, {in("f32[2,3]"), in("f32[]")});
  EXPECT_TRUE(has(E, "rank >= 1")) << E;
  E = inferError(OpKind::MatMul, {in("f32[2,3]"), in("i32[3,4]")});
  EXPECT_TRUE(has(E, "i32[3,4]")) << E;
  E = inferError(OpKind::MatMul, {in("f32[2,2,3]"), in("f32[3,3,4]")});
  EXPECT_TRUE(has(E, "batch")) << E;
}

TEST_F(InferNN, Gemm) {
  EXPECT_EQ(infer(OpKind::Gemm, {in("f32[4,3]"), in("f32[3,5]")}), "f32[4,5]");
  EXPECT_EQ(infer(OpKind::Gemm, {in("f32[3,N]"), in("f32[3,5]")},
                  attrs({{"transA", 1}})),
            "f32[N,5]");
  EXPECT_EQ(infer(OpKind::Gemm,
                  {in("f32[N,3]"), in("f32[10,3]"), in("f32[10]")},
                  attrs({{"transB", 1}})),
            "f32[N,10]");
  EXPECT_EQ(
      infer(OpKind::Gemm, {in("f32[4,3]"), in("f32[3,5]"), in("f32[4,1]")}),
      "f32[4,5]");
  std::string E =
      inferError(OpKind::Gemm, {in("f32[4,3]"), in("f32[3,5]"), in("f32[3]")});
  EXPECT_TRUE(has(E, "must broadcast to [M, N] = [4, 5]")) << E;
  E = inferError(OpKind::Gemm, {in("f32[4,3]"), in("f32[4,5]")});
  EXPECT_TRUE(has(E, "f32[4,3]") && has(E, "f32[4,5]")) << E;
  E = inferError(OpKind::Gemm, {in("f32[2,4,3]"), in("f32[3,5]")});
  EXPECT_TRUE(has(E, "rank 2")) << E;
}

TEST_F(InferNN, ConvBasic) {
  Value *X = in("f32[N,3,224,224]"), *W = in("f32[64,3,7,7]");
  EXPECT_EQ(infer(OpKind::Conv, {X, W},
                  attrs({{"strides", Ints{2, 2}}, {"pads", Ints{3, 3, 3, 3}}})),
            "f32[N,64,112,112]");
  EXPECT_EQ(infer(OpKind::Conv, {in("f32[1,1,10,10]"), in("f32[1,1,3,3]")},
                  attrs({{"dilations", Ints{2, 2}}})),
            "f32[1,1,6,6]");
  EXPECT_EQ(
      infer(OpKind::Conv, {in("f32[N,4,L]"), in("f32[8,4,3]"), in("f32[8]")}),
      "f32[N,8,?]");
  EXPECT_EQ(infer(OpKind::Conv, {in("f32[2,3,5,7,9]"), in("f32[4,3,3,3,3]")},
                  attrs({{"pads", Ints{1, 1, 1, 1, 1, 1}}})),
            "f32[2,4,5,7,9]");
  EXPECT_EQ(infer(OpKind::Conv, {in("f32[*]"), in("f32[8,3,3,3]")}),
            "f32[?,8,?,?]");
  EXPECT_EQ(infer(OpKind::Conv, {in("f32[0,3,5,5]"), in("f32[8,3,3,3]")}),
            "f32[0,8,3,3]");
}

TEST_F(InferNN, ConvAutoPad) {
  auto Run = [&](const char *Pad, Ints Strides) {
    return infer(OpKind::Conv, {in("f32[1,1,7,8]"), in("f32[2,1,3,3]")},
                 attrs({{"auto_pad", Pad}, {"strides", Strides}}));
  };
  EXPECT_EQ(Run("SAME_UPPER", {2, 2}), "f32[1,2,4,4]");
  EXPECT_EQ(Run("SAME_LOWER", {2, 3}), "f32[1,2,4,3]");
  EXPECT_EQ(Run("VALID", {2, 2}), "f32[1,2,3,3]");
  EXPECT_EQ(Run("NOTSET", {1, 1}), "f32[1,2,5,6]");
}

TEST_F(InferNN, ConvGroupsAndErrors) {
  EXPECT_EQ(infer(OpKind::Conv, {in("f32[1,8,5,5]"), in("f32[16,4,3,3]")},
                  attrs({{"group", 2}})),
            "f32[1,16,3,3]");
  EXPECT_EQ(infer(OpKind::Conv, {in("f32[1,8,5,5]"), in("f32[8,1,3,3]")},
                  attrs({{"group", 8}})),
            "f32[1,8,3,3]");
  std::string E =
      inferError(OpKind::Conv, {in("f32[1,8,5,5]"), in("f32[16,3,3,3]")},
                 attrs({{"group", 2}}));
  EXPECT_TRUE(has(E, "8 channels") && has(E, "f32[16,3,3,3]")) << E;
  E = inferError(OpKind::Conv,
                 {in("f32[1,3,5,5]"), in("f32[8,3,3,3]"), in("f32[5]")});
  EXPECT_TRUE(has(E, "bias") && has(E, "f32[5]")) << E;
  E = inferError(OpKind::Conv, {in("f32[1,1,2,2]"), in("f32[1,1,3,3]")});
  EXPECT_TRUE(has(E, "kernel spans 3")) << E;
  E = inferError(OpKind::Conv, {in("f32[1,1,5,5]"), in("f32[1,1,3,3]")},
                 attrs({{"pads", Ints{1, 1}}}));
  EXPECT_TRUE(has(E, "pads") && has(E, "expected 4")) << E;
  E = inferError(OpKind::Conv, {in("f32[1,1,5,5]"), in("f32[1,1,3,3]")},
                 attrs({{"auto_pad", "SAME"}}));
  EXPECT_TRUE(has(E, "auto_pad is 'SAME'")) << E;
  E = inferError(OpKind::Conv, {in("f32[1,1,5,5]"), in("f32[1,1,3]")});
  EXPECT_TRUE(has(E, "same rank")) << E;
  E = inferError(OpKind::Conv, {in("f32[1,1,5,5]"), in("f32[1,1,3,3]")},
                 attrs({{"kernel_shape", Ints{2, 2}}}));
  EXPECT_TRUE(has(E, "kernel_shape")) << E;
  E = inferError(OpKind::Conv, {in("f32[1,1,5,5]"), in("f32[1,1,3,3]")},
                 attrs({{"strides", Ints{0, 1}}}));
  EXPECT_TRUE(has(E, "strides")) << E;
}

TEST_F(InferNN, ConvTranspose) {
  Value *X = in("f32[1,1,3,3]"), *W = in("f32[1,2,3,3]");
  EXPECT_EQ(infer(OpKind::ConvTranspose, {X, W}), "f32[1,2,5,5]");
  EXPECT_EQ(infer(OpKind::ConvTranspose, {X, W},
                  attrs({{"strides", Ints{3, 2}}, {"pads", Ints{1, 2, 1, 2}}})),
            "f32[1,2,7,3]");
  EXPECT_EQ(
      infer(OpKind::ConvTranspose, {X, W},
            attrs({{"strides", Ints{3, 2}}, {"output_padding", Ints{1, 1}}})),
      "f32[1,2,10,8]");
  EXPECT_EQ(
      infer(OpKind::ConvTranspose, {X, W},
            attrs({{"strides", Ints{3, 2}}, {"output_shape", Ints{10, 8}}})),
      "f32[1,2,10,8]");
  EXPECT_EQ(infer(OpKind::ConvTranspose, {X, W},
                  attrs({{"output_shape", Ints{1, 2, 9, 9}}})),
            "f32[1,2,9,9]");
  EXPECT_EQ(infer(OpKind::ConvTranspose, {X, W},
                  attrs({{"strides", Ints{2, 2}}, {"auto_pad", "SAME_UPPER"}})),
            "f32[1,2,6,6]");
  EXPECT_EQ(
      infer(OpKind::ConvTranspose, {X, W}, attrs({{"dilations", Ints{2, 2}}})),
      "f32[1,2,7,7]");
  EXPECT_EQ(infer(OpKind::ConvTranspose,
                  {in("f32[N,4,5,5]"), in("f32[4,3,3,3]"), in("f32[6]")},
                  attrs({{"group", 2}})),
            "f32[N,6,7,7]");
  std::string E = inferError(OpKind::ConvTranspose,
                             {in("f32[1,3,3,3]"), in("f32[4,2,3,3]")});
  EXPECT_TRUE(has(E, "f32[1,3,3,3]") && has(E, "f32[4,2,3,3]")) << E;
  E = inferError(OpKind::ConvTranspose, {X, W},
                 attrs({{"output_shape", Ints{10}}}));
  EXPECT_TRUE(has(E, "output_shape")) << E;
}

TEST_F(InferNN, MaxPool) {
  EXPECT_EQ(
      inferAll(OpKind::MaxPool, {in("f32[N,3,32,32]")},
               attrs({{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}),
               2),
      (std::vector<std::string>{"f32[N,3,16,16]", "i64[N,3,16,16]"}));
  EXPECT_EQ(infer(OpKind::MaxPool, {in("f32[1,1,4,4]")},
                  attrs({{"kernel_shape", Ints{3, 3}},
                         {"strides", Ints{2, 2}},
                         {"ceil_mode", 1}})),
            "f32[1,1,2,2]");
  EXPECT_EQ(
      infer(OpKind::MaxPool, {in("f32[1,1,4,4]")},
            attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}})),
      "f32[1,1,1,1]");
  // ceil_mode never starts a window inside the end padding (PyTorch rule).
  EXPECT_EQ(infer(OpKind::MaxPool, {in("f32[1,1,4,4]")},
                  attrs({{"kernel_shape", Ints{2, 2}},
                         {"strides", Ints{3, 3}},
                         {"pads", Ints{1, 1, 1, 1}},
                         {"ceil_mode", 1}})),
            "f32[1,1,2,2]");
  EXPECT_EQ(
      infer(OpKind::MaxPool, {in("f32[1,1,10,10]")},
            attrs({{"kernel_shape", Ints{3, 3}}, {"dilations", Ints{2, 2}}})),
      "f32[1,1,6,6]");
  EXPECT_EQ(infer(OpKind::MaxPool, {in("f32[N,C,H,W]")},
                  attrs({{"kernel_shape", Ints{2, 2}}})),
            "f32[N,C,?,?]");
  EXPECT_EQ(infer(OpKind::MaxPool, {in("f32[1,2,9]")},
                  attrs({{"kernel_shape", Ints{3}},
                         {"strides", Ints{3}},
                         {"auto_pad", "VALID"}})),
            "f32[1,2,3]");
}

TEST_F(InferNN, AveragePoolAndLpPool) {
  EXPECT_EQ(infer(OpKind::AveragePool, {in("f32[1,3,7,7]")},
                  attrs({{"kernel_shape", Ints{3, 3}},
                         {"strides", Ints{2, 2}},
                         {"auto_pad", "SAME_UPPER"}})),
            "f32[1,3,4,4]");
  EXPECT_EQ(
      infer(OpKind::AveragePool, {in("f32[1,3,7,7]")},
            attrs({{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}})),
      "f32[1,3,7,7]");
  EXPECT_EQ(infer(OpKind::AveragePool, {in("f32[1,1,5,5]")},
                  attrs({{"kernel_shape", Ints{2, 2}},
                         {"strides", Ints{2, 2}},
                         {"ceil_mode", 1}})),
            "f32[1,1,3,3]");
  EXPECT_EQ(infer(OpKind::LpPool, {in("f32[N,3,8,8]")},
                  attrs({{"kernel_shape", Ints{2, 2}}})),
            "f32[N,3,7,7]");
}

TEST_F(InferNN, PoolErrors) {
  std::string E = inferError(OpKind::MaxPool, {in("f32[1,3,8,8]")});
  EXPECT_TRUE(has(E, "kernel_shape")) << E;
  E = inferError(OpKind::MaxPool, {in("f32[1,3,8,8]")},
                 attrs({{"kernel_shape", Ints{2}}}));
  EXPECT_TRUE(has(E, "expected 2")) << E;
  E = inferError(OpKind::MaxPool, {in("f32[8,8]")},
                 attrs({{"kernel_shape", Ints{2}}}));
  EXPECT_TRUE(has(E, "rank >= 3")) << E;
  E = inferError(OpKind::AveragePool, {in("f32[1,1,2,2]")},
                 attrs({{"kernel_shape", Ints{3, 3}}}));
  EXPECT_TRUE(has(E, "kernel spans 3")) << E;
}

TEST_F(InferNN, GlobalPool) {
  EXPECT_EQ(infer(OpKind::GlobalAveragePool, {in("f32[N,512,7,7]")}),
            "f32[N,512,1,1]");
  EXPECT_EQ(infer(OpKind::GlobalMaxPool, {in("f32[2,3,L]")}), "f32[2,3,1]");
  EXPECT_EQ(infer(OpKind::GlobalMaxPool, {in("f32[*]")}), "f32[*]");
  EXPECT_TRUE(
      has(inferError(OpKind::GlobalAveragePool, {in("f32[3]")}), "rank >= 2"));
}

TEST_F(InferNN, BatchNorm) {
  Value *X = in("f32[N,3,8,8]");
  std::vector<Value *> P{in("f32[3]"), in("f32[3]"), in("f32[3]"),
                         in("f32[3]")};
  std::vector<Value *> Ins{X};
  Ins.insert(Ins.end(), P.begin(), P.end());
  EXPECT_EQ(infer(OpKind::BatchNormalization, Ins), "f32[N,3,8,8]");
  EXPECT_EQ(inferAll(OpKind::BatchNormalization, Ins,
                     attrs({{"training_mode", 1}}), 3),
            (std::vector<std::string>{"f32[N,3,8,8]", "f32[3]", "f32[3]"}));
  EXPECT_EQ(infer(OpKind::BatchNormalization,
                  {in("f32[N,C]"), in("f32[4]"), in("f32[4]"), in("f32[4]"),
                   in("f32[4]")}),
            "f32[N,C]");
  std::string E = inferError(OpKind::BatchNormalization,
                             {X, P[0], in("f32[4]"), P[2], P[3]});
  EXPECT_TRUE(has(E, "f32[4]") && has(E, "3 channels")) << E;
  E = inferError(OpKind::BatchNormalization,
                 {X, P[0], P[1], P[2], in("f32[3,1]")});
  EXPECT_TRUE(has(E, "rank 1")) << E;
}

TEST_F(InferNN, LayerNorm) {
  Value *X = in("f32[N,T,64]"), *S = in("f32[64]"), *B = in("f32[64]");
  EXPECT_EQ(
      inferAll(OpKind::LayerNormalization, {X, S, B}, {}, 3),
      (std::vector<std::string>{"f32[N,T,64]", "f32[N,T,1]", "f32[N,T,1]"}));
  EXPECT_EQ(inferAll(OpKind::LayerNormalization, {X, in("f32[T,64]")},
                     attrs({{"axis", 1}}), 2),
            (std::vector<std::string>{"f32[N,T,64]", "f32[N,1,1]"}));
  std::string E = inferError(OpKind::LayerNormalization, {X, in("f32[32]")});
  EXPECT_TRUE(has(E, "f32[32]") && has(E, "normalized axes")) << E;
  E = inferError(OpKind::LayerNormalization, {X, S}, attrs({{"axis", 3}}));
  EXPECT_TRUE(has(E, "axis 3 is out of range for rank 3")) << E;
  E = inferError(OpKind::LayerNormalization, {X, S},
                 attrs({{"stash_type", 7}}));
  EXPECT_TRUE(has(E, "stash_type")) << E;
}

TEST_F(InferNN, InstanceNorm) {
  EXPECT_EQ(infer(OpKind::InstanceNormalization,
                  {in("f32[N,3,H,W]"), in("f32[3]"), in("f32[3]")}),
            "f32[N,3,H,W]");
}

TEST_F(InferNN, Dropout) {
  EXPECT_EQ(inferAll(OpKind::Dropout, {in("f32[N,10]")}, {}, 2),
            (std::vector<std::string>{"f32[N,10]", "bool[N,10]"}));
  EXPECT_EQ(
      infer(OpKind::Dropout, {in("f32[N,10]"), scalar(0.5f), in("bool[]")}),
      "f32[N,10]");
  std::string E = inferError(OpKind::Dropout, {in("f32[N,10]"), scalar(1.5f)});
  EXPECT_TRUE(has(E, "ratio 1.5")) << E;
  E = inferError(OpKind::Dropout, {in("f32[4]"), nullptr, in("f32[]")});
  EXPECT_TRUE(has(E, "training_mode")) << E;
}

TEST_F(InferNN, Quantize) {
  EXPECT_EQ(
      infer(OpKind::QuantizeLinear, {in("f32[N,3]"), in("f32[]"), in("u8[]")}),
      "u8[N,3]");
  EXPECT_EQ(
      infer(OpKind::QuantizeLinear, {in("f32[N,3]"), in("f32[]"), in("i8[]")}),
      "i8[N,3]");
  EXPECT_EQ(infer(OpKind::QuantizeLinear, {in("f32[2]"), in("f32[]")}),
            "u8[2]");
  EXPECT_EQ(infer(OpKind::QuantizeLinear,
                  {in("f32[8,3,3,3]"), in("f32[8]"), in("i8[8]")},
                  attrs({{"axis", 0}})),
            "i8[8,3,3,3]");
  std::string E = inferError(OpKind::QuantizeLinear,
                             {in("f32[N,3]"), in("f32[4]"), in("u8[4]")});
  EXPECT_TRUE(has(E, "per-axis scale f32[4]") && has(E, "f32[N,3]")) << E;
  E = inferError(OpKind::QuantizeLinear,
                 {in("f32[N,3]"), in("f32[]"), in("i32[]")});
  EXPECT_TRUE(has(E, "u8 or i8")) << E;
  E = inferError(OpKind::QuantizeLinear,
                 {in("f32[N,3]"), in("f32[3]"), in("u8[]")});
  EXPECT_TRUE(has(E, "zero point")) << E;
}

TEST_F(InferNN, Dequantize) {
  EXPECT_EQ(
      infer(OpKind::DequantizeLinear, {in("u8[N,3]"), in("f32[]"), in("u8[]")}),
      "f32[N,3]");
  EXPECT_EQ(infer(OpKind::DequantizeLinear, {in("i32[5]"), in("f32[]")}),
            "f32[5]");
  std::string E =
      inferError(OpKind::DequantizeLinear, {in("f32[3]"), in("f32[]")});
  EXPECT_TRUE(has(E, "u8, i8 or i32")) << E;
  E = inferError(OpKind::DequantizeLinear,
                 {in("u8[3]"), in("f32[]"), in("i8[]")});
  EXPECT_TRUE(has(E, "i8[]") && has(E, "u8[3]")) << E;
}

TEST_F(InferNN, RunTimeConv) {
  auto R = inferConcrete(OpKind::Conv,
                         {zeros({2, 3, 9, 9}), zeros({4, 3, 3, 3}), zeros({4})},
                         attrs({{"strides", Ints{2, 2}}}));
  EXPECT_EQ(R.at(0), "f32[2,4,4,4]");
}

} // namespace
