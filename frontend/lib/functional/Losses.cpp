//===- Losses.cpp - nng::F's losses ---------------------------------------===//
//
// The losses with PyTorch 1.13's semantics, composed of gathers, reductions
// and elementwise ops, so autograd and tracing need nothing more: nll_loss
// picks -input[n, target[n]] (class axis 1, any trailing axes), weighted
// per class, skipping ignore_index, and "mean" divides by the summed
// weights of the counted targets; cross_entropy is log_softmax + nll_loss
// plus PyTorch's label-smoothing term, or, for class-probability targets,
// -sum w target log_softmax(input) with the smoothed target;
// binary_cross_entropy_with_logits uses the numerically stable
// max(-x, 0) + log(e^-max + e^(-x-max)) form, with pos_weight; mse, l1,
// smooth_l1 and kl_div are elementwise with broadcasting targets.
//
//===----------------------------------------------------------------------===//

#include "FunctionalInternal.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

namespace nng::F {

using nng::detail::describe;

namespace {

/// Input [N, C, d...] (or [C]) and Target [N, d...] (or []) checked; the
/// batched forms returned.
std::pair<Tensor, Tensor> classOperands(const char *Op, const Tensor &Input,
                                        const Tensor &Target,
                                        const Tensor &Weight,
                                        int64_t IgnoreIndex) {
  detail::requireFloat(Op, "input", Input);
  if (!Target.defined())
    fail(ErrorKind::InvalidArgument, Op, ": target is undefined");
  if (Target.dtype() != DType::I64 && Target.dtype() != DType::I32)
    fail(ErrorKind::InvalidArgument, Op,
         ": expected class-index targets of type i64, got ", describe(Target),
         std::string(Op) == "cross_entropy"
             ? std::string(" (class probabilities must have the input's "
                           "shape ") +
                   describe(Input) + ")"
             : std::string(" (for class probabilities use cross_entropy)"));
  Tensor In = Input, Tg = Target;
  if (Input.dim() == 1) {
    if (Target.dim() != 0)
      fail(ErrorKind::ShapeMismatch, Op, ": input ", describe(Input),
           " (unbatched) needs a 0-d target, got ", describe(Target));
    In = unsqueeze(Input, 0);
    Tg = unsqueeze(Target, 0);
  }
  if (In.dim() < 2)
    fail(ErrorKind::ShapeMismatch, Op,
         ": expected input of shape [N, C, ...] or [C], got ", describe(Input));
  bool Ok = Tg.dim() == In.dim() - 1 && Tg.size(0) == In.size(0);
  for (int64_t D = 2; Ok && D < In.dim(); ++D)
    Ok = Tg.size(D - 1) == In.size(D);
  if (!Ok)
    fail(ErrorKind::ShapeMismatch, Op, ": input ", describe(Input),
         " and target ", describe(Target),
         ": expected target of shape [N, d...] matching the input without "
         "its class axis 1");
  int64_t C = In.size(1);
  if (Weight.defined() && (Weight.dim() != 1 || Weight.size(0) != C))
    fail(ErrorKind::ShapeMismatch, Op, ": weight ", describe(Weight),
         " must have one entry per class [", C, "] for input ",
         describe(Input));
  std::vector<int64_t> V;
  if (!nng::detail::isTracing())
    V = Tg.data().toIntVector();
  for (size_t I = 0; I < V.size(); ++I)
    if (V[I] != IgnoreIndex && (V[I] < 0 || V[I] >= C))
      fail(ErrorKind::InvalidArgument, Op, ": target ", V[I], " (entry ", I,
           " of ", describe(Target), ") is out of bounds for ", C,
           " classes");
  return {In, Tg.to(DType::I64)};
}

/// The per-element loss -w[t] input[n, t], the per-element weights (0 at
/// ignored targets) and the ignore mask.
struct Picked {
  Tensor Loss, W, Ignored;
};

Picked pick(const Tensor &In, const Tensor &Tg, const Tensor &Weight,
            int64_t IgnoreIndex) {
  Picked P;
  P.Ignored = eq(Tg, scalar_tensor(IgnoreIndex, DType::I64));
  Tensor Safe = where(P.Ignored, zeros({}, DType::I64), Tg);
  Tensor Vals = squeeze(gather(In, 1, unsqueeze(Safe, 1)), 1);
  Tensor Keep = logical_not(P.Ignored).to(In.dtype());
  P.W = Weight.defined()
            ? reshape(index_select(Weight.to(In.dtype()), 0, flatten(Safe)),
                      Safe.sizes()) *
                  Keep
            : Keep;
  P.Loss = neg(Vals) * P.W;
  return P;
}

Tensor reduceWeighted(const Picked &P, const std::string &Reduction) {
  if (Reduction == "none")
    return P.Loss;
  if (Reduction == "sum")
    return sum(P.Loss);
  return sum(P.Loss) / sum(P.W);
}

/// Cross entropy with class-probability targets (Target has Input's shape;
/// PyTorch's cross_entropy_loss_prob_target).
Tensor crossEntropyProbs(const Tensor &Input, const Tensor &Target,
                         const Tensor &Weight, const std::string &Reduction,
                         int64_t IgnoreIndex, double LabelSmoothing) {
  const char *Op = "cross_entropy";
  if (IgnoreIndex >= 0)
    fail(ErrorKind::InvalidArgument, Op, ": ignore_index=", IgnoreIndex,
         " is not supported with class-probability targets ",
         describe(Target), "; leave it at its default -100");
  if (Input.dim() == 0)
    fail(ErrorKind::ShapeMismatch, Op,
         ": expected input of shape [N, C, ...] or [C], got ", describe(Input));
  int64_t ClassDim = Input.dim() == 1 ? 0 : 1;
  int64_t C = Input.size(ClassDim);
  if (Weight.defined() && (Weight.dim() != 1 || Weight.size(0) != C))
    fail(ErrorKind::ShapeMismatch, Op, ": weight ", describe(Weight),
         " must have one entry per class [", C, "] for input ",
         describe(Input));
  Tensor LogP = nng::log_softmax(Input, ClassDim);
  Tensor T = Target;
  if (LabelSmoothing > 0.0)
    T = T * (1.0 - LabelSmoothing) + LabelSmoothing / static_cast<double>(C);
  Tensor Terms = LogP * T;
  if (Weight.defined()) {
    std::vector<int64_t> WS(Input.dim(), 1);
    WS[ClassDim] = C;
    Terms = Terms * reshape(Weight.to(Input.dtype()), WS);
  }
  if (Reduction == "none")
    return neg(sum(Terms, {ClassDim}));
  if (Reduction == "sum")
    return neg(sum(Terms));
  // The mean over the N * d... positions; 0 / 0 gives NaN on empty input,
  // as in PyTorch.
  return neg(sum(Terms)) / (static_cast<double>(Input.numel()) /
                            static_cast<double>(C));
}

/// Checks the operands of an elementwise loss: both floating point and
/// broadcastable (PyTorch warns about and then broadcasts differing shapes).
void elementwiseOperands(const char *Op, const Tensor &Input,
                         const Tensor &Target) {
  detail::requireFloat(Op, "input", Input);
  detail::requireFloat(Op, "target", Target);
  if (Input.shape() == Target.shape())
    return;
  try {
    (void)broadcastShapes(Input.shape(), Target.shape());
  } catch (const Error &) {
    fail(ErrorKind::ShapeMismatch, Op, ": target ", describe(Target),
         " cannot be broadcast against input ", describe(Input),
         "; give the target the input's shape");
  }
}

} // namespace

Tensor nll_loss(const Tensor &Input, const Tensor &Target,
                const Tensor &Weight, const std::string &Reduction,
                int64_t IgnoreIndex) {
  detail::checkReduction("nll_loss", Reduction);
  auto [In, Tg] = classOperands("nll_loss", Input, Target, Weight, IgnoreIndex);
  Tensor R = reduceWeighted(pick(In, Tg, Weight, IgnoreIndex), Reduction);
  return Input.dim() == 1 && Reduction == "none" ? squeeze(R, 0) : R;
}

Tensor cross_entropy(const Tensor &Input, const Tensor &Target,
                     const Tensor &Weight, const std::string &Reduction,
                     int64_t IgnoreIndex, double LabelSmoothing) {
  const char *Op = "cross_entropy";
  detail::checkReduction(Op, Reduction);
  if (!(LabelSmoothing >= 0.0 && LabelSmoothing <= 1.0))
    fail(ErrorKind::InvalidArgument, Op,
         ": label_smoothing must be between 0.0 and 1.0, got ",
         LabelSmoothing);
  detail::requireFloat(Op, "input", Input);
  if (Target.defined() && Target.is_floating_point() &&
      Target.shape() == Input.shape())
    return crossEntropyProbs(Input, Target, Weight, Reduction, IgnoreIndex,
                             LabelSmoothing);
  auto [In, Tg] = classOperands(Op, Input, Target, Weight, IgnoreIndex);
  Tensor LogP = nng::log_softmax(In, 1);
  Picked P = pick(LogP, Tg, Weight, IgnoreIndex);
  Tensor Nll = reduceWeighted(P, Reduction);
  if (LabelSmoothing > 0.0) {
    int64_t C = In.size(1);
    std::vector<int64_t> WS(In.dim(), 1);
    WS[1] = C;
    Tensor Terms = Weight.defined()
                       ? LogP * reshape(Weight.to(In.dtype()), WS)
                       : LogP;
    Tensor Smooth =
        where(P.Ignored, zeros({}, In.dtype()), neg(sum(Terms, {1})));
    Tensor S = Reduction == "none" ? Smooth
               : Reduction == "sum" ? sum(Smooth)
                                    : sum(Smooth) / sum(P.W);
    Nll = Nll * (1.0 - LabelSmoothing) +
          S * (LabelSmoothing / static_cast<double>(C));
  }
  return Input.dim() == 1 && Reduction == "none" ? squeeze(Nll, 0) : Nll;
}

Tensor mse_loss(const Tensor &Input, const Tensor &Target,
                const std::string &Reduction) {
  detail::checkReduction("mse_loss", Reduction);
  elementwiseOperands("mse_loss", Input, Target);
  Tensor D = Input - Target;
  return detail::reduceLoss("mse_loss", D * D, Reduction);
}

Tensor l1_loss(const Tensor &Input, const Tensor &Target,
               const std::string &Reduction) {
  detail::checkReduction("l1_loss", Reduction);
  elementwiseOperands("l1_loss", Input, Target);
  return detail::reduceLoss("l1_loss", abs(Input - Target), Reduction);
}

Tensor smooth_l1_loss(const Tensor &Input, const Tensor &Target,
                      const std::string &Reduction, double Beta) {
  const char *Op = "smooth_l1_loss";
  detail::checkReduction(Op, Reduction);
  if (!(Beta >= 0.0))
    fail(ErrorKind::InvalidArgument, Op,
         ": beta must be non-negative, got ", Beta);
  elementwiseOperands(Op, Input, Target);
  if (Beta == 0.0)
    return l1_loss(Input, Target, Reduction);
  Tensor D = abs(Input - Target);
  Tensor L = where(lt(D, scalar_tensor(Beta, D.dtype())), D * D * (0.5 / Beta),
                   D - 0.5 * Beta);
  return detail::reduceLoss(Op, L, Reduction);
}

Tensor kl_div(const Tensor &Input, const Tensor &Target,
              const std::string &Reduction, bool LogTarget) {
  const char *Op = "kl_div";
  if (Reduction != "batchmean" && Reduction != "mean" && Reduction != "sum" &&
      Reduction != "none")
    fail(ErrorKind::InvalidArgument, Op,
         ": reduction must be 'mean', 'batchmean', 'sum' or 'none', got '",
         Reduction, "'");
  elementwiseOperands(Op, Input, Target);
  Tensor L;
  if (LogTarget) {
    L = exp(Target) * (Target - Input);
  } else {
    // xlogy(t, t): 0 where t == 0 (log(1) there keeps the gradient finite).
    Tensor IsZero = eq(Target, scalar_tensor(0.0, Target.dtype()));
    Tensor SafeT = where(IsZero, ones({}, Target.dtype()), Target);
    L = Target * log(SafeT) - Target * Input;
  }
  if (Reduction == "batchmean")
    return Input.dim() == 0 ? sum(L)
                            : sum(L) / static_cast<double>(Input.size(0));
  return detail::reduceLoss(Op, L, Reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor &Input,
                                        const Tensor &Target,
                                        const Tensor &Weight,
                                        const std::string &Reduction,
                                        const Tensor &PosWeight) {
  const char *Op = "binary_cross_entropy_with_logits";
  detail::requireFloat(Op, "input", Input);
  detail::requireFloat(Op, "target", Target);
  detail::checkReduction(Op, Reduction);
  if (Input.shape() != Target.shape())
    fail(ErrorKind::ShapeMismatch, Op, ": target ", describe(Target),
         " must have the same size as input ", describe(Input));
  Tensor MaxVal = clamp(neg(Input), 0.0, std::nullopt);
  Tensor LogTerm = log(exp(neg(MaxVal)) + exp(neg(Input) - MaxVal)) + MaxVal;
  Tensor Loss;
  if (PosWeight.defined()) {
    Tensor LogWeight = (PosWeight - 1.0) * Target + 1.0;
    Loss = (1.0 - Target) * Input + LogWeight * LogTerm;
  } else {
    Loss = (1.0 - Target) * Input + LogTerm;
  }
  if (Weight.defined())
    Loss = Loss * Weight;
  return detail::reduceLoss(Op, Loss, Reduction);
}

} // namespace nng::F
