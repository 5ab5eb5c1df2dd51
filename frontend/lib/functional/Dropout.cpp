//===- Dropout.cpp - nng::F dropout and embedding --------------------------===//
//
// dropout multiplies by a Bernoulli(1 - p) mask drawn from the global
// generator and scales by 1/(1-p) (identity in eval or for p = 0, zeros for
// p = 1). embedding gathers rows of the weight; positions holding
// padding_idx take their value from a detached copy of the result, so the
// padding row receives no gradient (PyTorch's behaviour) without touching
// the whole weight.
//
//===----------------------------------------------------------------------===//

#include "FunctionalInternal.h"
#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/DTypeVisit.h"
#include "nngraph/runtime/Error.h"

namespace nng::F {

using nng::detail::describe;
using ir::OpKind;

Tensor dropout(const Tensor &X, double P, bool Training) {
  detail::requireFloat("dropout", "input", X);
  if (!(P >= 0.0 && P <= 1.0))
    fail(ErrorKind::InvalidArgument,
         "dropout: probability has to be between 0 and 1, but got ", P);
  if (!Training || P == 0.0)
    return X;
  if (P == 1.0)
    return X * 0.0;
  // A trace records a training-mode Dropout node: the backend draws its own
  // mask when the graph runs (docs/fx.md), not the eager generator's.
  if (nng::detail::isTracing())
    return dispatch::call1(OpKind::Dropout,
                           {X, scalar_tensor(P, X.dtype()),
                            scalar_tensor(1.0, DType::Bool)});
  rt::Tensor M = rt::Tensor::empty(X.shape(), X.dtype());
  Generator &G = defaultGenerator();
  double Scale = 1.0 / (1.0 - P);
  visitDType(X.dtype(), [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    T *PM = M.data<T>();
    for (int64_t I = 0, N = M.numel(); I < N; ++I)
      PM[I] = fromDouble<T>(G.uniform() >= P ? Scale : 0.0);
  });
  return X * Tensor(std::move(M));
}

Tensor embedding(const Tensor &Indices, const Tensor &Weight,
                 std::optional<int64_t> PaddingIdx) {
  const char *Op = "embedding";
  detail::requireFloat(Op, "weight", Weight);
  if (!Indices.defined())
    fail(ErrorKind::InvalidArgument, Op, ": indices are undefined");
  if (Indices.dtype() != DType::I64 && Indices.dtype() != DType::I32)
    fail(ErrorKind::InvalidArgument, Op,
         ": expected indices of type i64 or i32, got ", describe(Indices));
  if (Weight.dim() != 2)
    fail(ErrorKind::ShapeMismatch, Op, ": weight ", describe(Weight),
         " must be 2-D [num_embeddings, embedding_dim]");
  int64_t Num = Weight.size(0);
  std::optional<int64_t> Pad = PaddingIdx;
  if (Pad) {
    if (*Pad < -Num || *Pad >= Num)
      fail(ErrorKind::InvalidArgument, Op, ": padding_idx ", *Pad,
           " must be within num_embeddings ", Num);
    if (*Pad < 0)
      *Pad += Num;
  }
  std::vector<int64_t> V;
  if (!nng::detail::isTracing())
    V = Indices.data().toIntVector();
  for (size_t I = 0; I < V.size(); ++I)
    if (V[I] < 0 || V[I] >= Num)
      fail(ErrorKind::InvalidArgument, Op, ": index ", V[I], " (entry ", I,
           " of indices ", describe(Indices),
           ") is out of range for num_embeddings ", Num);
  Tensor Y = dispatch::call1(OpKind::Gather, {Weight, Indices},
                             dispatch::attrs({{"axis", int64_t(0)}}));
  if (Pad && Y.requires_grad()) {
    Tensor Mask = unsqueeze(eq(Indices, scalar_tensor(*Pad, Indices.dtype())),
                            -1);
    Y = where(Mask, Y.detach(), Y);
  }
  return Y;
}

} // namespace nng::F
