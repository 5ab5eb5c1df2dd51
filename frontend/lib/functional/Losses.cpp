//===- Losses.cpp - nng::F cross_entropy, nll_loss, mse_loss, BCE ----------===//
//
// The losses with PyTorch's semantics, composed of gathers, reductions and
// elementwise ops: nll_loss picks -input[n, target[n]] (class axis 1, any
// trailing axes), weighted per class, skipping ignore_index, and "mean"
// divides by the summed weights of the counted targets; cross_entropy is
// log_softmax + nll_loss plus PyTorch's label-smoothing term;
// binary_cross_entropy_with_logits uses the numerically stable
// max(-x, 0) + log(e^-max + e^(-x-max)) form, with pos_weight.
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
         " (probability targets are not supported)");
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
  detail::requireFloat("mse_loss", "input", Input);
  detail::requireFloat("mse_loss", "target", Target);
  detail::checkReduction("mse_loss", Reduction);
  Tensor D = Input - Target;
  return detail::reduceLoss("mse_loss", D * D, Reduction);
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
