//===- Loss.cpp - The loss modules ----------------------------------------===//
//
// The loss modules over nng::F's losses: construction registers the weight
// buffers in PyTorch's order (an undefined one reserves the name) and
// checks the reduction, beta and label_smoothing up front, naming the
// module; forward passes the module's current options to F, which checks
// shapes and dtypes.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/nn/Loss.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/nn/LayerArgs.h"
#include "nngraph/runtime/Error.h"

namespace nng::nn {

namespace {

/// Throws unless Reduction is one Module accepts ("batchmean" only when
/// BatchMean).
void checkReduction(const char *Module, const std::string &Reduction,
                    bool BatchMean = false) {
  if (Reduction == "mean" || Reduction == "sum" || Reduction == "none" ||
      (BatchMean && Reduction == "batchmean"))
    return;
  fail(ErrorKind::InvalidArgument, Module, ": ", repr::pyStr(Reduction),
       " is not a valid value for reduction; use ",
       BatchMean ? "'mean', 'batchmean', 'sum' or 'none'"
                 : "'mean', 'sum' or 'none'");
}

} // namespace

CrossEntropyLoss::CrossEntropyLoss(Tensor weight, int64_t ignore_index,
                                   std::string reduction,
                                   double label_smoothing)
    : ignore_index(ignore_index), reduction(std::move(reduction)),
      label_smoothing(label_smoothing) {
  checkReduction("CrossEntropyLoss", this->reduction);
  if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0))
    fail(ErrorKind::InvalidArgument,
         "CrossEntropyLoss: label_smoothing must be between 0.0 and 1.0, got ",
         repr::pyFloat(label_smoothing));
  this->weight = register_buffer("weight", std::move(weight));
}

CrossEntropyLoss::CrossEntropyLoss(const CrossEntropyLossOptions &O)
    : CrossEntropyLoss(O.weight, O.ignore_index, O.reduction,
                       O.label_smoothing) {}

Tensor CrossEntropyLoss::forward(const Tensor &input, const Tensor &target) {
  return F::cross_entropy(input, target, weight, reduction, ignore_index,
                          label_smoothing);
}

NLLLoss::NLLLoss(Tensor weight, int64_t ignore_index, std::string reduction)
    : ignore_index(ignore_index), reduction(std::move(reduction)) {
  checkReduction("NLLLoss", this->reduction);
  this->weight = register_buffer("weight", std::move(weight));
}

NLLLoss::NLLLoss(const NLLLossOptions &O)
    : NLLLoss(O.weight, O.ignore_index, O.reduction) {}

Tensor NLLLoss::forward(const Tensor &input, const Tensor &target) {
  return F::nll_loss(input, target, weight, reduction, ignore_index);
}

MSELoss::MSELoss(std::string reduction) : reduction(std::move(reduction)) {
  checkReduction("MSELoss", this->reduction);
}

Tensor MSELoss::forward(const Tensor &input, const Tensor &target) {
  return F::mse_loss(input, target, reduction);
}

L1Loss::L1Loss(std::string reduction) : reduction(std::move(reduction)) {
  checkReduction("L1Loss", this->reduction);
}

Tensor L1Loss::forward(const Tensor &input, const Tensor &target) {
  return F::l1_loss(input, target, reduction);
}

SmoothL1Loss::SmoothL1Loss(std::string reduction, double beta)
    : reduction(std::move(reduction)), beta(beta) {
  checkReduction("SmoothL1Loss", this->reduction);
  if (!(beta >= 0.0))
    fail(ErrorKind::InvalidArgument,
         "SmoothL1Loss: beta must be non-negative, got ", repr::pyFloat(beta));
}

SmoothL1Loss::SmoothL1Loss(const SmoothL1LossOptions &O)
    : SmoothL1Loss(O.reduction, O.beta) {}

Tensor SmoothL1Loss::forward(const Tensor &input, const Tensor &target) {
  return F::smooth_l1_loss(input, target, reduction, beta);
}

BCEWithLogitsLoss::BCEWithLogitsLoss(Tensor weight, std::string reduction,
                                     Tensor pos_weight)
    : reduction(std::move(reduction)) {
  checkReduction("BCEWithLogitsLoss", this->reduction);
  this->weight = register_buffer("weight", std::move(weight));
  this->pos_weight = register_buffer("pos_weight", std::move(pos_weight));
}

BCEWithLogitsLoss::BCEWithLogitsLoss(const BCEWithLogitsLossOptions &O)
    : BCEWithLogitsLoss(O.weight, O.reduction, O.pos_weight) {}

Tensor BCEWithLogitsLoss::forward(const Tensor &input, const Tensor &target) {
  return F::binary_cross_entropy_with_logits(input, target, weight, reduction,
                                             pos_weight);
}

KLDivLoss::KLDivLoss(std::string reduction, bool log_target)
    : reduction(std::move(reduction)), log_target(log_target) {
  checkReduction("KLDivLoss", this->reduction, /*BatchMean=*/true);
}

KLDivLoss::KLDivLoss(const KLDivLossOptions &O)
    : KLDivLoss(O.reduction, O.log_target) {}

Tensor KLDivLoss::forward(const Tensor &input, const Tensor &target) {
  return F::kl_div(input, target, reduction, log_target);
}

} // namespace nng::nn
