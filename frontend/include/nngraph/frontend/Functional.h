//===- Functional.h - nng::F, the functional layer API ----------*- C++ -*-===//
//
// torch.nn.functional in C++: activations, linear and convolution, pooling,
// normalization, dropout, embedding, attention and losses, with PyTorch's
// argument names, defaults and tensor layouts (NCHW, weight [out, in, k..]).
// Each is a composition of dispatched ops, so autograd and tracing come
// for free; none touches module state.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Tensor.h"

#include <optional>
#include <string>
#include <vector>

namespace nng::F {

// --- Activations ----------------------------------------------------------------
Tensor relu(const Tensor &X);
/// Approximate "none" (erf) or "tanh".
Tensor gelu(const Tensor &X, const std::string &Approximate = "none");
Tensor silu(const Tensor &X);
Tensor leaky_relu(const Tensor &X, double NegativeSlope = 0.01);
Tensor sigmoid(const Tensor &X);
Tensor tanh(const Tensor &X);
Tensor softmax(const Tensor &X, int64_t Dim);
Tensor log_softmax(const Tensor &X, int64_t Dim);

// --- Linear and convolution -------------------------------------------------------
/// X[..., in] W[out, in] B[out]? -> [..., out].
Tensor linear(const Tensor &X, const Tensor &W, const Tensor &B = Tensor());
Tensor conv1d(const Tensor &X, const Tensor &W, const Tensor &B = Tensor(),
              int64_t Stride = 1, int64_t Padding = 0, int64_t Dilation = 1,
              int64_t Groups = 1);
/// Stride, padding and dilation: one value or one per spatial axis.
Tensor conv2d(const Tensor &X, const Tensor &W, const Tensor &B = Tensor(),
              std::vector<int64_t> Stride = {1},
              std::vector<int64_t> Padding = {0},
              std::vector<int64_t> Dilation = {1}, int64_t Groups = 1);
/// W[in, out/groups, kH, kW].
Tensor conv_transpose2d(const Tensor &X, const Tensor &W,
                        const Tensor &B = Tensor(),
                        std::vector<int64_t> Stride = {1},
                        std::vector<int64_t> Padding = {0},
                        std::vector<int64_t> OutputPadding = {0},
                        int64_t Groups = 1,
                        std::vector<int64_t> Dilation = {1});

// --- Padding --------------------------------------------------------------------
/// torch.nn.functional.pad: Pad holds (before, after) pairs starting from the
/// last axis; Mode "constant" (fill Value; negative pads crop), "reflect",
/// "replicate" or "circular".
Tensor pad(const Tensor &X, const std::vector<int64_t> &Pad,
           const std::string &Mode = "constant", double Value = 0.0);

// --- Pooling ------------------------------------------------------------------------
/// Stride defaults to the kernel size (empty).
Tensor max_pool2d(const Tensor &X, std::vector<int64_t> KernelSize,
                  std::vector<int64_t> Stride = {},
                  std::vector<int64_t> Padding = {0},
                  std::vector<int64_t> Dilation = {1}, bool CeilMode = false);
Tensor avg_pool2d(const Tensor &X, std::vector<int64_t> KernelSize,
                  std::vector<int64_t> Stride = {},
                  std::vector<int64_t> Padding = {0}, bool CeilMode = false,
                  bool CountIncludePad = true);
Tensor adaptive_avg_pool2d(const Tensor &X, std::vector<int64_t> OutputSize);

// --- Normalization --------------------------------------------------------------------
/// Uses batch statistics when Training (and updates RunningMean/Var in
/// place with Momentum, PyTorch's convention: new = (1-m)*old + m*batch,
/// unbiased variance); the running statistics otherwise.
Tensor batch_norm(const Tensor &X, const Tensor &RunningMean,
                  const Tensor &RunningVar, const Tensor &Weight = Tensor(),
                  const Tensor &Bias = Tensor(), bool Training = false,
                  double Momentum = 0.1, double Eps = 1e-5);
Tensor layer_norm(const Tensor &X, const std::vector<int64_t> &NormalizedShape,
                  const Tensor &Weight = Tensor(), const Tensor &Bias = Tensor(),
                  double Eps = 1e-5);
Tensor group_norm(const Tensor &X, int64_t NumGroups,
                  const Tensor &Weight = Tensor(), const Tensor &Bias = Tensor(),
                  double Eps = 1e-5);

// --- Dropout and embedding ------------------------------------------------------------
/// Zeroes elements with probability P and scales the rest by 1/(1-P) when
/// Training; identity otherwise.
Tensor dropout(const Tensor &X, double P = 0.5, bool Training = true);
/// Rows of Weight[num, dim] at integer Indices; PaddingIdx rows get no
/// gradient.
Tensor embedding(const Tensor &Indices, const Tensor &Weight,
                 std::optional<int64_t> PaddingIdx = std::nullopt);

// --- Attention --------------------------------------------------------------------------
/// softmax(Q K^T / sqrt(E) + mask) V over the last two axes; a bool mask
/// marks allowed positions (true = attend), a float mask is added.
Tensor scaled_dot_product_attention(const Tensor &Q, const Tensor &K,
                                    const Tensor &V,
                                    const Tensor &AttnMask = Tensor(),
                                    double DropoutP = 0.0, bool IsCausal = false);

// --- Losses (Reduction "mean", "sum" or "none") -----------------------------------------
/// Input [N, C] (or [N, C, d...], or unbatched [C]) logits. Target either
/// class indices [N] ([N, d...], [] unbatched; i64 or i32), or, when it is
/// floating point, class probabilities of Input's shape (PyTorch 1.13's
/// soft targets: -sum_c w[c] target[c] log_softmax(input)[c], "mean"
/// divides by N * d..., label smoothing mixes the target with the uniform
/// distribution; ignore_index must stay negative there).
Tensor cross_entropy(const Tensor &Input, const Tensor &Target,
                     const Tensor &Weight = Tensor(),
                     const std::string &Reduction = "mean",
                     int64_t IgnoreIndex = -100, double LabelSmoothing = 0.0);
/// Input [N, C] log-probabilities.
Tensor nll_loss(const Tensor &Input, const Tensor &Target,
                const Tensor &Weight = Tensor(),
                const std::string &Reduction = "mean",
                int64_t IgnoreIndex = -100);
/// (input - target)^2; Target broadcasts against Input, as in PyTorch.
Tensor mse_loss(const Tensor &Input, const Tensor &Target,
                const std::string &Reduction = "mean");
/// |input - target|; Target broadcasts against Input.
Tensor l1_loss(const Tensor &Input, const Tensor &Target,
               const std::string &Reduction = "mean");
/// With d = input - target: 0.5 d^2 / Beta where |d| < Beta, |d| - 0.5 Beta
/// elsewhere; Beta = 0 is l1_loss, a negative Beta an error.
Tensor smooth_l1_loss(const Tensor &Input, const Tensor &Target,
                      const std::string &Reduction = "mean", double Beta = 1.0);
/// Kullback-Leibler divergence of log-probabilities Input from Target:
/// target * (log(target) - input) (0 where target is 0), or
/// exp(target) * (target - input) with LogTarget. Reduction also
/// "batchmean": the sum divided by Input.size(0), the mathematically right
/// KL divergence ("mean" averages over all elements, as PyTorch does).
Tensor kl_div(const Tensor &Input, const Tensor &Target,
              const std::string &Reduction = "mean", bool LogTarget = false);
Tensor binary_cross_entropy_with_logits(const Tensor &Input,
                                        const Tensor &Target,
                                        const Tensor &Weight = Tensor(),
                                        const std::string &Reduction = "mean",
                                        const Tensor &PosWeight = Tensor());

} // namespace nng::F
