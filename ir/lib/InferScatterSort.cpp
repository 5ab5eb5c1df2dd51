//===- InferScatterSort.cpp - Inference for gather/scatter and sorting ----===//
//
// Shape and type inference for Compress, OneHot, TopK, Unique, NonZero,
// ScatterElements, ScatterND, GatherND and ReverseSequence. The outputs of
// Compress, OneHot, TopK, Unique and NonZero depend on input values: exact
// when those are known (always, at run time), unknown extents otherwise.
//
//===----------------------------------------------------------------------===//

#include "InferUtils.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace nng::ir {

using namespace infer;

namespace {

/// The product of T's dims when all are static.
std::optional<int64_t> numelOf(const TensorType &T) {
  return T.hasRank() ? T.staticNumel() : std::nullopt;
}

/// Checks that a scatter's reduction attribute is none, add or mul.
void checkScatterReduction(const InferContext &C) {
  const std::string &R = C.attrString("reduction");
  if (R != "none" && R != "add" && R != "mul")
    C.fail("attribute reduction = '", R, "' must be 'none', 'add' or 'mul'");
}

/// Orders values with NaN after every number and equal to NaN (as the
/// Unique kernel does).
template <typename T> bool lessNaNLast(T A, T B) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(A))
      return false;
    if (std::isnan(B))
      return true;
  }
  return A < B;
}

/// The number of distinct elements of All (row-major values of shape S),
/// or of distinct slices along Axis when HasAxis.
template <typename T>
int64_t countUnique(const std::vector<T> &All, const Shape &S, bool HasAxis,
                    int64_t Axis) {
  std::vector<std::vector<T>> Items;
  if (!HasAxis) {
    for (T E : All)
      Items.push_back({E});
  } else {
    int64_t Outer = 1, Inner = 1, N = S[Axis];
    for (int64_t D = 0; D < static_cast<int64_t>(S.rank()); ++D) {
      if (D < Axis)
        Outer *= S[D];
      if (D > Axis)
        Inner *= S[D];
    }
    Items.assign(N, {});
    for (int64_t O = 0; O < Outer; ++O)
      for (int64_t J = 0; J < N; ++J)
        for (int64_t I = 0; I < Inner; ++I)
          Items[J].push_back(All[(O * N + J) * Inner + I]);
  }
  auto Less = [](const std::vector<T> &X, const std::vector<T> &Y) {
    return std::lexicographical_compare(X.begin(), X.end(), Y.begin(), Y.end(),
                                        lessNaNLast<T>);
  };
  std::sort(Items.begin(), Items.end(), Less);
  int64_t N = 0;
  for (size_t I = 0; I < Items.size(); ++I)
    N += I == 0 || Less(Items[I - 1], Items[I]);
  return N;
}

} // namespace

/// Compress(input, condition, axis?): the slices along axis (or the
/// elements of the flattened input) whose condition entry is true.
void inferCompress(InferContext &C) {
  const TensorType &X = C.inputType(0);
  checkDType(C, 1, DType::Bool, "(the condition)");
  requireRank(C, 1, 1, "(the condition)");
  std::optional<int64_t> Kept;
  if (const Tensor *Cond = C.inputValue(1)) {
    int64_t N = 0, Last = -1;
    for (int64_t I = 0; I < Cond->numel(); ++I)
      if (Cond->getFlat(I) != 0) {
        ++N;
        Last = I;
      }
    Kept = N;
    // A true entry past the end selects nothing that exists.
    std::optional<int64_t> Extent;
    if (C.hasAttr("axis")) {
      if (X.hasRank()) {
        int64_t A = normalizeAxis(C, C.attrInt("axis"), X.rank());
        if (X.dim(A).isStatic())
          Extent = X.dim(A).value();
      }
    } else {
      Extent = numelOf(X);
    }
    if (Extent && Last >= *Extent)
      C.fail("condition entry ", Last, " is true but the input has only ",
             *Extent, C.hasAttr("axis") ? " slices along axis " : " elements",
             C.hasAttr("axis") ? std::to_string(C.attrInt("axis")) : "");
  }
  Dim D = Kept ? Dim(*Kept) : Dim::unknown();
  if (!C.hasAttr("axis")) {
    C.setOutputType(0, TensorType(X.dtype(), std::vector<Dim>{D}));
    return;
  }
  if (!X.hasRank()) {
    C.setOutputType(0, TensorType(X.dtype()));
    return;
  }
  int64_t A = normalizeAxis(C, C.attrInt("axis"), X.rank());
  std::vector<Dim> Out = X.dims();
  Out[A] = D;
  C.setOutputType(0, TensorType(X.dtype(), std::move(Out)));
}

/// OneHot(indices, depth, values): indices' shape with a new axis of
/// extent depth at 'axis'; values' dtype.
void inferOneHot(InferContext &C) {
  const TensorType &Idx = C.inputType(0), &V = C.inputType(2);
  if (C.inputType(0).dtype() == DType::Bool ||
      C.inputType(1).dtype() == DType::Bool)
    C.fail("indices and depth must be numeric, not bool");
  if (auto N = staticLength(C.inputType(1)); N && *N != 1)
    C.fail("depth ", C.inputType(1).toString(),
           " must be a scalar (or have one element)");
  if (auto N = staticLength(V); N && *N != 2)
    C.fail("values ", V.toString(), " must be [off_value, on_value]");
  requireRank(C, 2, 1, "([off_value, on_value])");
  Dim Depth = Dim::unknown();
  if (const Tensor *D = C.inputValue(1)) {
    if (D->numel() != 1)
      C.fail("depth must have one element, got ", D->numel());
    double Val = D->getFlat(0);
    if (!(Val >= 1) || !std::isfinite(Val))
      C.fail("depth ", Val, " must be at least 1");
    Depth = Dim(static_cast<int64_t>(Val));
  }
  if (!Idx.hasRank()) {
    C.setOutputType(0, TensorType(V.dtype()));
    return;
  }
  int64_t A = normalizeAxis(C, C.attrInt("axis"), Idx.rank() + 1);
  std::vector<Dim> Out = Idx.dims();
  Out.insert(Out.begin() + A, Depth);
  C.setOutputType(0, TensorType(V.dtype(), std::move(Out)));
}

/// TopK(X, K): Values (X's dtype) and Indices (i64), X's shape with K
/// entries along axis.
void inferTopK(InferContext &C) {
  const TensorType &X = C.inputType(0);
  checkDType(C, 1, DType::I64, "(K)");
  if (auto N = staticLength(C.inputType(1)); N && *N != 1)
    C.fail("K ", C.inputType(1).toString(), " must have one element");
  requireMinRank(C, 0, 1);
  if (X.dtype() == DType::Bool)
    C.fail("X ", X.toString(), " must be numeric, not bool");
  if (!X.hasRank()) {
    C.setOutputType(0, TensorType(X.dtype()));
    C.setOutputType(1, TensorType(DType::I64));
    return;
  }
  int64_t A = normalizeAxis(C, C.attrInt("axis"), X.rank());
  std::vector<Dim> Out = X.dims();
  Out[A] = Dim::unknown();
  if (auto K = inputInts(C, 1)) {
    if (K->size() != 1)
      C.fail("K ", intsToString(*K), " must have one element");
    int64_t KV = (*K)[0];
    if (KV < 0 || (X.dim(A).isStatic() && KV > X.dim(A).value()))
      C.fail("K = ", KV, " must be in [0, ", X.dim(A).toString(), "] (axis ", A,
             " of X ", X.toString(), ")");
    Out[A] = Dim(KV);
  }
  C.setOutputType(0, TensorType(X.dtype(), Out));
  C.setOutputType(1, TensorType(DType::I64, Out));
}

/// Unique(X): Y (the unique elements, or slices along axis), indices,
/// inverse_indices and counts (i64). Exact when X's value is known.
void inferUnique(InferContext &C) {
  const TensorType &X = C.inputType(0);
  bool HasAxis = C.hasAttr("axis");
  int64_t A = 0;
  if (HasAxis && X.hasRank())
    A = normalizeAxis(C, C.attrInt("axis"), X.rank());
  Dim NumUnique = Dim::unknown();
  if (const Tensor *V = C.inputValue(0)) {
    if (isFloatingPoint(V->dtype()))
      NumUnique = Dim(countUnique(V->toDoubleVector(), V->shape(), HasAxis, A));
    else
      NumUnique = Dim(countUnique(V->toIntVector(), V->shape(), HasAxis, A));
  }
  Dim Inverse = Dim::unknown();
  if (!HasAxis) {
    if (auto N = numelOf(X))
      Inverse = Dim(*N);
    C.setOutputType(0, TensorType(X.dtype(), std::vector<Dim>{NumUnique}));
  } else if (X.hasRank()) {
    Inverse = X.dim(A);
    std::vector<Dim> Out = X.dims();
    Out[A] = NumUnique;
    C.setOutputType(0, TensorType(X.dtype(), std::move(Out)));
  } else {
    C.setOutputType(0, TensorType(X.dtype()));
  }
  for (size_t I = 1; I < C.numOutputs(); ++I)
    C.setOutputType(
        I,
        TensorType(DType::I64, std::vector<Dim>{I == 2 ? Inverse : NumUnique}));
}

/// NonZero(X): i64 [rank, count of non-zero elements] (a scalar counts as
/// rank 1).
void inferNonZero(InferContext &C) {
  const TensorType &X = C.inputType(0);
  Dim Count = Dim::unknown();
  if (const Tensor *V = C.inputValue(0)) {
    int64_t N = 0;
    for (double E : V->toDoubleVector())
      N += E != 0;
    Count = Dim(N);
  }
  Dim Rank = X.hasRank() ? Dim(std::max<int64_t>(X.rank(), 1)) : Dim::unknown();
  C.setOutputType(0, TensorType(DType::I64, std::vector<Dim>{Rank, Count}));
}

/// ScatterElements(data, indices, updates): data's type; indices and
/// updates have one shape and data's rank.
void inferScatterElements(InferContext &C) {
  const TensorType &X = C.inputType(0), &Idx = C.inputType(1),
                   &U = C.inputType(2);
  checkIndexDType(C, 1);
  checkSameDType(C, 0, 2);
  checkScatterReduction(C);
  requireMinRank(C, 0, 1);
  if (!shapesCompatible(Idx, U))
    C.fail("updates ", U.toString(), " must have the shape of indices ",
           Idx.toString());
  if (X.hasRank()) {
    if (Idx.hasRank() && Idx.rank() != X.rank())
      C.fail("indices ", Idx.toString(), " must have the rank of data ",
             X.toString());
    normalizeAxis(C, C.attrInt("axis"), X.rank());
  }
  C.setOutputType(0, X);
}

/// ScatterND(data, indices, updates): data's type; updates is
/// indices.shape[:-1] + data.shape[indices.shape[-1]:].
void inferScatterND(InferContext &C) {
  const TensorType &X = C.inputType(0), &Idx = C.inputType(1),
                   &U = C.inputType(2);
  checkDType(C, 1, DType::I64, "(the indices)");
  checkSameDType(C, 0, 2);
  checkScatterReduction(C);
  requireMinRank(C, 0, 1);
  requireMinRank(C, 1, 1);
  if (X.hasRank() && Idx.hasRank() && U.hasRank() &&
      Idx.dim(Idx.rank() - 1).isStatic()) {
    int64_t K = Idx.dim(Idx.rank() - 1).value();
    if (K < 1 || K > X.rank())
      C.fail("the last axis of indices ", Idx.toString(), " must be in [1, ",
             X.rank(), "] (the rank of data ", X.toString(), ")");
    std::vector<Dim> Want(Idx.dims().begin(), Idx.dims().end() - 1);
    Want.insert(Want.end(), X.dims().begin() + K, X.dims().end());
    bool Same = static_cast<int64_t>(Want.size()) == U.rank();
    for (int64_t I = 0; Same && I < U.rank(); ++I)
      Same = dimsCompatible(Want[I], U.dim(I));
    if (!Same)
      C.fail("updates ", U.toString(), " must have shape ",
             TensorType(U.dtype(), Want).toString(), " for data ", X.toString(),
             " and indices ", Idx.toString());
  }
  C.setOutputType(0, X);
}

/// GatherND(data, indices, batch_dims = b): data.shape[:b] +
/// indices.shape[b:-1] + data.shape[b + indices.shape[-1]:].
void inferGatherND(InferContext &C) {
  const TensorType &X = C.inputType(0), &Idx = C.inputType(1);
  checkDType(C, 1, DType::I64, "(the indices)");
  requireMinRank(C, 0, 1);
  requireMinRank(C, 1, 1);
  int64_t B = C.attrInt("batch_dims");
  if (B < 0)
    C.fail("attribute batch_dims = ", B, " must be non-negative");
  if (!X.hasRank() || !Idx.hasRank() || !Idx.dim(Idx.rank() - 1).isStatic()) {
    C.setOutputType(0, TensorType(X.dtype()));
    return;
  }
  int64_t Q = Idx.rank(), R = X.rank();
  int64_t K = Idx.dim(Q - 1).value();
  if (B >= std::min(Q, R))
    C.fail("batch_dims = ", B, " must be less than the ranks of data ",
           X.toString(), " and indices ", Idx.toString());
  if (K < 1 || K > R - B)
    C.fail("the last axis of indices ", Idx.toString(), " must be in [1, ",
           R - B, "] (data ", X.toString(), " with batch_dims ", B, ")");
  std::vector<Dim> Out;
  for (int64_t I = 0; I < B; ++I) {
    if (!dimsCompatible(X.dim(I), Idx.dim(I)))
      C.fail("batch axis ", I, " differs: data ", X.toString(), ", indices ",
             Idx.toString());
    Out.push_back(X.dim(I).isStatic() ? X.dim(I) : Idx.dim(I));
  }
  Out.insert(Out.end(), Idx.dims().begin() + B, Idx.dims().end() - 1);
  Out.insert(Out.end(), X.dims().begin() + B + K, X.dims().end());
  C.setOutputType(0, TensorType(X.dtype(), std::move(Out)));
}

/// ReverseSequence(input, sequence_lens): input's type; sequence_lens has
/// one entry per batch entry.
void inferReverseSequence(InferContext &C) {
  const TensorType &X = C.inputType(0), &L = C.inputType(1);
  checkDType(C, 1, DType::I64, "(sequence_lens)");
  requireMinRank(C, 0, 2);
  requireRank(C, 1, 1, "(sequence_lens)");
  int64_t BA = C.attrInt("batch_axis"), TA = C.attrInt("time_axis");
  if ((BA != 0 && BA != 1) || (TA != 0 && TA != 1) || BA == TA)
    C.fail("batch_axis = ", BA, " and time_axis = ", TA,
           " must be 0 and 1 or 1 and 0");
  if (X.hasRank() && L.hasRank() && !dimsCompatible(X.dim(BA), L.dim(0)))
    C.fail("sequence_lens ", L.toString(),
           " must have one entry per batch "
           "entry (axis ",
           BA, " of input ", X.toString(), ")");
  C.setOutputType(0, X);
}

} // namespace nng::ir
