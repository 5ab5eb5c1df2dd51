//===- GradcheckTest.cpp - Every derivative against finite differences ----===//
//
// One gradcheck (f64, central differences) per differentiable op of the
// op table and per nng::F function, as a table of cases run as
// parameterized tests. A coverage test fails when an op gets a registered
// backward formula without a case here. Also checks that gradcheck itself
// catches a wrong derivative and names the input and element.
//
//===----------------------------------------------------------------------===//

#include "EagerTestUtils.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/Gradcheck.h"
#include "nngraph/frontend/TensorOps.h"

#include <gtest/gtest.h>

#include <set>

using namespace nng;
using nng::test::awayFromZero;
using nng::test::uniformInput;
using ir::OpKind;

namespace {

struct Case {
  std::string Name;
  /// The ops of the op table whose backward the case exercises.
  std::vector<OpKind> Ops;
  std::function<std::vector<Tensor>()> Inputs;
  autograd::GradcheckFn Fn;
  /// Step and tolerance (casts through f32 need a larger step).
  double Eps = 1e-6, Atol = 1e-5;
};

using V = std::vector<Tensor>;
using S = std::vector<int64_t>;

Tensor idx(std::initializer_list<double> Values, S Sizes = {}) {
  if (Sizes.empty())
    Sizes = {static_cast<int64_t>(Values.size())};
  return tensor(std::vector<double>(Values), Sizes, DType::I64);
}

std::vector<Case> allCases() {
  std::vector<Case> C;
  auto Add = [&](std::string Name, std::vector<OpKind> Ops,
                 std::function<V()> In, autograd::GradcheckFn Fn) {
    C.push_back({std::move(Name), std::move(Ops), std::move(In), std::move(Fn)});
  };
  // --- Elementwise arithmetic (with broadcasting) ---------------------------
  Add("add", {OpKind::Add}, [] { return V{uniformInput({2, 3}), uniformInput({3})}; },
      [](const V &X) { return add(X[0], X[1], 2.5); });
  Add("sub", {OpKind::Sub}, [] { return V{uniformInput({2, 1}), uniformInput({2, 3})}; },
      [](const V &X) { return X[0] - X[1]; });
  Add("mul", {OpKind::Mul}, [] { return V{uniformInput({2, 3}), uniformInput({1, 3})}; },
      [](const V &X) { return X[0] * X[1]; });
  Add("div", {OpKind::Div}, [] { return V{uniformInput({2, 3}), awayFromZero({3})}; },
      [](const V &X) { return X[0] / X[1]; });
  Add("pow", {OpKind::Pow},
      [] { return V{uniformInput({2, 3}, 0.5, 2), uniformInput({3}, -1.5, 2)}; },
      [](const V &X) { return pow(X[0], X[1]); });
  Add("pow_scalar", {OpKind::Pow}, [] { return V{uniformInput({4}, 0.5, 2)}; },
      [](const V &X) { return pow(X[0], 3.0); });
  Add("neg", {OpKind::Neg}, [] { return V{uniformInput({3})}; },
      [](const V &X) { return -X[0]; });
  Add("exp", {OpKind::Exp}, [] { return V{uniformInput({3})}; },
      [](const V &X) { return exp(X[0]); });
  Add("log", {OpKind::Log}, [] { return V{uniformInput({3}, 0.5, 2)}; },
      [](const V &X) { return log(X[0]); });
  Add("sqrt", {OpKind::Sqrt}, [] { return V{uniformInput({3}, 0.5, 2)}; },
      [](const V &X) { return sqrt(X[0]); });
  Add("rsqrt", {OpKind::Sqrt, OpKind::Reciprocal},
      [] { return V{uniformInput({3}, 0.5, 2)}; },
      [](const V &X) { return rsqrt(X[0]); });
  Add("reciprocal", {OpKind::Reciprocal}, [] { return V{awayFromZero({3})}; },
      [](const V &X) { return reciprocal(X[0]); });
  Add("abs", {OpKind::Abs}, [] { return V{awayFromZero({4})}; },
      [](const V &X) { return abs(X[0]); });
  Add("sin", {OpKind::Sin}, [] { return V{uniformInput({3})}; },
      [](const V &X) { return sin(X[0]); });
  Add("cos", {OpKind::Cos}, [] { return V{uniformInput({3})}; },
      [](const V &X) { return cos(X[0]); });
  Add("erf", {OpKind::Erf}, [] { return V{uniformInput({3})}; },
      [](const V &X) { return erf(X[0]); });
  Add("sign", {OpKind::Sign}, [] { return V{awayFromZero({3})}; },
      [](const V &X) { return sign(X[0]) * X[0]; });
  Add("clamp", {OpKind::Clip}, [] { return V{awayFromZero({6})}; },
      [](const V &X) { return clamp(X[0], -0.5, 0.7); });
  Add("clamp_min", {OpKind::Clip}, [] { return V{awayFromZero({6})}; },
      [](const V &X) { return clamp(X[0], 0.1, std::nullopt); });
  Add("maximum", {OpKind::Max}, [] { return V{uniformInput({2, 3}), uniformInput({3})}; },
      [](const V &X) { return maximum(X[0], X[1]); });
  Add("minimum", {OpKind::Min}, [] { return V{uniformInput({2, 3}), uniformInput({2, 1})}; },
      [](const V &X) { return minimum(X[0], X[1]); });
  Add("variadic_sum", {OpKind::Sum},
      [] { return V{uniformInput({2, 3}), uniformInput({3}), uniformInput({2, 1})}; },
      [](const V &X) { return dispatch::call1(OpKind::Sum, X); });
  Add("variadic_mean", {OpKind::Mean},
      [] { return V{uniformInput({2, 3}), uniformInput({3})}; },
      [](const V &X) { return dispatch::call1(OpKind::Mean, X); });
  Add("where", {OpKind::Where}, [] { return V{uniformInput({2, 3}), uniformInput({3})}; },
      [](const V &X) {
        Tensor Cond = tensor({1, 0, 1, 0, 0, 1}, S{2, 3}, DType::Bool);
        return where(Cond, X[0], X[1]);
      });
  Add("masked_fill", {OpKind::Where}, [] { return V{uniformInput({2, 3})}; },
      [](const V &X) {
        return masked_fill(X[0], tensor({0, 1, 0}, std::nullopt, DType::Bool), 5.0);
      });
  Add("identity_clone", {OpKind::Identity}, [] { return V{uniformInput({3})}; },
      [](const V &X) { return X[0].clone() * 2.0; });
  Add("cast", {OpKind::Cast}, [] { return V{uniformInput({3})}; },
      [](const V &X) { return X[0].to(DType::F32).to(DType::F64) * 3.0; });
  C.back().Eps = 1e-2;
  C.back().Atol = 1e-4;
  // --- Activations ------------------------------------------------------------
  Add("relu", {OpKind::Relu}, [] { return V{awayFromZero({2, 4})}; },
      [](const V &X) { return F::relu(X[0]); });
  Add("leaky_relu", {OpKind::LeakyRelu}, [] { return V{awayFromZero({2, 4})}; },
      [](const V &X) { return F::leaky_relu(X[0], 0.2); });
  Add("gelu", {OpKind::Gelu}, [] { return V{uniformInput({5}, -3, 3)}; },
      [](const V &X) { return F::gelu(X[0]); });
  Add("gelu_tanh", {OpKind::Gelu}, [] { return V{uniformInput({5}, -3, 3)}; },
      [](const V &X) { return F::gelu(X[0], "tanh"); });
  Add("silu", {OpKind::Sigmoid, OpKind::Mul}, [] { return V{uniformInput({5}, -3, 3)}; },
      [](const V &X) { return F::silu(X[0]); });
  Add("sigmoid", {OpKind::Sigmoid}, [] { return V{uniformInput({5}, -3, 3)}; },
      [](const V &X) { return F::sigmoid(X[0]); });
  Add("tanh", {OpKind::Tanh}, [] { return V{uniformInput({5}, -3, 3)}; },
      [](const V &X) { return F::tanh(X[0]); });
  Add("softmax", {OpKind::Softmax}, [] { return V{uniformInput({2, 4})}; },
      [](const V &X) { return F::softmax(X[0], 0); });
  Add("log_softmax", {OpKind::LogSoftmax}, [] { return V{uniformInput({2, 4})}; },
      [](const V &X) { return F::log_softmax(X[0], -1); });
  // --- Reductions ---------------------------------------------------------------
  Add("sum_all", {OpKind::ReduceSum}, [] { return V{uniformInput({2, 3})}; },
      [](const V &X) { return sum(X[0]); });
  Add("sum_dims", {OpKind::ReduceSum}, [] { return V{uniformInput({2, 3, 2})}; },
      [](const V &X) { return sum(X[0], {0, -1}); });
  Add("mean_keepdim", {OpKind::ReduceMean}, [] { return V{uniformInput({2, 3})}; },
      [](const V &X) { return mean(X[0], {1}, true); });
  Add("var_std", {OpKind::ReduceMean, OpKind::ReduceSum},
      [] { return V{uniformInput({3, 4})}; },
      [](const V &X) { return var(X[0], {1}) + nng::std(X[0], {0}, false, true).sum(); });
  Add("amax", {OpKind::ReduceMax}, [] { return V{uniformInput({3, 4})}; },
      [](const V &X) { return amax(X[0], {1}); });
  Add("amin_all", {OpKind::ReduceMin}, [] { return V{uniformInput({3, 4})}; },
      [](const V &X) { return min(X[0]); });
  Add("max_dim", {OpKind::GatherElements}, [] { return V{uniformInput({3, 4})}; },
      [](const V &X) { return max(X[0], 1).first; });
  Add("logsumexp", {OpKind::ReduceSum, OpKind::Exp, OpKind::Log},
      [] { return V{uniformInput({3, 4})}; },
      [](const V &X) { return logsumexp(X[0], {1}); });
  // --- Shape ops ------------------------------------------------------------------
  Add("reshape", {OpKind::Reshape}, [] { return V{uniformInput({2, 3})}; },
      [](const V &X) { return reshape(X[0], {3, -1}) * tensor({1, 2}, std::nullopt, DType::F64); });
  Add("flatten_op", {OpKind::Flatten}, [] { return V{uniformInput({2, 3, 2})}; },
      [](const V &X) {
        return dispatch::call1(OpKind::Flatten, {X[0]},
                               dispatch::attrs({{"axis", int64_t(2)}}));
      });
  Add("squeeze_unsqueeze", {OpKind::Squeeze, OpKind::Unsqueeze},
      [] { return V{uniformInput({2, 1, 3})}; },
      [](const V &X) { return unsqueeze(squeeze(X[0], 1), 0) * 3.0; });
  Add("transpose_permute", {OpKind::Transpose}, [] { return V{uniformInput({2, 3, 4})}; },
      [](const V &X) { return permute(transpose(X[0], 0, 2), {1, 0, 2}); });
  Add("expand", {OpKind::Expand}, [] { return V{uniformInput({3, 1})}; },
      [](const V &X) { return expand(X[0], {2, 3, 4}); });
  Add("cat", {OpKind::Concat}, [] { return V{uniformInput({2, 3}), uniformInput({2, 2})}; },
      [](const V &X) { return cat({X[0], X[1]}, 1); });
  Add("stack", {OpKind::Concat, OpKind::Unsqueeze},
      [] { return V{uniformInput({2, 3}), uniformInput({2, 3})}; },
      [](const V &X) { return stack({X[0], X[1]}, 1); });
  Add("split_chunk", {OpKind::Split}, [] { return V{uniformInput({5, 2})}; },
      [](const V &X) {
        std::vector<Tensor> P = split(X[0], 2, 0);
        std::vector<Tensor> Q = chunk(X[0], 2, 1);
        return cat({flatten(P[0] * 2.0), flatten(P[2]), flatten(Q[1] * 3.0)}, 0);
      });
  Add("unbind", {OpKind::Split, OpKind::Squeeze}, [] { return V{uniformInput({3, 2})}; },
      [](const V &X) {
        std::vector<Tensor> U = unbind(X[0], 0);
        return U[0] * U[1] + U[2];
      });
  // --- Indexing -------------------------------------------------------------------------
  Add("slice_step", {OpKind::Slice}, [] { return V{uniformInput({4, 7})}; },
      [](const V &X) { return slice(slice(X[0], 1, 1, 7, 3), 0, -3, 100); });
  Add("select_narrow", {OpKind::Slice, OpKind::Squeeze},
      [] { return V{uniformInput({3, 4})}; },
      [](const V &X) { return select(X[0], 1, -1) + narrow(X[0], 1, 1, 2).sum({1}); });
  Add("index_select", {OpKind::Gather}, [] { return V{uniformInput({4, 3})}; },
      [](const V &X) { return index_select(X[0], 0, idx({3, 0, 3, -1})); });
  Add("gather", {OpKind::GatherElements}, [] { return V{uniformInput({3, 4})}; },
      [](const V &X) { return gather(X[0], 1, idx({0, 3, 3, 1, 2, 0}, {3, 2})); });
  Add("tril_triu", {OpKind::Trilu}, [] { return V{uniformInput({3, 4})}; },
      [](const V &X) { return tril(X[0], 1) + triu(X[0] * 2.0, -1); });
  // --- Linear algebra ------------------------------------------------------------------------
  Add("matmul_batched", {OpKind::MatMul},
      [] { return V{uniformInput({2, 1, 2, 3}), uniformInput({3, 3, 2})}; },
      [](const V &X) { return matmul(X[0], X[1]); });
  Add("matmul_vectors", {OpKind::MatMul},
      [] { return V{uniformInput({3}), uniformInput({2, 3, 2}), uniformInput({2})}; },
      [](const V &X) { return matmul(matmul(X[0], X[1]), X[2]); });
  Add("mm_bmm", {OpKind::MatMul},
      [] { return V{uniformInput({2, 3}), uniformInput({3, 2}), uniformInput({2, 2, 2})}; },
      [](const V &X) { return bmm(expand(mm(X[0], X[1]), {2, 2, 2}), X[2]); });
  Add("linear_gemm", {OpKind::Gemm},
      [] { return V{uniformInput({2, 3}), uniformInput({4, 3}), uniformInput({4})}; },
      [](const V &X) { return F::linear(X[0], X[1], X[2]); });
  Add("gemm_trans", {OpKind::Gemm},
      [] { return V{uniformInput({3, 2}), uniformInput({3, 4}), uniformInput({2, 1})}; },
      [](const V &X) {
        return dispatch::call1(OpKind::Gemm, X,
                               dispatch::attrs({{"alpha", 0.5f}, {"beta", 2.0f},
                                                {"transA", int64_t(1)}}));
      });
  Add("linear_batched", {OpKind::MatMul, OpKind::Add},
      [] { return V{uniformInput({2, 2, 3}), uniformInput({4, 3}), uniformInput({4})}; },
      [](const V &X) { return F::linear(X[0], X[1], X[2]); });
  // --- Convolution ------------------------------------------------------------------------------
  Add("conv2d", {OpKind::Conv},
      [] { return V{uniformInput({2, 4, 7, 6}), uniformInput({4, 2, 3, 2}), uniformInput({4})}; },
      [](const V &X) { return F::conv2d(X[0], X[1], X[2], {2, 1}, {1, 0}, {2, 1}, 2); });
  Add("conv2d_plain", {OpKind::Conv},
      [] { return V{uniformInput({1, 2, 5, 5}), uniformInput({3, 2, 3, 3})}; },
      [](const V &X) { return F::conv2d(X[0], X[1], Tensor(), {1}, {1}); });
  Add("conv1d", {OpKind::Conv},
      [] { return V{uniformInput({2, 2, 9}), uniformInput({3, 2, 3}), uniformInput({3})}; },
      [](const V &X) { return F::conv1d(X[0], X[1], X[2], 2, 1, 1, 1); });
  Add("conv_transpose2d", {OpKind::ConvTranspose},
      [] { return V{uniformInput({2, 4, 3, 3}), uniformInput({4, 1, 3, 2}), uniformInput({2})}; },
      [](const V &X) {
        return F::conv_transpose2d(X[0], X[1], X[2], {2, 2}, {1, 0}, {1, 0}, 2);
      });
  // --- Padding -------------------------------------------------------------------
  Add("pad_constant", {OpKind::Pad}, [] { return V{uniformInput({2, 3, 4})}; },
      [](const V &X) { return F::pad(X[0], {1, 2, -1, 1}, "constant", 0.5); });
  Add("pad_reflect", {OpKind::Pad}, [] { return V{uniformInput({1, 2, 4, 5})}; },
      [](const V &X) { return F::pad(X[0], {3, 2, 1, 3}, "reflect"); });
  Add("pad_replicate", {OpKind::Pad}, [] { return V{uniformInput({1, 2, 3, 3})}; },
      [](const V &X) { return F::pad(X[0], {2, 0, 1, 2}, "replicate"); });
  Add("pad_circular", {OpKind::Concat, OpKind::Slice},
      [] { return V{uniformInput({1, 2, 3, 4})}; },
      [](const V &X) { return F::pad(X[0], {1, 2, 3, 0}, "circular"); });
  // --- Pooling -----------------------------------------------------------------------------------
  Add("max_pool2d", {OpKind::MaxPool}, [] { return V{uniformInput({2, 2, 6, 5})}; },
      [](const V &X) { return F::max_pool2d(X[0], {3}, {2}, {1}); });
  Add("max_pool2d_ceil_dilation", {OpKind::MaxPool}, [] { return V{uniformInput({1, 2, 7, 7})}; },
      [](const V &X) { return F::max_pool2d(X[0], {2}, {2}, {0}, {2}, true); });
  Add("avg_pool2d", {OpKind::AveragePool}, [] { return V{uniformInput({2, 2, 5, 6})}; },
      [](const V &X) { return F::avg_pool2d(X[0], {3, 2}, {2}, {1}); });
  Add("avg_pool2d_exclude_pad_ceil", {OpKind::AveragePool},
      [] { return V{uniformInput({1, 2, 5, 5})}; },
      [](const V &X) { return F::avg_pool2d(X[0], {2}, {2}, {1}, true, false); });
  Add("adaptive_avg_pool2d_global", {OpKind::GlobalAveragePool},
      [] { return V{uniformInput({2, 3, 4, 5})}; },
      [](const V &X) { return F::adaptive_avg_pool2d(X[0], {1}); });
  Add("adaptive_avg_pool2d_divisible", {OpKind::AveragePool},
      [] { return V{uniformInput({1, 2, 4, 6})}; },
      [](const V &X) { return F::adaptive_avg_pool2d(X[0], {2, 3}); });
  Add("adaptive_avg_pool2d_uneven", {OpKind::Slice, OpKind::Concat},
      [] { return V{uniformInput({1, 2, 5, 7})}; },
      [](const V &X) { return F::adaptive_avg_pool2d(X[0], {3, 4}); });
  // --- Normalization --------------------------------------------------------------------------------
  Add("batch_norm_train", {OpKind::BatchNormTraining},
      [] { return V{uniformInput({3, 2, 2, 2}), uniformInput({2}), uniformInput({2})}; },
      [](const V &X) {
        Tensor RM = zeros({2}, DType::F64), RV = ones({2}, DType::F64);
        return F::batch_norm(X[0], RM, RV, X[1], X[2], true, 0.1, 1e-5);
      });
  Add("batch_norm_eval", {OpKind::BatchNormalization},
      [] { return V{uniformInput({2, 3, 2}), uniformInput({3}), uniformInput({3})}; },
      [](const V &X) {
        Tensor RM = tensor({0.1, -0.2, 0.3}, std::nullopt, DType::F64);
        Tensor RV = tensor({0.5, 1.5, 2.0}, std::nullopt, DType::F64);
        return F::batch_norm(X[0], RM, RV, X[1], X[2], false);
      });
  Add("layer_norm", {OpKind::LayerNormalization},
      [] { return V{uniformInput({2, 3, 4}), uniformInput({3, 4}), uniformInput({3, 4})}; },
      [](const V &X) { return F::layer_norm(X[0], {3, 4}, X[1], X[2]); });
  Add("layer_norm_no_affine", {OpKind::LayerNormalization},
      [] { return V{uniformInput({3, 5})}; },
      [](const V &X) { return F::layer_norm(X[0], {5}); });
  Add("group_norm", {OpKind::ReduceMean},
      [] { return V{uniformInput({2, 4, 3}), uniformInput({4}), uniformInput({4})}; },
      [](const V &X) { return F::group_norm(X[0], 2, X[1], X[2]); });
  // --- Dropout, embedding, attention ---------------------------------------------------------------------
  Add("dropout", {OpKind::Mul}, [] { return V{uniformInput({4, 5})}; },
      [](const V &X) {
        manual_seed(11); // The same mask for every evaluation.
        return F::dropout(X[0], 0.4, true);
      });
  Add("embedding", {OpKind::Gather}, [] { return V{uniformInput({5, 3})}; },
      [](const V &X) { return F::embedding(idx({1, 4, 1, 0}, {2, 2}), X[0]); });
  Add("sdpa_float_mask", {OpKind::MatMul, OpKind::Softmax},
      [] { return V{uniformInput({2, 3, 4}), uniformInput({2, 5, 4}), uniformInput({2, 5, 2})}; },
      [](const V &X) {
        Tensor M = reshape(arange(15, DType::F64), {3, 5}) * 0.1 - 0.7;
        return F::scaled_dot_product_attention(X[0], X[1], X[2], M);
      });
  Add("sdpa_causal", {OpKind::MatMul, OpKind::Softmax, OpKind::Where},
      [] { return V{uniformInput({1, 4, 3}), uniformInput({1, 4, 3}), uniformInput({1, 4, 3})}; },
      [](const V &X) {
        return F::scaled_dot_product_attention(X[0], X[1], X[2], Tensor(), 0.0, true);
      });
  // --- Losses ----------------------------------------------------------------------------------------------
  Add("cross_entropy", {OpKind::LogSoftmax, OpKind::GatherElements},
      [] { return V{uniformInput({4, 3})}; },
      [](const V &X) { return F::cross_entropy(X[0], idx({2, 0, 1, 2})); });
  Add("cross_entropy_full", {OpKind::LogSoftmax, OpKind::Gather},
      [] { return V{uniformInput({4, 3, 2}), uniformInput({3}, 0.5, 2)}; },
      [](const V &X) {
        return F::cross_entropy(X[0], idx({2, 0, 1, 1, -100, 2, 0, 1}, {4, 2}), X[1],
                                "mean", -100, 0.2);
      });
  Add("nll_loss", {OpKind::GatherElements}, [] { return V{uniformInput({3, 4})}; },
      [](const V &X) { return F::nll_loss(X[0], idx({3, 1, 0}), Tensor(), "sum"); });
  Add("mse_loss", {OpKind::Sub, OpKind::Mul},
      [] { return V{uniformInput({2, 3}), uniformInput({2, 3})}; },
      [](const V &X) { return F::mse_loss(X[0], X[1]); });
  Add("bce_with_logits", {OpKind::Exp, OpKind::Log, OpKind::Clip},
      [] { return V{awayFromZero({2, 3}), uniformInput({2, 3}, 0, 1), uniformInput({3}, 0.5, 2)}; },
      [](const V &X) {
        Tensor W = tensor({0.5, 1.0, 2.0}, std::nullopt, DType::F64);
        return F::binary_cross_entropy_with_logits(X[0], X[1], W, "mean", X[2]);
      });
  Add("l1_loss", {OpKind::Abs, OpKind::Sub},
      [] { return V{uniformInput({2, 3}), uniformInput({3}, 2, 3)}; },
      [](const V &X) { return F::l1_loss(X[0], X[1], "sum"); });
  Add("smooth_l1_loss", {OpKind::Abs, OpKind::Where},
      [] {
        // |d| on both sides of beta = 0.5, away from it and from 0.
        Tensor D = tensor({-1.5, -0.3, 0.2, 0.9, 0.1, -0.8}, std::nullopt, DType::F64);
        Tensor X = uniformInput({6});
        Tensor T = (X - D).detach();
        T.requires_grad_(true);
        return V{X, T};
      },
      [](const V &X) { return F::smooth_l1_loss(X[0], X[1], "mean", 0.5); });
  Add("kl_div", {OpKind::Log, OpKind::Where},
      [] { return V{uniformInput({2, 3}, -3, 0), uniformInput({2, 3}, 0.1, 1)}; },
      [](const V &X) { return F::kl_div(X[0], X[1], "batchmean"); });
  Add("kl_div_log_target", {OpKind::Exp},
      [] { return V{uniformInput({2, 3}, -3, 0), uniformInput({2, 3}, -3, 0)}; },
      [](const V &X) { return F::kl_div(X[0], X[1], "none", true); });
  Add("cross_entropy_probabilities", {OpKind::LogSoftmax},
      [] { return V{uniformInput({3, 4, 2}), uniformInput({3, 4, 2}, 0, 1), uniformInput({4}, 0.5, 2)}; },
      [](const V &X) { return F::cross_entropy(X[0], X[1], X[2], "mean", -100, 0.1); });
  return C;
}

class Gradcheck : public ::testing::TestWithParam<size_t> {};

TEST_P(Gradcheck, MatchesFiniteDifferences) {
  static const std::vector<Case> Cases = allCases();
  const Case &K = Cases[GetParam()];
  manual_seed(1000 + GetParam());
  std::vector<Tensor> In = K.Inputs();
  autograd::GradcheckFn Fn = K.Fn;
  // Large outputs: check a fixed random projection <R, f(x)>, which
  // compares every input element with one backward pass.
  Tensor Probe;
  {
    NoGradGuard G;
    std::vector<Tensor> Detached;
    for (const Tensor &T : In)
      Detached.push_back(T.detach());
    Probe = Fn(Detached);
  }
  if (Probe.numel() > 16) {
    Tensor R = uniformInput(Probe.sizes(), -1, 1, false);
    Fn = [R, F = K.Fn](const V &X) { return sum(F(X) * R); };
  }
  autograd::GradcheckResult Res = autograd::gradcheck(Fn, In, K.Eps, K.Atol, 1e-4);
  EXPECT_TRUE(Res.Ok) << K.Name << ": " << Res.Message;
}

INSTANTIATE_TEST_SUITE_P(
    Ops, Gradcheck, ::testing::Range<size_t>(0, allCases().size()),
    [](const ::testing::TestParamInfo<size_t> &I) {
      return allCases()[I.param].Name;
    });

TEST(GradcheckCoverage, EveryRegisteredDerivativeHasACase) {
  std::set<OpKind> Covered;
  for (const Case &K : allCases())
    Covered.insert(K.Ops.begin(), K.Ops.end());
  std::string Missing;
  for (const ir::OpSchema &S : ir::allOpSchemas())
    if (autograd::getBackward(S.Kind) && !Covered.count(S.Kind))
      Missing += " " + S.qualifiedName();
  EXPECT_EQ(Missing, "") << "ops with a derivative but no gradcheck case";
}

TEST(GradcheckTool, ReportsTheWrongElement) {
  // A function whose "analytical" gradient is wrong for element 1 only: the
  // output is x + stopgrad(x^2 - x) at element 1.
  Tensor X = tensor({0.5, 2.0, -1.0}, std::nullopt,
                    TensorOptions(DType::F64).requires_grad());
  auto Fn = [](const V &In) {
    Tensor Mask = tensor({0, 1, 0}, std::nullopt, DType::F64);
    Tensor Sq = (In[0] * In[0]).detach();
    return In[0] + Mask * (Sq - In[0].detach());
  };
  autograd::GradcheckResult R = autograd::gradcheck(Fn, {X});
  EXPECT_FALSE(R.Ok);
  EXPECT_NE(R.Message.find("input 0"), std::string::npos) << R.Message;
  EXPECT_NE(R.Message.find("element 1"), std::string::npos) << R.Message;
  EXPECT_GT(R.MaxAbsError, 1.0);
  // The correct function passes.
  auto Good = [](const V &In) { return In[0] * In[0] * 3.0; };
  EXPECT_TRUE(autograd::gradcheck(Good, {X}).Ok);
}

TEST(GradcheckTool, RefusesInputsWithoutGrad) {
  Tensor X = tensor({1.0}, std::nullopt, DType::F64);
  EXPECT_THROW(autograd::gradcheck([](const V &In) { return In[0]; }, {X}),
               Error);
}

TEST(EmbeddingPadding, PaddingRowGetsNoGradient) {
  Tensor W = uniformInput({4, 2});
  Tensor Y = F::embedding(idx({1, 2, 1, 3}, {2, 2}), W, 1);
  EXPECT_NEAR(Y.to_vector<double>()[0], W.to_vector<double>()[2], 1e-12);
  sum(Y * 3.0).backward();
  test::expectValues(W.grad(), {0, 0, 0, 0, 3, 3, 3, 3});
}

} // namespace
