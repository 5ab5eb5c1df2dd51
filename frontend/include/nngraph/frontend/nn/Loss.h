//===- Loss.h - The loss modules ------------------------------ -*- C++ -*-===//
//
// torch.nn's loss modules of PyTorch 1.13: CrossEntropyLoss, NLLLoss,
// MSELoss, L1Loss, SmoothL1Loss, BCEWithLogitsLoss and KLDivLoss, each a
// module whose forward(input, target) calls the matching nng::F function.
// The per-class weight (and BCEWithLogitsLoss's pos_weight) is a buffer,
// registered as PyTorch registers it: an undefined one reserves the name and
// stays out of state_dict(), so the keys equal PyTorch's. A reduction other
// than "mean", "sum" or "none" ("batchmean" too for KLDivLoss) is refused at
// construction. They print as PyTorch prints them: "CrossEntropyLoss()".
//
// Arguments are positional in PyTorch's order without the deprecated
// size_average and reduce, or named through an options struct (spell its
// type: a braced list may also match the positional constructor):
//   nn::CrossEntropyLoss(Weight, /*ignore_index=*/-100, "mean", 0.1)
//   nn::CrossEntropyLoss(
//       nn::CrossEntropyLossOptions{.reduction = "sum", .label_smoothing = 0.1})
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/nn/Module.h"

#include <cstdint>
#include <string>

namespace nng::nn {

/// CrossEntropyLoss arguments by name.
struct CrossEntropyLossOptions {
  Tensor weight;
  int64_t ignore_index = -100;
  std::string reduction = "mean";
  double label_smoothing = 0.0;
};

/// NLLLoss arguments by name.
struct NLLLossOptions {
  Tensor weight;
  int64_t ignore_index = -100;
  std::string reduction = "mean";
};

/// SmoothL1Loss arguments by name.
struct SmoothL1LossOptions {
  std::string reduction = "mean";
  double beta = 1.0;
};

/// BCEWithLogitsLoss arguments by name.
struct BCEWithLogitsLossOptions {
  Tensor weight;
  std::string reduction = "mean";
  Tensor pos_weight;
};

/// KLDivLoss arguments by name.
struct KLDivLossOptions {
  std::string reduction = "mean";
  bool log_target = false;
};

/// Cross entropy of logits [N, C, d...] (or [C]) against class indices
/// [N, d...] or class probabilities of the input's shape (F::cross_entropy).
class CrossEntropyLoss : public Module<CrossEntropyLoss> {
public:
  /// weight: one rescaling factor per class, or undefined.
  explicit CrossEntropyLoss(Tensor weight = Tensor(),
                            int64_t ignore_index = -100,
                            std::string reduction = "mean",
                            double label_smoothing = 0.0);
  explicit CrossEntropyLoss(const CrossEntropyLossOptions &O);
  Tensor forward(const Tensor &input, const Tensor &target);
  /// Buffer "weight" (undefined: not in state_dict).
  Tensor weight;
  int64_t ignore_index;
  std::string reduction;
  double label_smoothing;
};

/// Negative log likelihood of log-probabilities [N, C, d...] (or [C])
/// against class indices (F::nll_loss).
class NLLLoss : public Module<NLLLoss> {
public:
  explicit NLLLoss(Tensor weight = Tensor(), int64_t ignore_index = -100,
                   std::string reduction = "mean");
  explicit NLLLoss(const NLLLossOptions &O);
  Tensor forward(const Tensor &input, const Tensor &target);
  /// Buffer "weight" (undefined: not in state_dict).
  Tensor weight;
  int64_t ignore_index;
  std::string reduction;
};

/// Squared error (F::mse_loss).
class MSELoss : public Module<MSELoss> {
public:
  explicit MSELoss(std::string reduction = "mean");
  Tensor forward(const Tensor &input, const Tensor &target);
  std::string reduction;
};

/// Absolute error (F::l1_loss).
class L1Loss : public Module<L1Loss> {
public:
  explicit L1Loss(std::string reduction = "mean");
  Tensor forward(const Tensor &input, const Tensor &target);
  std::string reduction;
};

/// Squared error below beta, absolute error above (F::smooth_l1_loss).
class SmoothL1Loss : public Module<SmoothL1Loss> {
public:
  /// beta must be non-negative; 0 is L1Loss.
  explicit SmoothL1Loss(std::string reduction = "mean", double beta = 1.0);
  explicit SmoothL1Loss(const SmoothL1LossOptions &O);
  Tensor forward(const Tensor &input, const Tensor &target);
  std::string reduction;
  double beta;
};

/// Sigmoid + binary cross entropy, numerically stable
/// (F::binary_cross_entropy_with_logits).
class BCEWithLogitsLoss : public Module<BCEWithLogitsLoss> {
public:
  /// weight: broadcast over the elements; pos_weight: the weight of the
  /// positive examples, broadcast over the last (class) axis.
  explicit BCEWithLogitsLoss(Tensor weight = Tensor(),
                             std::string reduction = "mean",
                             Tensor pos_weight = Tensor());
  explicit BCEWithLogitsLoss(const BCEWithLogitsLossOptions &O);
  Tensor forward(const Tensor &input, const Tensor &target);
  /// Buffers "weight" and "pos_weight" (undefined: not in state_dict).
  Tensor weight;
  Tensor pos_weight;
  std::string reduction;
};

/// Kullback-Leibler divergence of log-probabilities from a target
/// distribution (F::kl_div); use reduction "batchmean" for the true KL
/// divergence ("mean" averages over every element, as PyTorch does).
class KLDivLoss : public Module<KLDivLoss> {
public:
  explicit KLDivLoss(std::string reduction = "mean", bool log_target = false);
  explicit KLDivLoss(const KLDivLossOptions &O);
  Tensor forward(const Tensor &input, const Tensor &target);
  std::string reduction;
  bool log_target;
};

} // namespace nng::nn
