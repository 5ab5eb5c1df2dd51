//===- TorchFunctionalTest.cpp - Tensor ops and nng::F against PyTorch ----===//
//
// The same inputs go through nng and through torch (Debian's python3-torch,
// run once for all cases by TorchFunctionalOracle); forward outputs and
// the input gradients of sum(out * G) must agree within atol 1e-5 (f32,
// plus rtol 1e-5 for large values). One test per case. Without a Python
// that imports torch every case is SKIPPED with the reason.
//
//===----------------------------------------------------------------------===//

#include "TorchFunctionalOracle.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/Linalg.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"

#include <gtest/gtest.h>

using namespace nng;
using nng::test::FunctionalCase;
using nng::test::FunctionalOracle;
using Env = std::map<std::string, Tensor>;
using Outs = std::vector<Tensor>;

namespace {

Tensor r(std::vector<int64_t> S, double Lo = -1, double Hi = 1,
         DType T = DType::F32) {
  return (rand(S, DType::F64) * (Hi - Lo) + Lo).to(T).detach();
}

Tensor ints(std::vector<double> V, std::vector<int64_t> S = {}) {
  if (S.empty())
    S = {static_cast<int64_t>(V.size())};
  return tensor(V, S, DType::I64);
}

FunctionalOracle buildCases() {
  manual_seed(2024);
  FunctionalOracle O;
  auto Add = [&](std::string Name,
                 std::vector<std::pair<std::string, Tensor>> In,
                 std::vector<std::string> Grads,
                 std::function<Outs(Env &)> Fn, std::string Torch,
                 double Atol = 1e-5, double Rtol = 1e-5) {
    FunctionalCase C;
    C.Atol = Atol;
    C.Rtol = Rtol;
    C.Name = std::move(Name);
    C.Inputs = std::move(In);
    C.Grads = std::move(Grads);
    C.Fn = std::move(Fn);
    C.Torch = std::move(Torch);
    O.add(std::move(C));
  };
  // --- Arithmetic and math ------------------------------------------------------
  Add("arith_broadcast", {{"a", r({2, 3})}, {"b", r({3})}, {"c", r({2, 1}, 0.5, 2)}},
      {"a", "b", "c"},
      [](Env &E) { return Outs{add(E["a"], E["b"], 2.0) * E["c"] - E["b"] / E["c"] + 1.5}; },
      "torch.add(a, b, alpha=2.0) * c - b / c + 1.5");
  Add("scalar_left", {{"a", r({4}, 0.5, 2)}}, {"a"},
      [](Env &E) { return Outs{2.0 - E["a"] + 3.0 / E["a"] * (0.5 * E["a"])}; },
      "2.0 - a + 3.0 / a * (0.5 * a)");
  Add("pow_exp_log", {{"a", r({5}, 0.5, 2)}, {"b", r({5})}}, {"a", "b"},
      [](Env &E) {
        return Outs{pow(E["a"], E["b"]) + pow(E["a"], 2.5) + exp(E["b"]) * log(E["a"])};
      },
      "torch.pow(a, b) + torch.pow(a, 2.5) + torch.exp(b) * torch.log(a)");
  Add("unary_math", {{"a", r({6}, 0.2, 2)}}, {"a"},
      [](Env &E) {
        Tensor A = E["a"];
        return Outs{sqrt(A) + rsqrt(A) + abs(A - 1.0) + sin(A) * cos(A) + erf(A) +
                    reciprocal(A) + neg(A)};
      },
      "torch.sqrt(a) + torch.rsqrt(a) + torch.abs(a - 1.0) + torch.sin(a) * "
      "torch.cos(a) + torch.erf(a) + torch.reciprocal(a) + torch.neg(a)");
  Add("clamp_max_min_where", {{"a", r({2, 4})}, {"b", r({4})}}, {"a", "b"},
      [](Env &E) {
        Tensor A = E["a"], B = E["b"];
        return Outs{clamp(A, -0.3, 0.4) + maximum(A, B) * 2.0 + minimum(A, B) +
                    where(A > B, A, B * 3.0) + masked_fill(A, B < 0.0, 9.0)};
      },
      "torch.clamp(a, -0.3, 0.4) + torch.maximum(a, b) * 2.0 + torch.minimum(a, b)"
      " + torch.where(a > b, a, b * 3.0) + a.masked_fill(b < 0.0, 9.0)");
  Add("comparisons", {{"a", tensor({1, 2, 3, 4})}, {"b", tensor({4, 2, 1, 4})}}, {},
      [](Env &E) {
        Tensor A = E["a"], B = E["b"];
        return Outs{eq(A, B), ne(A, B), lt(A, B), le(A, B), gt(A, B), ge(A, B),
                    logical_and(A > 1.5, B > 1.5), logical_or(A > 3.5, B > 3.5),
                    logical_not(A == 2.0)};
      },
      "(a == b, a != b, a < b, a <= b, a > b, a >= b, (a > 1.5) & (b > 1.5),"
      " (a > 3.5) | (b > 3.5), ~(a == 2.0))");
  // A Scalar is a double: an integral value keeps an integer tensor's dtype
  // (like a Python int), a fractional one promotes to f32.
  Add("promotion", {{"i", ints({1, 2, 3})}, {"f", r({3})}}, {},
      [](Env &E) { return Outs{E["i"] + E["f"], E["i"] * 2.0, E["i"] / 2.0, E["i"] + 1.0,
                                   E["i"] * 0.5}; },
      "(i + f, i * 2, i / 2.0, i + 1, i * 0.5)");
  // --- Reductions ------------------------------------------------------------------
  Add("sum_mean", {{"a", r({2, 3, 4})}}, {"a"},
      [](Env &E) {
        Tensor A = E["a"];
        return Outs{sum(A, {0, 2}) + mean(A, {-1}, true).sum({0, 2}) + sum(A) + mean(A)};
      },
      "a.sum(dim=(0, 2)) + a.mean(dim=-1, keepdim=True).sum(dim=(0, 2)) + a.sum() + a.mean()");
  Add("var_std", {{"a", r({3, 5})}}, {"a"},
      [](Env &E) {
        Tensor A = E["a"];
        return Outs{var(A, {1}) + nng::std(A, {1}, false) + var(A).reshape({1})};
      },
      "torch.var(a, dim=1) + torch.std(a, dim=1, unbiased=False) + torch.var(a).reshape(1)");
  Add("amax_amin_max", {{"a", r({3, 5})}}, {"a"},
      [](Env &E) {
        Tensor A = E["a"];
        auto [V, I] = max(A, 1);
        auto [V2, I2] = min(A, 0, true);
        return Outs{amax(A, {0}) + amin(A, {0}) + V2.reshape({5}) + max(A) + min(A),
                    V, I, I2, argmax(A), argmin(A, 1, true)};
      },
      "(torch.amax(a, dim=0) + torch.amin(a, dim=0) + a.min(dim=0, keepdim=True)"
      "[0].reshape(5) + a.max() + a.min(), a.max(dim=1)[0], a.max(dim=1)[1], "
      "a.min(dim=0, keepdim=True)[1], a.argmax(), a.argmin(dim=1, keepdim=True))");
  Add("logsumexp_softmax", {{"a", r({3, 4}, -3, 3)}}, {"a"},
      [](Env &E) {
        Tensor A = E["a"];
        return Outs{logsumexp(A, {1}) + log_softmax(A, 0).sum({1}) +
                    softmax(A, -1).select(1, 2)};
      },
      "torch.logsumexp(a, dim=1) + a.log_softmax(0).sum(1) + a.softmax(-1)[:, 2]");
  // --- Shape and indexing ---------------------------------------------------------------
  Add("views", {{"a", r({2, 3, 4})}}, {"a"},
      [](Env &E) {
        Tensor A = E["a"];
        return Outs{A.reshape({4, -1}).t().flatten() * 2.0 +
                    A.permute({2, 0, 1}).transpose(0, 2).reshape({-1}) +
                    A.unsqueeze(1).squeeze().view({24}) +
                    flatten(A, 1).reshape({24})};
      },
      "a.reshape(4, -1).t().flatten() * 2.0 + a.permute(2, 0, 1).transpose(0, 2)"
      ".reshape(-1) + a.unsqueeze(1).squeeze().view(24) + a.flatten(1).reshape(24)");
  Add("expand_cat_stack", {{"a", r({3, 1})}, {"b", r({3, 2})}}, {"a", "b"},
      [](Env &E) {
        Tensor A = E["a"], B = E["b"];
        return Outs{cat({expand(A, {3, 4}), B, broadcast_to(A, {3, 2})}, 1) +
                        stack({A, A * 2.0}, 1).reshape({3, 2}).sum({1}, true),
                    stack({B, B}, 0)};
      },
      "(torch.cat([a.expand(3, 4), b, torch.broadcast_to(a, (3, 2))], 1) + "
      "torch.stack([a, a * 2.0], 1).reshape(3, 2).sum(1, keepdim=True), "
      "torch.stack([b, b], 0))");
  Add("split_chunk_unbind", {{"a", r({5, 4})}}, {"a"},
      [](Env &E) {
        Tensor A = E["a"];
        auto P = split(A, 2, 0);
        auto Q = split(A, std::vector<int64_t>{1, 3}, 1);
        auto C = chunk(A, 3, 0); // [2, 4], [2, 4], [1, 4]
        auto U = unbind(A, 1);
        return Outs{P[2].sum() + Q[1].sum() * 2.0 + C[1].sum() * 3.0 + U[3].sum() * 4.0,
                    C[2]};
      },
      "(a.split(2, 0)[2].sum() + a.split([1, 3], 1)[1].sum() * 2.0 + "
      "a.chunk(3, 0)[1].sum() * 3.0 + a.unbind(1)[3].sum() * 4.0, a.chunk(3, 0)[2])");
  Add("slice_select", {{"a", r({4, 7})}}, {"a"},
      [](Env &E) {
        Tensor A = E["a"];
        return Outs{slice(A, 1, 1, 100, 2).sum({1}) + A.select(1, -2) + A[2].sum() +
                    narrow(A, 1, 2, 3).sum({1}) + slice(A, 0, -3, -1).sum()};
      },
      "a[:, 1:100:2].sum(1) + a.select(1, -2) + a[2].sum() + a.narrow(1, 2, 3).sum(1)"
      " + a[-3:-1].sum()");
  Add("gather_index_select", {{"a", r({3, 4})}, {"i", ints({2, 0, 2})},
                              {"g", ints({0, 3, 3, 1, 2, 2}, {3, 2})}},
      {"a"},
      [](Env &E) {
        Tensor A = E["a"];
        return Outs{index_select(A, 0, E["i"]).sum({1}) + gather(A, 1, E["g"]).sum({1}) +
                    index_select(A, 1, E["i"]).sum({0})};
      },
      "a.index_select(0, i).sum(1) + a.gather(1, g).sum(1) + a.index_select(1, i).sum(0)");
  Add("tril_triu_onehot", {{"a", r({3, 4})}, {"i", ints({2, 0, 3})}}, {"a"},
      [](Env &E) {
        Tensor A = E["a"];
        return Outs{tril(A, 1) + triu(A, -1) * 2.0, one_hot(E["i"], 5)};
      },
      "(torch.tril(a, 1) + torch.triu(a, -1) * 2.0, F.one_hot(i, 5))");
  // --- Linear algebra --------------------------------------------------------------------------
  Add("matmul", {{"a", r({2, 1, 3, 4})}, {"b", r({3, 4, 2})}, {"v", r({4})}},
      {"a", "b", "v"},
      [](Env &E) {
        return Outs{matmul(E["a"], E["b"]).sum({-1}) + matmul(E["a"], E["v"])};
      },
      "torch.matmul(a, b).sum(-1) + torch.matmul(a, v)");
  Add("mm_bmm", {{"a", r({3, 4})}, {"b", r({4, 2})}, {"c", r({2, 2, 3})}},
      {"a", "b", "c"},
      [](Env &E) {
        return Outs{bmm(expand(mm(E["a"], E["b"]).t(), {2, 2, 3}), E["c"].transpose(1, 2))};
      },
      "torch.bmm(torch.mm(a, b).t().expand(2, 2, 3), c.transpose(1, 2))");
  // --- Activations -------------------------------------------------------------------------------
  Add("activations", {{"x", r({2, 5}, -3, 3)}}, {"x"},
      [](Env &E) {
        Tensor X = E["x"];
        return Outs{F::relu(X) + F::gelu(X) * 2.0 + F::gelu(X, "tanh") * 3.0 +
                    F::silu(X) + F::leaky_relu(X, 0.1) + F::sigmoid(X) + F::tanh(X) +
                    F::softmax(X, 1) + F::log_softmax(X, 0)};
      },
      "F.relu(x) + F.gelu(x) * 2.0 + F.gelu(x, approximate='tanh') * 3.0 + F.silu(x)"
      " + F.leaky_relu(x, 0.1) + torch.sigmoid(x) + torch.tanh(x) + F.softmax(x, 1)"
      " + F.log_softmax(x, 0)");
  // --- Linear and convolution ----------------------------------------------------------------------
  Add("linear", {{"x", r({2, 3, 4})}, {"w", r({5, 4})}, {"b", r({5})}, {"y", r({3, 4})}},
      {"x", "w", "b", "y"},
      [](Env &E) {
        return Outs{F::linear(E["x"], E["w"], E["b"]).sum({0}) +
                    F::linear(E["y"], E["w"], E["b"]) + F::linear(E["y"], E["w"])};
      },
      "F.linear(x, w, b).sum(0) + F.linear(y, w, b) + F.linear(y, w)");
  Add("conv2d", {{"x", r({2, 4, 9, 8})}, {"w", r({6, 2, 3, 2})}, {"b", r({6})}},
      {"x", "w", "b"},
      [](Env &E) {
        return Outs{F::conv2d(E["x"], E["w"], E["b"], {2, 1}, {1, 2}, {2, 1}, 2)};
      },
      "F.conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(2, 1), groups=2)");
  Add("conv2d_default", {{"x", r({1, 3, 6, 6})}, {"w", r({4, 3, 3, 3})}}, {"x", "w"},
      [](Env &E) { return Outs{F::conv2d(E["x"], E["w"], Tensor(), {1}, {1})}; },
      "F.conv2d(x, w, None, padding=1)");
  Add("conv1d", {{"x", r({2, 4, 10})}, {"w", r({4, 2, 3})}, {"b", r({4})}},
      {"x", "w", "b"},
      [](Env &E) { return Outs{F::conv1d(E["x"], E["w"], E["b"], 2, 1, 2, 2)}; },
      "F.conv1d(x, w, b, stride=2, padding=1, dilation=2, groups=2)");
  Add("conv_transpose2d", {{"x", r({2, 4, 4, 3})}, {"w", r({4, 3, 3, 2})}, {"b", r({6})}},
      {"x", "w", "b"},
      [](Env &E) {
        return Outs{F::conv_transpose2d(E["x"], E["w"], E["b"], {2, 3}, {1, 0}, {1, 2}, 2,
                                        {1})};
      },
      "F.conv_transpose2d(x, w, b, stride=(2, 3), padding=(1, 0), output_padding=(1, 2),"
      " groups=2)");
  // --- Padding -------------------------------------------------------------------
  Add("pad", {{"x", r({1, 2, 4, 5})}}, {"x"},
      [](Env &E) {
        Tensor X = E["x"];
        return Outs{F::pad(X, {1, 2, 3, 1}, "reflect") +
                        F::pad(X, {1, 2, 3, 1}, "replicate") * 2.0 +
                        F::pad(X, {1, 2, 3, 1}, "circular") * 3.0 +
                        F::pad(X, {1, 2, 3, 1}, "constant", 0.25),
                    F::pad(X, {-1, 1, 0, 2})};
      },
      "(F.pad(x, (1, 2, 3, 1), 'reflect') + F.pad(x, (1, 2, 3, 1), 'replicate') * 2.0"
      " + F.pad(x, (1, 2, 3, 1), 'circular') * 3.0 + F.pad(x, (1, 2, 3, 1), value=0.25),"
      " F.pad(x, (-1, 1, 0, 2)))");
  // --- Pooling ----------------------------------------------------------------------------------------
  Add("max_pool2d", {{"x", r({2, 3, 7, 6})}}, {"x"},
      [](Env &E) { return Outs{F::max_pool2d(E["x"], {3, 2}, {2}, {1})}; },
      "F.max_pool2d(x, (3, 2), 2, 1)");
  Add("max_pool2d_ceil_dilation", {{"x", r({1, 2, 8, 7})}}, {"x"},
      [](Env &E) { return Outs{F::max_pool2d(E["x"], {2}, {2}, {1}, {2}, true)}; },
      "F.max_pool2d(x, 2, 2, 1, dilation=2, ceil_mode=True)");
  Add("avg_pool2d", {{"x", r({2, 2, 7, 6})}}, {"x"},
      [](Env &E) { return Outs{F::avg_pool2d(E["x"], {3}, {2}, {1})}; },
      "F.avg_pool2d(x, 3, 2, 1)");
  Add("avg_pool2d_exclude_pad_ceil", {{"x", r({1, 2, 7, 7})}}, {"x"},
      [](Env &E) { return Outs{F::avg_pool2d(E["x"], {3}, {2}, {1}, true, false)}; },
      "F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)");
  Add("adaptive_avg_pool2d", {{"x", r({2, 3, 7, 6})}}, {"x"},
      [](Env &E) {
        Tensor X = E["x"];
        return Outs{F::adaptive_avg_pool2d(X, {1}), F::adaptive_avg_pool2d(X, {3, 4}),
                    F::adaptive_avg_pool2d(X, {7, 3})};
      },
      "(F.adaptive_avg_pool2d(x, 1), F.adaptive_avg_pool2d(x, (3, 4)), "
      "F.adaptive_avg_pool2d(x, (7, 3)))");
  Add("adaptive_avg_pool2d_grad", {{"x", r({1, 2, 7, 5})}}, {"x"},
      [](Env &E) { return Outs{F::adaptive_avg_pool2d(E["x"], {3, 2})}; },
      "F.adaptive_avg_pool2d(x, (3, 2))");
  // --- Normalization -------------------------------------------------------------------------------------
  Add("batch_norm_train",
      {{"x", r({4, 3, 2, 2}, -2, 2)}, {"w", r({3})}, {"b", r({3})},
       {"rm", r({3})}, {"rv", r({3}, 0.5, 2)}},
      {"x", "w", "b"},
      [](Env &E) {
        Tensor RM = E["rm"].clone(), RV = E["rv"].clone();
        Tensor Y = F::batch_norm(E["x"], RM, RV, E["w"], E["b"], true, 0.2, 1e-5);
        return Outs{Y, RM, RV};
      },
      "(lambda m, v: (F.batch_norm(x, m, v, w, b, training=True, momentum=0.2, "
      "eps=1e-5), m, v))(rm.clone(), rv.clone())");
  Add("batch_norm_eval",
      {{"x", r({2, 3, 4})}, {"w", r({3})}, {"b", r({3})}, {"rm", r({3})},
       {"rv", r({3}, 0.5, 2)}},
      {"x", "w", "b"},
      [](Env &E) {
        return Outs{F::batch_norm(E["x"], E["rm"], E["rv"], E["w"], E["b"], false)};
      },
      "F.batch_norm(x, rm, rv, w, b, training=False)");
  Add("layer_norm", {{"x", r({2, 3, 4}, -2, 2)}, {"w", r({3, 4})}, {"b", r({3, 4})}},
      {"x", "w", "b"},
      [](Env &E) {
        return Outs{F::layer_norm(E["x"], {3, 4}, E["w"], E["b"]) +
                    F::layer_norm(E["x"], {4})};
      },
      "F.layer_norm(x, (3, 4), w, b) + F.layer_norm(x, (4,))");
  Add("group_norm", {{"x", r({2, 6, 3}, -2, 2)}, {"w", r({6})}, {"b", r({6})}},
      {"x", "w", "b"},
      [](Env &E) { return Outs{F::group_norm(E["x"], 3, E["w"], E["b"], 1e-5)}; },
      "F.group_norm(x, 3, w, b, 1e-5)");
  // --- Dropout, embedding, attention -----------------------------------------------------------------------
  Add("dropout_eval_and_p0", {{"x", r({3, 4})}}, {"x"},
      [](Env &E) { return Outs{F::dropout(E["x"], 0.5, false) + F::dropout(E["x"], 0.0)}; },
      "F.dropout(x, 0.5, training=False) + F.dropout(x, 0.0)");
  Add("embedding", {{"w", r({6, 3})}, {"i", ints({1, 5, 2, 1, 0, 2}, {2, 3})}}, {"w"},
      [](Env &E) { return Outs{F::embedding(E["i"], E["w"], 2)}; },
      "F.embedding(i, w, padding_idx=2)");
  Add("sdpa_float_mask",
      {{"q", r({2, 3, 4})}, {"k", r({2, 5, 4})}, {"v", r({2, 5, 3})}, {"m", r({3, 5})}},
      {"q", "k", "v"},
      [](Env &E) {
        return Outs{F::scaled_dot_product_attention(E["q"], E["k"], E["v"], E["m"])};
      },
      "torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(4) + m, -1) @ v");
  Add("sdpa_bool_mask",
      {{"q", r({1, 2, 3, 4})}, {"k", r({1, 2, 3, 4})}, {"v", r({1, 2, 3, 4})},
       {"m", tensor({1, 0, 1, 1, 1, 0, 0, 1, 1}, std::vector<int64_t>{3, 3}, DType::Bool)}},
      {"q", "k", "v"},
      [](Env &E) {
        return Outs{F::scaled_dot_product_attention(E["q"], E["k"], E["v"], E["m"])};
      },
      "torch.softmax((q @ k.transpose(-2, -1) / 2.0).masked_fill(~m, float('-inf')), -1) @ v");
  Add("sdpa_causal", {{"q", r({2, 4, 3})}, {"k", r({2, 4, 3})}, {"v", r({2, 4, 2})}},
      {"q", "k", "v"},
      [](Env &E) {
        return Outs{F::scaled_dot_product_attention(E["q"], E["k"], E["v"], Tensor(), 0.0,
                                                    true)};
      },
      "torch.softmax((q @ k.transpose(-2, -1) / math.sqrt(3)).masked_fill("
      "torch.ones(4, 4, dtype=torch.bool).triu(1), float('-inf')), -1) @ v");
  // --- Losses -----------------------------------------------------------------------------------------------
  Add("cross_entropy", {{"x", r({4, 5}, -2, 2)}, {"t", ints({4, 0, 2, 2})}}, {"x"},
      [](Env &E) { return Outs{F::cross_entropy(E["x"], E["t"])}; },
      "F.cross_entropy(x, t)");
  Add("cross_entropy_weight_ignore_smooth",
      {{"x", r({5, 4}, -2, 2)}, {"t", ints({3, -100, 0, 1, 3})}, {"w", r({4}, 0.5, 2)}},
      {"x"},
      [](Env &E) {
        return Outs{F::cross_entropy(E["x"], E["t"], E["w"], "mean", -100, 0.1)};
      },
      "F.cross_entropy(x, t, weight=w, ignore_index=-100, label_smoothing=0.1)");
  Add("cross_entropy_spatial_sum",
      {{"x", r({2, 3, 2, 2}, -2, 2)}, {"t", ints({0, 2, 1, 1, 2, 0, 1, 2}, {2, 2, 2})}},
      {"x"},
      [](Env &E) {
        return Outs{F::cross_entropy(E["x"], E["t"], Tensor(), "sum", 1, 0.3)};
      },
      "F.cross_entropy(x, t, reduction='sum', ignore_index=1, label_smoothing=0.3)");
  Add("cross_entropy_none", {{"x", r({3, 4}, -2, 2)}, {"t", ints({1, 3, 0})},
                             {"w", r({4}, 0.5, 2)}},
      {"x"},
      [](Env &E) { return Outs{F::cross_entropy(E["x"], E["t"], E["w"], "none")}; },
      "F.cross_entropy(x, t, weight=w, reduction='none')");
  Add("nll_loss", {{"x", r({4, 3}, -3, 0)}, {"t", ints({2, 0, 1, 2})}, {"w", r({3}, 0.5, 2)}},
      {"x"},
      [](Env &E) {
        return Outs{F::nll_loss(E["x"], E["t"], E["w"]), F::nll_loss(E["x"], E["t"], Tensor(),
                                                                     "none", 0)};
      },
      "(F.nll_loss(x, t, weight=w), F.nll_loss(x, t, reduction='none', ignore_index=0))");
  Add("mse_loss", {{"x", r({3, 4})}, {"y", r({3, 4})}}, {"x", "y"},
      [](Env &E) {
        return Outs{F::mse_loss(E["x"], E["y"]) + F::mse_loss(E["x"], E["y"], "sum"),
                    F::mse_loss(E["x"], E["y"], "none")};
      },
      "(F.mse_loss(x, y) + F.mse_loss(x, y, reduction='sum'), F.mse_loss(x, y, "
      "reduction='none'))");
  Add("bce_with_logits",
      {{"x", r({3, 4}, -30, 30)}, {"y", r({3, 4}, 0, 1)}, {"w", r({4}, 0.5, 2)},
       {"p", r({4}, 0.5, 3)}},
      {"x", "y"},
      [](Env &E) {
        return Outs{F::binary_cross_entropy_with_logits(E["x"], E["y"], E["w"], "mean", E["p"]) +
                        F::binary_cross_entropy_with_logits(E["x"], E["y"]),
                    F::binary_cross_entropy_with_logits(E["x"], E["y"], Tensor(), "none")};
      },
      "(F.binary_cross_entropy_with_logits(x, y, weight=w, pos_weight=p) + "
      "F.binary_cross_entropy_with_logits(x, y), "
      "F.binary_cross_entropy_with_logits(x, y, reduction='none'))");
  // --- Matrix functions and factorizations (Linalg.h) ----------------------------
  Add("matrix_exp_small", {{"a", r({3, 3}, -0.3, 0.3)}}, {"a"},
      [](Env &E) { return Outs{matrix_exp(E["a"])}; }, "torch.matrix_exp(a)");
  // Norms above 1: scaling and squaring.
  Add("matrix_exp_squaring", {{"a", r({5, 5}, -2, 2, DType::F64)}}, {"a"},
      [](Env &E) { return Outs{matrix_exp(E["a"])}; }, "torch.matrix_exp(a)",
      1e-10, 1e-10);
  Add("matrix_exp_batch_f32", {{"a", r({2, 4, 4}, -1, 1)}}, {"a"},
      [](Env &E) { return Outs{matrix_exp(E["a"])}; }, "torch.matrix_exp(a)",
      1e-5, 1e-5);
  Add("matrix_exp_skew", {{"a", r({4, 4}, -1, 1)}}, {"a"},
      [](Env &E) {
        Tensor A = E["a"] - E["a"].t();
        return Outs{matrix_exp(A)};
      },
      "torch.matrix_exp(a - a.t())");
  Add("householder_product", {{"a", r({5, 3}, -1, 1, DType::F64)}, {"t", r({3}, 0.2, 1.8, DType::F64)}},
      {"a", "t"},
      [](Env &E) { return Outs{linalg::householder_product(E["a"], E["t"])}; },
      "torch.linalg.householder_product(a, t)", 1e-12, 1e-12);
  Add("householder_product_batch", {{"a", r({2, 4, 3})}, {"t", r({2, 2}, 0.2, 1.8)}},
      {"a", "t"},
      [](Env &E) { return Outs{linalg::householder_product(E["a"], E["t"])}; },
      "torch.linalg.householder_product(a, t)");
  Add("geqrf", {{"a", r({5, 3}, -1, 1, DType::F64)}}, {},
      [](Env &E) {
        auto [X, Tau] = geqrf(E["a"]);
        return Outs{X, Tau};
      },
      "torch.geqrf(a)", 1e-12, 1e-12);
  Add("geqrf_square_wide_f32", {{"a", r({2, 3, 4})}, {"b", r({3, 3})}}, {},
      [](Env &E) {
        auto [X, Tau] = geqrf(E["a"]);
        auto [Y, TauY] = geqrf(E["b"]);
        return Outs{X, Tau, Y, TauY};
      },
      "(*torch.geqrf(a), *torch.geqrf(b))");
  Add("qr_from_geqrf", {{"a", r({4, 3}, -1, 1, DType::F64)}}, {},
      [](Env &E) {
        auto [X, Tau] = geqrf(E["a"]);
        return Outs{linalg::householder_product(X, Tau)};
      },
      "torch.linalg.householder_product(*torch.geqrf(a))", 1e-12, 1e-12);
  Add("solve", {{"a", r({4, 4}, -1, 1, DType::F64)}, {"b", r({4, 2}, -1, 1, DType::F64)}},
      {"a", "b"},
      [](Env &E) { return Outs{linalg::solve(E["a"], E["b"])}; },
      "torch.linalg.solve(a, b)", 1e-9, 1e-9);
  Add("solve_batch_broadcast", {{"a", r({2, 3, 3})}, {"b", r({3, 2})}}, {"a", "b"},
      [](Env &E) { return Outs{linalg::solve(E["a"] + eye(3) * 2.0, E["b"])}; },
      "torch.linalg.solve(a + torch.eye(3) * 2.0, b)", 1e-5, 1e-4);
  Add("solve_vector", {{"a", r({3, 3})}, {"b", r({3})}}, {"a", "b"},
      [](Env &E) { return Outs{linalg::solve(E["a"] + eye(3) * 2.0, E["b"])}; },
      "torch.linalg.solve(a + torch.eye(3) * 2.0, b)", 1e-5, 1e-4);
  return O;
}

FunctionalOracle &oracle() {
  static FunctionalOracle O = buildCases();
  return O;
}

const std::string &skipReason() {
  static std::string Reason = oracle().run();
  return Reason;
}

class TorchFunctional : public ::testing::TestWithParam<size_t> {};

TEST_P(TorchFunctional, MatchesTorch) {
  if (!skipReason().empty())
    GTEST_SKIP() << "SKIPPED: " << skipReason();
  std::string Msg = oracle().compare(GetParam());
  EXPECT_EQ(Msg, "") << oracle().cases()[GetParam()].Name << " ("
                     << oracle().cases()[GetParam()].Torch << ")";
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TorchFunctional,
    ::testing::Range<size_t>(0, oracle().cases().size()),
    [](const ::testing::TestParamInfo<size_t> &I) {
      return oracle().cases()[I.param].Name;
    });

} // namespace
