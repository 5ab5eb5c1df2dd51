//===- Attention.cpp - nng::F scaled_dot_product_attention -----------------===//
//
// softmax(Q K^T / sqrt(E) + mask) V over the last two axes, composed of
// matmul, softmax and dropout so autograd and tracing see ordinary ops. A
// bool mask marks the positions that may be attended (false -> -inf), a
// floating mask is added to the scores; is_causal applies a lower
// triangular mask.
//
//===----------------------------------------------------------------------===//

#include "FunctionalInternal.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

#include <cmath>
#include <limits>

namespace nng::F {

using nng::detail::describe;

Tensor scaled_dot_product_attention(const Tensor &Q, const Tensor &K,
                                    const Tensor &V, const Tensor &AttnMask,
                                    double DropoutP, bool IsCausal) {
  const char *Op = "scaled_dot_product_attention";
  detail::requireFloat(Op, "query", Q);
  detail::requireFloat(Op, "key", K);
  detail::requireFloat(Op, "value", V);
  if (Q.dim() < 2 || K.dim() < 2 || V.dim() < 2)
    fail(ErrorKind::ShapeMismatch, Op,
         ": query, key and value need at least 2 dimensions, got ",
         describe(Q), ", ", describe(K), " and ", describe(V));
  if (Q.size(-1) != K.size(-1))
    fail(ErrorKind::ShapeMismatch, Op, ": query ", describe(Q), " and key ",
         describe(K), ": embedding sizes ", Q.size(-1), " and ", K.size(-1),
         " differ");
  if (K.size(-2) != V.size(-2))
    fail(ErrorKind::ShapeMismatch, Op, ": key ", describe(K), " and value ",
         describe(V), ": sequence lengths ", K.size(-2), " and ", V.size(-2),
         " differ");
  if (IsCausal && AttnMask.defined())
    fail(ErrorKind::InvalidArgument, Op,
         ": pass either attn_mask or is_causal, not both");
  SymInt L = Q.size(-2), S = K.size(-2);
  double Scale = 1.0 / std::sqrt(static_cast<double>(Q.size(-1)));
  Tensor Scores = matmul(Q, transpose(K, -2, -1)) * Scale;
  const double NegInf = -std::numeric_limits<double>::infinity();
  if (IsCausal) {
    Tensor Allowed = tril(ones({L.expect_int(), S.expect_int()}, DType::Bool));
    Scores = masked_fill(Scores, logical_not(Allowed), NegInf);
  } else if (AttnMask.defined()) {
    if (AttnMask.dtype() == DType::Bool)
      Scores = where(AttnMask, Scores, nng::detail::scalarOf(Scores.dtype(),
                                                             NegInf));
    else
      Scores = Scores + AttnMask;
    if (Scores.dim() < Q.dim() || Scores.size(-1) != S || Scores.size(-2) != L)
      fail(ErrorKind::ShapeMismatch, Op, ": attn_mask ", describe(AttnMask),
           " does not broadcast to the scores [..., ", L, ", ", S, "]");
  }
  Tensor Attn = F::softmax(Scores, -1);
  if (DropoutP > 0.0)
    Attn = dropout(Attn, DropoutP, true);
  return matmul(Attn, V);
}

} // namespace nng::F
