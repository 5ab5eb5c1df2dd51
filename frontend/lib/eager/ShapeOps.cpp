//===- ShapeOps.cpp - reshape, transpose, squeeze, expand, cat, split ------===//
//
// The shape operations of TensorOps.h on the ONNX shape ops (Reshape,
// Transpose, Squeeze/Unsqueeze with axes inputs, Expand, Concat, Split).
// Sizes are checked here first so errors name the PyTorch-level operation
// and the shapes involved. The ops return fresh tensors (the dispatcher's
// results never alias), so view() behaves like reshape(): it shares no
// storage with its input.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/detail/EagerInternal.h"
#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <numeric>

namespace nng {

using detail::describe;
using detail::normDim;
using ir::OpKind;

namespace {

void checkDefined(const char *Op, const Tensor &A) {
  if (!A.defined())
    fail(ErrorKind::InvalidArgument, Op, ": the input is undefined");
}

/// Resolves one -1 in Sizes against A's element count.
std::vector<int64_t> inferSizes(const char *Op, const Tensor &A,
                                const std::vector<int64_t> &Sizes) {
  std::vector<int64_t> R = Sizes;
  int64_t Known = 1, Infer = -1;
  for (size_t I = 0; I < R.size(); ++I) {
    if (R[I] == -1) {
      if (Infer >= 0)
        fail(ErrorKind::InvalidArgument, Op, ": only one dimension can be "
                                             "inferred in shape ",
             Shape(Sizes).toString());
      Infer = static_cast<int64_t>(I);
    } else if (R[I] < 0) {
      fail(ErrorKind::InvalidArgument, Op, ": invalid shape dimension ", R[I],
           " in ", Shape(Sizes).toString());
    } else {
      Known *= R[I];
    }
  }
  if (Infer >= 0) {
    if (Known == 0 || A.numel() % Known != 0)
      fail(ErrorKind::ShapeMismatch, Op, ": shape ", Shape(Sizes).toString(),
           " is invalid for input ", describe(A), " of ", A.numel(),
           " elements");
    R[Infer] = A.numel() / Known;
  } else if (Known != A.numel()) {
    fail(ErrorKind::ShapeMismatch, Op, ": shape ", Shape(Sizes).toString(),
         " is invalid for input ", describe(A), " of ", A.numel(),
         " elements");
  }
  return R;
}

/// True when A is a proxy with a dynamic (symbolic or unknown) dim.
bool hasDynamicDim(const Tensor &A) {
  if (!A.is_proxy())
    return false;
  for (const SymInt &S : A.sym_sizes())
    if (S.isSymbolic())
      return true;
  return false;
}

Tensor reshapeImpl(const char *Op, const Tensor &A, const SymIntList &Sizes) {
  checkDefined(Op, A);
  // The checks run on the example extents of symbolic sizes (a trace's
  // examples are consistent with each other).
  std::vector<int64_t> Given = Sizes.examples();
  std::vector<int64_t> S = inferSizes(Op, A, Given);
  ir::AttrMap Attrs = dispatch::attrs({{"allowzero", int64_t(1)}});
  if (Sizes.isSymbolic())
    return dispatch::call1(OpKind::Reshape,
                           {A, detail::symShapeTensor(Sizes)}, Attrs);
  if (hasDynamicDim(A)) // Keep the -1: the element count is dynamic.
    return dispatch::call1(OpKind::Reshape, {A, detail::i64Tensor(Given)},
                           Attrs);
  if (S == A.shape().dims())
    return A;
  return dispatch::call1(OpKind::Reshape, {A, detail::i64Tensor(S)}, Attrs);
}

} // namespace

namespace detail {

Tensor squeezeDims(const Tensor &T, const std::vector<int64_t> &Axes) {
  if (Axes.empty())
    return T;
  return dispatch::call1(OpKind::Squeeze, {T, i64Tensor(Axes)});
}

Tensor unsqueezeDims(const Tensor &T, const std::vector<int64_t> &Axes) {
  if (Axes.empty())
    return T;
  return dispatch::call1(OpKind::Unsqueeze, {T, i64Tensor(Axes)});
}

} // namespace detail

Tensor reshape(const Tensor &A, const SymIntList &Sizes) {
  return reshapeImpl("reshape", A, Sizes);
}

Tensor view(const Tensor &A, const SymIntList &Sizes) {
  return reshapeImpl("view", A, Sizes);
}

Tensor flatten(const Tensor &A, int64_t StartDim, int64_t EndDim) {
  checkDefined("flatten", A);
  if (A.dim() == 0)
    return reshape(A, {1});
  int64_t S = normDim(StartDim, A.dim(), "flatten");
  int64_t E = normDim(EndDim, A.dim(), "flatten");
  if (S > E)
    fail(ErrorKind::InvalidArgument,
         "flatten: start_dim cannot come after end_dim (", StartDim, " > ",
         EndDim, " for ", describe(A), ")");
  std::vector<SymInt> Sizes;
  for (int64_t I = 0; I < S; ++I)
    Sizes.push_back(A.size(I));
  // A dynamic dim in the flattened range: -1 (one Reshape, no arithmetic).
  SymInt P = 1;
  bool Dynamic = false;
  for (int64_t I = S; I <= E; ++I) {
    SymInt D = A.size(I);
    Dynamic |= D.isSymbolic();
    P = P * D.example();
  }
  Sizes.push_back(Dynamic ? SymInt(-1) : P);
  for (int64_t I = E + 1; I < A.dim(); ++I)
    Sizes.push_back(A.size(I));
  return reshape(A, std::move(Sizes));
}

Tensor permute(const Tensor &A, const std::vector<int64_t> &Dims) {
  checkDefined("permute", A);
  if (static_cast<int64_t>(Dims.size()) != A.dim())
    fail(ErrorKind::InvalidArgument, "permute: number of dims in ",
         Shape(Dims).toString(), " (", Dims.size(),
         ") does not match the input ", describe(A));
  std::vector<int64_t> P;
  std::vector<bool> Seen(Dims.size(), false);
  for (int64_t D : Dims) {
    int64_t N = normDim(D, A.dim(), "permute");
    if (Seen[N])
      fail(ErrorKind::InvalidArgument, "permute: dim ", N, " repeats in ",
           Shape(Dims).toString());
    Seen[N] = true;
    P.push_back(N);
  }
  bool IsIdentity = true;
  for (size_t I = 0; I < P.size(); ++I)
    IsIdentity &= P[I] == static_cast<int64_t>(I);
  if (IsIdentity)
    return A;
  return dispatch::call1(OpKind::Transpose, {A}, dispatch::attrs({{"perm", P}}));
}

Tensor transpose(const Tensor &A, int64_t D0, int64_t D1) {
  checkDefined("transpose", A);
  if (A.dim() == 0)
    return A;
  int64_t X = normDim(D0, A.dim(), "transpose");
  int64_t Y = normDim(D1, A.dim(), "transpose");
  std::vector<int64_t> P(A.dim());
  std::iota(P.begin(), P.end(), 0);
  std::swap(P[X], P[Y]);
  return permute(A, P);
}

Tensor unsqueeze(const Tensor &A, int64_t Dim) {
  checkDefined("unsqueeze", A);
  int64_t D = normDim(Dim, A.dim() + 1, "unsqueeze");
  return detail::unsqueezeDims(A, {D});
}

Tensor squeeze(const Tensor &A, std::optional<int64_t> Dim) {
  checkDefined("squeeze", A);
  if (A.dim() == 0)
    return A;
  std::vector<int64_t> Axes;
  if (Dim) {
    int64_t D = normDim(*Dim, A.dim(), "squeeze");
    if (A.size(D) == 1)
      Axes.push_back(D);
  } else {
    for (int64_t D = 0; D < A.dim(); ++D)
      if (A.size(D) == 1)
        Axes.push_back(D);
  }
  return detail::squeezeDims(A, Axes);
}

Tensor expand(const Tensor &A, const SymIntList &Sizes) {
  checkDefined("expand", A);
  int64_t R = static_cast<int64_t>(Sizes.size());
  std::vector<int64_t> Given = Sizes.examples();
  if (R < A.dim())
    fail(ErrorKind::ShapeMismatch, "expand: the number of sizes provided (",
         R, ") must be greater or equal to the number of dimensions of ",
         describe(A));
  std::vector<int64_t> Target(Given);
  std::vector<SymInt> Sym = Sizes.values();
  int64_t Lead = R - A.dim();
  for (int64_t I = 0; I < R; ++I) {
    int64_t Have = 1;
    if (I >= Lead)
      Have = A.size(I - Lead).example();
    if (Target[I] == -1) {
      if (I < Lead)
        fail(ErrorKind::InvalidArgument, "expand: -1 is not allowed in a "
                                         "leading, non-existing dimension of ",
             Shape(Given).toString());
      Target[I] = Have;
      // ONNX Expand broadcasts: 1 keeps the input's (maybe dynamic) extent.
      Sym[I] = 1;
    }
    if (Have != Target[I] && Have != 1)
      fail(ErrorKind::ShapeMismatch, "expand: the expanded size ", Target[I],
           " must match the existing size ", Have, " at dimension ", I,
           " (input ", describe(A), ", target ", Shape(Given).toString(), ")");
  }
  if (Sizes.isSymbolic())
    return dispatch::call1(OpKind::Expand,
                           {A, detail::symShapeTensor(std::move(Sym))});
  if (hasDynamicDim(A)) {
    std::vector<int64_t> Ex;
    for (const SymInt &S : Sym)
      Ex.push_back(S.example());
    return dispatch::call1(OpKind::Expand, {A, detail::i64Tensor(Ex)});
  }
  if (Target == A.shape().dims())
    return A;
  return dispatch::call1(OpKind::Expand, {A, detail::i64Tensor(Target)});
}

Tensor broadcast_to(const Tensor &A, const SymIntList &Sizes) {
  return expand(A, Sizes);
}

Tensor cat(const std::vector<Tensor> &Ts, int64_t Dim) {
  if (Ts.empty())
    fail(ErrorKind::InvalidArgument, "cat: expected a non-empty list of "
                                     "tensors");
  for (const Tensor &T : Ts)
    checkDefined("cat", T);
  const Tensor &First = Ts[0];
  if (First.dim() == 0)
    fail(ErrorKind::InvalidArgument,
         "cat: zero-dimensional tensor (at position 0) cannot be "
         "concatenated");
  int64_t D = normDim(Dim, First.dim(), "cat");
  DType T = First.dtype();
  for (size_t I = 1; I < Ts.size(); ++I) {
    const Tensor &X = Ts[I];
    T = promote_types(T, X.dtype());
    bool Ok = X.dim() == First.dim();
    for (int64_t A = 0; Ok && A < X.dim(); ++A)
      Ok = A == D || X.size(A) == First.size(A);
    if (!Ok)
      fail(ErrorKind::ShapeMismatch, "cat: tensor 0 ", describe(First),
           " and tensor ", I, " ", describe(X),
           " differ outside dimension ", D);
  }
  if (Ts.size() == 1)
    return Ts[0].to(T);
  std::vector<Tensor> In;
  for (const Tensor &X : Ts)
    In.push_back(X.to(T));
  return dispatch::call1(OpKind::Concat, In, dispatch::attrs({{"axis", D}}));
}

Tensor stack(const std::vector<Tensor> &Ts, int64_t Dim) {
  if (Ts.empty())
    fail(ErrorKind::InvalidArgument, "stack: expected a non-empty list of "
                                     "tensors");
  for (const Tensor &T : Ts)
    checkDefined("stack", T);
  int64_t D = normDim(Dim, Ts[0].dim() + 1, "stack");
  for (size_t I = 1; I < Ts.size(); ++I)
    if (Ts[I].shape() != Ts[0].shape())
      fail(ErrorKind::ShapeMismatch,
           "stack: expects each tensor to be equal size, but got ",
           describe(Ts[0]), " at entry 0 and ", describe(Ts[I]), " at entry ",
           I);
  std::vector<Tensor> U;
  for (const Tensor &T : Ts)
    U.push_back(unsqueeze(T, D));
  return cat(U, D);
}

std::vector<Tensor> split(const Tensor &A, const std::vector<int64_t> &Sizes,
                          int64_t Dim) {
  checkDefined("split", A);
  if (A.dim() == 0)
    fail(ErrorKind::InvalidArgument, "split: cannot split a 0-d tensor");
  int64_t D = normDim(Dim, A.dim(), "split");
  int64_t Total = 0;
  for (int64_t S : Sizes) {
    if (S < 0)
      fail(ErrorKind::InvalidArgument, "split: negative size ", S, " in ",
           Shape(Sizes).toString());
    Total += S;
  }
  if (Total != A.size(D))
    fail(ErrorKind::ShapeMismatch, "split: sizes ", Shape(Sizes).toString(),
         " sum to ", Total, " but dimension ", D, " of ", describe(A),
         " has ", A.size(D));
  if (Sizes.size() == 1)
    return {A};
  return dispatch::call(OpKind::Split, {A, detail::i64Tensor(Sizes)},
                        dispatch::attrs({{"axis", D}}),
                        static_cast<unsigned>(Sizes.size()));
}

std::vector<Tensor> split(const Tensor &A, int64_t SplitSize, int64_t Dim) {
  checkDefined("split", A);
  if (A.dim() == 0)
    fail(ErrorKind::InvalidArgument, "split: cannot split a 0-d tensor");
  int64_t D = normDim(Dim, A.dim(), "split");
  int64_t N = A.size(D);
  if (SplitSize <= 0 && !(SplitSize == 0 && N == 0))
    fail(ErrorKind::InvalidArgument, "split: split_size must be positive, "
                                     "got ",
         SplitSize);
  std::vector<int64_t> Sizes;
  for (int64_t Left = N; Left > 0; Left -= SplitSize)
    Sizes.push_back(std::min(SplitSize, Left));
  if (Sizes.empty())
    Sizes.push_back(0);
  return split(A, Sizes, D);
}

std::vector<Tensor> chunk(const Tensor &A, int64_t Chunks, int64_t Dim) {
  checkDefined("chunk", A);
  if (Chunks <= 0)
    fail(ErrorKind::InvalidArgument, "chunk: chunks must be positive, got ",
         Chunks);
  if (A.dim() == 0)
    fail(ErrorKind::InvalidArgument, "chunk: cannot chunk a 0-d tensor");
  int64_t D = normDim(Dim, A.dim(), "chunk");
  int64_t N = A.size(D);
  int64_t Size = (N + Chunks - 1) / Chunks;
  return split(A, std::max<int64_t>(Size, N == 0 ? 0 : 1), D);
}

std::vector<Tensor> unbind(const Tensor &A, int64_t Dim) {
  checkDefined("unbind", A);
  if (A.dim() == 0)
    fail(ErrorKind::InvalidArgument, "unbind: cannot unbind a 0-d tensor");
  int64_t D = normDim(Dim, A.dim(), "unbind");
  std::vector<Tensor> R;
  for (Tensor &P : split(A, 1, D))
    R.push_back(detail::squeezeDims(P, {D}));
  return R;
}

} // namespace nng
