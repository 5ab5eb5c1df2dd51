//===- UnaryKernelsTest.cpp - Reference kernels: unary elementwise ops ---===//
//
// Hand-checked values (closed forms, and the examples of the ONNX operator
// spec) for the unary math ops and activations, in several dtypes, with
// scalars, zero-size and non-contiguous inputs.
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"

#include <limits>

using namespace nng;
using namespace nng::reftest;

namespace {

constexpr double Pi = 3.14159265358979323846;
constexpr double E = 2.71828182845904523536;
const float Inf = std::numeric_limits<float>::infinity();
const float NaN = std::numeric_limits<float>::quiet_NaN();

/// Runs a unary op on X with optional attributes.
Tensor unary(OpKind K, Tensor X) { return OpTest(K).in(std::move(X)).run1(); }

TEST(RefUnary, Abs) {
  EXPECT_TENSOR(unary(OpKind::Abs, f32({-1.5f, 0, 2})), f32({1.5f, 0, 2}));
  // Integers: exact, and the most negative value wraps (two's complement).
  EXPECT_TENSOR(unary(OpKind::Abs, i32({-3, 4, INT32_MIN})),
                i32({3, 4, INT32_MIN}));
  EXPECT_TENSOR(unary(OpKind::Abs, u8({0, 200})), u8({0, 200}));
}

TEST(RefUnary, Neg) {
  EXPECT_TENSOR(unary(OpKind::Neg, f32({1, -2, 0}, {3})), f32({-1, 2, 0}));
  EXPECT_TENSOR(unary(OpKind::Neg, i64({5, -7, INT64_MAX})),
                i64({-5, 7, -INT64_MAX}));
  // A transposed (non-contiguous) input.
  Tensor X = iota(Shape{2, 3}).permute({1, 0});
  EXPECT_TENSOR(unary(OpKind::Neg, X), f32({0, -3, -1, -4, -2, -5}, {3, 2}));
}

TEST(RefUnary, ExpLogSqrtReciprocal) {
  EXPECT_TENSOR(unary(OpKind::Exp, f32({0, 1, -1})),
                f32({1, float(E), float(1 / E)}));
  EXPECT_TENSOR(unary(OpKind::Log, f32({1, float(E), 0, -1})),
                f32({0, 1, -Inf, NaN}));
  EXPECT_TENSOR(unary(OpKind::Sqrt, f32({4, 0, 2.25f, -1})),
                f32({2, 0, 1.5f, NaN}));
  EXPECT_TENSOR(unary(OpKind::Reciprocal, f32({2, -4, 0})),
                f32({0.5f, -0.25f, Inf}));
  // Scalars and f64.
  EXPECT_TENSOR(unary(OpKind::Sqrt, f64({9}, {})), f64({3}, {}));
  // Zero-size.
  EXPECT_TENSOR(unary(OpKind::Exp, Tensor::empty(Shape{0, 3}, DType::F32)),
                Tensor::empty(Shape{0, 3}, DType::F32));
}

TEST(RefUnary, HalfAndBFloat16) {
  Tensor H = f32({0, 1, -2}).to(DType::F16);
  // e rounds to 2.71875 in f16; exp(-2) = 0.13534 -> 0.1353.
  EXPECT_TENSOR_TOL(unary(OpKind::Exp, H),
                    f32({1, 2.71875f, 0.13534f}).to(DType::F16), 1e-3);
  Tensor B = f32({-1.5f, 2.5f}).to(DType::BF16);
  EXPECT_TENSOR(unary(OpKind::Relu, B), f32({0, 2.5f}).to(DType::BF16));
}

TEST(RefUnary, FloorCeilRound) {
  EXPECT_TENSOR(unary(OpKind::Floor, f32({-1.5f, 1.2f, 2, -0.0f})),
                f32({-2, 1, 2, 0}));
  EXPECT_TENSOR(unary(OpKind::Ceil, f32({-1.5f, 1.2f, 2})), f32({-1, 2, 2}));
  // The ONNX spec example: round half to even.
  EXPECT_TENSOR(unary(OpKind::Round,
                      f32({0.1f, 0.5f, 0.9f, 1.2f, 1.5f, 1.8f, 2.3f, 2.5f, 2.7f,
                           -1.1f, -1.5f, -1.9f, -2.2f, -2.5f, -2.8f})),
                f32({0, 0, 1, 1, 2, 2, 2, 2, 3, -1, -2, -2, -2, -2, -3}));
}

TEST(RefUnary, Sign) {
  EXPECT_TENSOR(unary(OpKind::Sign, f32({-2, 0, 3.5f, NaN})),
                f32({-1, 0, 1, NaN}));
  EXPECT_TENSOR(unary(OpKind::Sign, i32({-5, 0, 7})), i32({-1, 0, 1}));
  EXPECT_TENSOR(unary(OpKind::Sign, u8({0, 3})), u8({0, 1}));
}

TEST(RefUnary, Trigonometric) {
  EXPECT_TENSOR(unary(OpKind::Sin, f64({0, Pi / 2, Pi / 6})), f64({0, 1, 0.5}));
  EXPECT_TENSOR(unary(OpKind::Cos, f64({0, Pi / 3, Pi})), f64({1, 0.5, -1}));
  EXPECT_TENSOR(unary(OpKind::Tan, f64({0, Pi / 4})), f64({0, 1}));
  EXPECT_TENSOR(unary(OpKind::Asin, f64({0, 1, 0.5})),
                f64({0, Pi / 2, Pi / 6}));
  EXPECT_TENSOR(unary(OpKind::Acos, f64({1, 0, 0.5})),
                f64({0, Pi / 2, Pi / 3}));
  EXPECT_TENSOR(unary(OpKind::Atan, f64({0, 1, -1})),
                f64({0, Pi / 4, -Pi / 4}));
  EXPECT_TENSOR(unary(OpKind::Asin, f32({2})), f32({NaN}));
}

TEST(RefUnary, Hyperbolic) {
  // sinh(1) = (e - 1/e) / 2, cosh(1) = (e + 1/e) / 2.
  double S1 = (E - 1 / E) / 2, C1 = (E + 1 / E) / 2;
  EXPECT_TENSOR(unary(OpKind::Sinh, f64({0, 1, -1})), f64({0, S1, -S1}));
  EXPECT_TENSOR(unary(OpKind::Cosh, f64({0, 1})), f64({1, C1}));
  EXPECT_TENSOR(unary(OpKind::Tanh, f64({0, 1})), f64({0, S1 / C1}));
  EXPECT_TENSOR(unary(OpKind::Asinh, f64({0, S1})), f64({0, 1}));
  EXPECT_TENSOR(unary(OpKind::Acosh, f64({1, C1, 0.5})), f64({0, 1, NaN}));
  // atanh(0.5) = ln(3) / 2.
  EXPECT_TENSOR(unary(OpKind::Atanh, f64({0, 0.5, 1})),
                f64({0, std::log(3.0) / 2, Inf}));
}

TEST(RefUnary, ErfSigmoid) {
  EXPECT_TENSOR(unary(OpKind::Erf, f32({0, 1, -1})),
                f32({0, 0.8427007929497149f, -0.8427007929497149f}));
  // sigmoid(1) = e / (1 + e).
  EXPECT_TENSOR(unary(OpKind::Sigmoid, f64({0, 1, -1, -1000})),
                f64({0.5, E / (1 + E), 1 / (1 + E), 0}));
}

TEST(RefUnary, Relu) {
  EXPECT_TENSOR(unary(OpKind::Relu, f32({-1, 0, 2, NaN})), f32({0, 0, 2, NaN}));
  EXPECT_TENSOR(unary(OpKind::Relu, i8({-5, 3, -128})), i8({0, 3, 0}));
}

TEST(RefUnary, LeakyReluEluSeluCelu) {
  // ONNX example: alpha 0.1.
  EXPECT_TENSOR(
      OpTest(OpKind::LeakyRelu).in(f32({-1, 0, 1})).attr("alpha", 0.1f).run1(),
      f32({-0.1f, 0, 1}));
  EXPECT_TENSOR(unary(OpKind::LeakyRelu, f32({-2})), f32({-0.02f}));
  // Elu alpha 2: 2 * (e^-1 - 1).
  EXPECT_TENSOR(
      OpTest(OpKind::Elu).in(f64({-1, 0, 1})).attr("alpha", 2.0f).run1(),
      f64({2 * (1 / E - 1), 0, 1}));
  // ONNX example: Selu alpha 2, gamma 3.
  EXPECT_TENSOR(OpTest(OpKind::Selu)
                    .in(f64({-1, 0, 1}))
                    .attr("alpha", 2.0f)
                    .attr("gamma", 3.0f)
                    .run1(),
                f64({3 * (2 / E - 2), 0, 3}));
  // Default Selu constants.
  EXPECT_TENSOR(unary(OpKind::Selu, f64({1, -1})),
                f64({1.0507010221481323, -1.1113307412864784}));
  // Celu alpha 2: min(0, 2 * (e^(-1/2) - 1)).
  EXPECT_TENSOR(
      OpTest(OpKind::Celu).in(f64({-1, 3})).attr("alpha", 2.0f).run1(),
      f64({2 * (std::exp(-0.5) - 1), 3}));
}

TEST(RefUnary, ThresholdedReluSoftplusSoftsign) {
  // ONNX example: alpha 2.
  EXPECT_TENSOR(OpTest(OpKind::ThresholdedRelu)
                    .in(f32({-1, 0, 1, 2, 2.2f}))
                    .attr("alpha", 2.0f)
                    .run1(),
                f32({0, 0, 0, 0, 2.2f}));
  EXPECT_TENSOR(unary(OpKind::ThresholdedRelu, f32({1, 1.5f})), f32({0, 1.5f}));
  // softplus(0) = ln 2, softplus(1) = 1 + ln(1 + 1/e); large x stays x.
  EXPECT_TENSOR(
      unary(OpKind::Softplus, f64({-1, 0, 1, 1000})),
      f64({std::log(1 + 1 / E), std::log(2.0), 1 + std::log(1 + 1 / E), 1000}));
  EXPECT_TENSOR(unary(OpKind::Softsign, f32({-1, 0, 1, 3})),
                f32({-0.5f, 0, 0.5f, 0.75f}));
}

TEST(RefUnary, HardSigmoidHardSwish) {
  // ONNX example: alpha 0.5, beta 0.6.
  EXPECT_TENSOR(OpTest(OpKind::HardSigmoid)
                    .in(f32({-1, 0, 1}))
                    .attr("alpha", 0.5f)
                    .attr("beta", 0.6f)
                    .run1(),
                f32({0.1f, 0.6f, 1}));
  EXPECT_TENSOR(unary(OpKind::HardSigmoid, f32({-3, 0, 3})), f32({0, 0.5f, 1}));
  // x * clamp(x/6 + 1/2, 0, 1).
  EXPECT_TENSOR(unary(OpKind::HardSwish, f64({-4, -1, 0, 1, 4})),
                f64({0, -1.0 / 3, 0, 2.0 / 3, 4}));
}

TEST(RefUnary, Shrink) {
  // ONNX examples.
  EXPECT_TENSOR(OpTest(OpKind::Shrink)
                    .in(f32({-2, -1, 0, 1, 2}))
                    .attr("lambd", 1.5f)
                    .run1(),
                f32({-2, 0, 0, 0, 2}));
  EXPECT_TENSOR(OpTest(OpKind::Shrink)
                    .in(f32({-2, -1, 0, 1, 2}))
                    .attr("lambd", 1.5f)
                    .attr("bias", 1.5f)
                    .run1(),
                f32({-0.5f, 0, 0, 0, 0.5f}));
  EXPECT_TENSOR(OpTest(OpKind::Shrink)
                    .in(i32({-3, 0, 3}))
                    .attr("lambd", 1.0f)
                    .attr("bias", 1.0f)
                    .run1(),
                i32({-2, 0, 2}));
}

TEST(RefUnary, NotIsNaNIsInf) {
  EXPECT_TENSOR(unary(OpKind::Not, boolean({1, 0, 1}, {3})),
                boolean({0, 1, 0}));
  EXPECT_TENSOR(unary(OpKind::IsNaN, f32({NaN, 1, Inf})), boolean({1, 0, 0}));
  Tensor X = f32({-Inf, 1, Inf, NaN});
  EXPECT_TENSOR(unary(OpKind::IsInf, X), boolean({1, 0, 1, 0}));
  EXPECT_TENSOR(OpTest(OpKind::IsInf).in(X).attr("detect_negative", 0).run1(),
                boolean({0, 0, 1, 0}));
  EXPECT_TENSOR(OpTest(OpKind::IsInf).in(X).attr("detect_positive", 0).run1(),
                boolean({1, 0, 0, 0}));
}

TEST(RefUnary, IdentityCopies) {
  Tensor X = i64({1, 2, 3}, {3, 1});
  Tensor Y = unary(OpKind::Identity, X);
  EXPECT_TENSOR(Y, i64({1, 2, 3}, {3, 1}));
  EXPECT_NE(Y.storage(), X.storage()); // Outputs never alias inputs.
}

TEST(RefUnary, Clip) {
  Tensor X = f32({-2, 0, 2});
  Tensor Lo = f32({-1}, {}), Hi = f32({1}, {});
  EXPECT_TENSOR(OpTest(OpKind::Clip).in(X).in(Lo).in(Hi).run1(),
                f32({-1, 0, 1}));
  EXPECT_TENSOR(OpTest(OpKind::Clip).in(X).in(Lo).none().run1(),
                f32({-1, 0, 2}));
  EXPECT_TENSOR(OpTest(OpKind::Clip).in(X).none().in(Hi).run1(),
                f32({-2, 0, 1}));
  EXPECT_TENSOR(OpTest(OpKind::Clip).in(X).run1(), X);
  // min > max: every value becomes max.
  EXPECT_TENSOR(OpTest(OpKind::Clip).in(X).in(Hi).in(Lo).run1(),
                f32({-1, -1, -1}));
  EXPECT_TENSOR(OpTest(OpKind::Clip)
                    .in(i32({-9, 5, 9}))
                    .in(i32({0}, {}))
                    .in(i32({6}, {}))
                    .run1(),
                i32({0, 5, 6}));
}

TEST(RefUnary, Gelu) {
  // 0.5 x (1 + erf(x / sqrt 2)).
  EXPECT_TENSOR(
      unary(OpKind::Gelu, f64({0, 1, -1, 2})),
      f64({0, 0.8413447460685429, -0.15865525393145707, 1.9544997361036416}));
  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
  EXPECT_TENSOR(
      OpTest(OpKind::Gelu)
          .in(f64({0, 1, -1, 2}))
          .attr("approximate", "tanh")
          .run1(),
      f64({0, 0.8411919906082768, -0.15880800939172324, 1.954597694087775}));
}

} // namespace
