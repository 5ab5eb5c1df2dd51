//===- Indexing.cpp - slice, select, index_select, gather, tril, one_hot ---===//
//
// Indexing operations of TensorOps.h: Python-style slicing (bounds clamped,
// positive steps) on Slice, select as a slice plus Squeeze, index_select on
// Gather, torch.gather on GatherElements, tril/triu on Trilu and one_hot on
// OneHot. Indices are range-checked here so errors say which index, which
// dimension and which shape.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/detail/EagerInternal.h"
#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>

namespace nng {

using detail::describe;
using detail::normDim;
using ir::OpKind;

namespace {

void checkDefined(const char *Op, const Tensor &A) {
  if (!A.defined())
    fail(ErrorKind::InvalidArgument, Op, ": an operand is undefined");
}

void checkIndexTensor(const char *Op, const Tensor &Index) {
  checkDefined(Op, Index);
  if (Index.dtype() != DType::I64 && Index.dtype() != DType::I32)
    fail(ErrorKind::InvalidArgument, Op,
         ": expected an integer (i64 or i32) index tensor, got ",
         describe(Index));
}

/// Every index in [-N, N); the error names the first bad one.
void checkRange(const char *Op, const Tensor &Index, int64_t N, int64_t Dim,
                const Tensor &A) {
  if (detail::isTracing())
    return;
  std::vector<int64_t> V = Index.data().toIntVector();
  for (size_t I = 0; I < V.size(); ++I)
    if (V[I] < -N || V[I] >= N)
      fail(ErrorKind::InvalidArgument, Op, ": index ", V[I], " (entry ", I,
           " of the index tensor) is out of bounds for dimension ", Dim,
           " with size ", N, " of ", describe(A));
}

} // namespace

Tensor slice(const Tensor &A, int64_t Dim, int64_t Start, int64_t End,
             int64_t Step) {
  checkDefined("slice", A);
  if (A.dim() == 0)
    fail(ErrorKind::InvalidArgument, "slice: cannot slice a 0-d tensor");
  if (Step <= 0)
    fail(ErrorKind::InvalidArgument, "slice: step must be positive, got ",
         Step);
  int64_t D = normDim(Dim, A.dim(), "slice");
  int64_t N = A.size(D);
  if (Start < 0)
    Start += N;
  if (End < 0)
    End += N;
  Start = std::clamp<int64_t>(Start, 0, N);
  End = std::clamp<int64_t>(End, Start, N);
  if (Start == 0 && End == N && Step == 1)
    return A;
  return dispatch::call1(OpKind::Slice,
                         {A, detail::i64Tensor({Start}),
                          detail::i64Tensor({End}), detail::i64Tensor({D}),
                          detail::i64Tensor({Step})});
}

Tensor narrow(const Tensor &A, int64_t Dim, int64_t Start, int64_t Length) {
  checkDefined("narrow", A);
  if (A.dim() == 0)
    fail(ErrorKind::InvalidArgument, "narrow: cannot narrow a 0-d tensor");
  int64_t D = normDim(Dim, A.dim(), "narrow");
  int64_t N = A.size(D);
  if (Start < -N || Start > N)
    fail(ErrorKind::InvalidArgument, "narrow: start ", Start,
         " is out of range for dimension ", D, " of ", describe(A));
  if (Start < 0)
    Start += N;
  if (Length < 0 || Start + Length > N)
    fail(ErrorKind::InvalidArgument, "narrow: start (", Start,
         ") + length (", Length, ") exceeds dimension size (", N, ") of ",
         describe(A));
  return slice(A, D, Start, Start + Length);
}

Tensor select(const Tensor &A, int64_t Dim, int64_t Index) {
  checkDefined("select", A);
  if (A.dim() == 0)
    fail(ErrorKind::InvalidArgument,
         "select: cannot index a 0-d tensor ", describe(A));
  int64_t D = normDim(Dim, A.dim(), "select");
  int64_t N = A.size(D);
  if (Index < -N || Index >= N)
    fail(ErrorKind::InvalidArgument, "select: index ", Index,
         " is out of range for dimension ", D, " with size ", N, " of ",
         describe(A));
  if (Index < 0)
    Index += N;
  Tensor S = N == 1 ? A : slice(A, D, Index, Index + 1);
  return detail::squeezeDims(S, {D});
}

Tensor index_select(const Tensor &A, int64_t Dim, const Tensor &Index) {
  checkDefined("index_select", A);
  checkIndexTensor("index_select", Index);
  if (Index.dim() > 1)
    fail(ErrorKind::InvalidArgument,
         "index_select: the index must be 0-d or 1-d, got ", describe(Index));
  if (A.dim() == 0)
    fail(ErrorKind::InvalidArgument, "index_select: cannot index a 0-d "
                                     "tensor");
  int64_t D = normDim(Dim, A.dim(), "index_select");
  checkRange("index_select", Index, A.size(D), D, A);
  Tensor I = Index.dim() == 0 ? reshape(Index, {1}) : Index;
  return dispatch::call1(OpKind::Gather, {A, I},
                         dispatch::attrs({{"axis", D}}));
}

Tensor gather(const Tensor &A, int64_t Dim, const Tensor &Index) {
  checkDefined("gather", A);
  checkIndexTensor("gather", Index);
  if (A.dim() == 0 && Index.dim() == 0)
    return A.clone();
  if (Index.dim() != A.dim())
    fail(ErrorKind::ShapeMismatch,
         "gather: index ", describe(Index), " and input ", describe(A),
         " must have the same number of dimensions");
  int64_t D = normDim(Dim, A.dim(), "gather");
  for (int64_t I = 0; I < A.dim(); ++I)
    if (I != D && Index.size(I) > A.size(I))
      fail(ErrorKind::ShapeMismatch, "gather: size of index ",
           describe(Index), " must not exceed the input ", describe(A),
           " in dimension ", I, " (dimension ", D, " is gathered)");
  checkRange("gather", Index, A.size(D), D, A);
  // GatherElements needs index extents equal the data's off the gather
  // axis; PyTorch allows smaller ones, so narrow the data first.
  Tensor Src = A;
  for (int64_t I = 0; I < A.dim(); ++I)
    if (I != D && Index.size(I) < A.size(I))
      Src = slice(Src, I, 0, Index.size(I));
  return dispatch::call1(OpKind::GatherElements, {Src, Index},
                         dispatch::attrs({{"axis", D}}));
}

static Tensor trilu(const char *Op, const Tensor &A, int64_t Diagonal,
                    bool Upper) {
  checkDefined(Op, A);
  if (A.dim() < 2)
    fail(ErrorKind::InvalidArgument, Op,
         ": input tensor must have at least 2 dimensions, got ", describe(A));
  return dispatch::call1(OpKind::Trilu, {A, scalar_tensor(Diagonal, DType::I64)},
                         dispatch::attrs({{"upper", Upper ? 1 : 0}}));
}

Tensor tril(const Tensor &A, int64_t Diagonal) {
  return trilu("tril", A, Diagonal, false);
}

Tensor triu(const Tensor &A, int64_t Diagonal) {
  return trilu("triu", A, Diagonal, true);
}

Tensor one_hot(const Tensor &Index, int64_t NumClasses) {
  checkIndexTensor("one_hot", Index);
  if (detail::isTracing() && NumClasses < 0)
    fail(ErrorKind::Unsupported, "one_hot: num_classes must be given when "
                                 "tracing (the values are not known)");
  std::vector<int64_t> V;
  if (!detail::isTracing())
    V = Index.data().toIntVector();
  int64_t MaxV = -1;
  for (int64_t X : V) {
    if (X < 0)
      fail(ErrorKind::InvalidArgument, "one_hot: class values must be "
                                       "non-negative, got ",
           X);
    MaxV = std::max(MaxV, X);
  }
  if (NumClasses < 0)
    NumClasses = MaxV + 1;
  if (MaxV >= NumClasses)
    fail(ErrorKind::InvalidArgument, "one_hot: class value ", MaxV,
         " is not smaller than num_classes ", NumClasses);
  if (NumClasses == 0)
    fail(ErrorKind::InvalidArgument, "one_hot: num_classes must be positive "
                                     "for an empty index tensor");
  return dispatch::call1(OpKind::OneHot,
                         {Index, scalar_tensor(NumClasses, DType::I64),
                          detail::i64Tensor({0, 1})},
                         dispatch::attrs({{"axis", int64_t(-1)}}));
}

} // namespace nng
