//===- InferShapeOps.cpp - Inference for reshaping ops -------------------===//
//
// Shape and type inference for the ops that rearrange a tensor's shape:
// Flatten, Reshape (0 copies, -1 inferred, allowzero), Transpose, Squeeze,
// Unsqueeze, Expand, Tile and Pad. Where a shape depends on an input's value
// (Reshape's shape, Squeeze/Unsqueeze axes, Expand's shape, Tile's repeats,
// Pad's pads) the result is exact when the value is known (a constant at
// compile time, every input at run time) and has unknown dims otherwise.
//
//===----------------------------------------------------------------------===//

#include "InferUtils.h"
#include "nngraph/ir/ViewGeometry.h"

#include <algorithm>

namespace nng::ir {

using namespace infer;

/// Flatten: [d0 * ... * d(axis-1), d(axis) * ... * d(r-1)], axis in [-r, r].
void inferFlatten(InferContext &C) {
  const TensorType &X = C.inputType(0);
  if (!X.hasRank()) {
    C.setOutputType(0, unknownDims(X.dtype(), 2));
    return;
  }
  int64_t R = X.rank(), Axis = C.attrInt("axis");
  if (Axis < -R || Axis > R)
    C.fail("axis ", Axis, " is out of range for rank ", R, " (valid: [", -R,
           ", ", R, "])");
  if (Axis < 0)
    Axis += R;
  std::vector<Dim> Out{productOf(X.dims(), 0, Axis).toDim(),
                       productOf(X.dims(), Axis, R).toDim()};
  C.setOutputType(0, TensorType(X.dtype(), std::move(Out)));
}

/// The extent a Reshape's -1 stands for: In / Known, kept symbolic where
/// the symbols cancel. Fails when static extents cannot divide.
static Dim inferMinusOne(const InferContext &C, const TensorType &X,
                         const SymProduct &In, const SymProduct &Known,
                         const std::vector<int64_t> &Target) {
  if (Known.Coeff == 0)
    C.fail("cannot infer the -1 in shape ", intsToString(Target), " for X ",
           X.toString(), ": the other extents multiply to 0");
  if (In.Coeff == 0)
    return Dim(0);
  if (In.Unknown || Known.Unknown)
    return Dim::unknown();
  std::vector<std::string> Rest;
  std::set_difference(In.Syms.begin(), In.Syms.end(), Known.Syms.begin(),
                      Known.Syms.end(), std::back_inserter(Rest));
  if (Rest.size() + Known.Syms.size() != In.Syms.size())
    return Dim::unknown(); // A symbol of the target is not in X.
  if (In.Coeff % Known.Coeff != 0) {
    if (Rest.empty())
      C.fail("cannot reshape X ", X.toString(), " (", In.Coeff,
             " elements) to ", intsToString(Target), ": ", In.Coeff,
             " is not divisible by ", Known.Coeff);
    return Dim::unknown();
  }
  int64_t Q = In.Coeff / Known.Coeff;
  if (Rest.empty())
    return Dim(Q);
  if (Rest.size() == 1 && Q == 1)
    return Dim::symbol(Rest[0]);
  return Dim::unknown();
}

/// Reshape(data, shape): 0 copies data's extent at that position (unless
/// allowzero), one -1 is inferred from the element count.
void inferReshape(InferContext &C) {
  const TensorType &X = C.inputType(0);
  checkDType(C, 1, DType::I64, "(the target shape)");
  requireRank(C, 1, 1, "(the target shape)");
  bool AllowZero = C.attrInt("allowzero") != 0;
  auto Target = inputInts(C, 1);
  if (!Target) {
    auto Len = staticLength(C.inputType(1));
    C.setOutputType(0,
                    Len ? unknownDims(X.dtype(), *Len) : TensorType(X.dtype()));
    return;
  }
  std::vector<Dim> Out;
  int64_t MinusOne = -1;
  bool HasZero = false;
  for (size_t I = 0; I < Target->size(); ++I) {
    int64_t V = (*Target)[I];
    if (V == -1) {
      if (MinusOne >= 0)
        C.fail("shape ", intsToString(*Target), " has more than one -1");
      MinusOne = static_cast<int64_t>(I);
      Out.push_back(Dim::unknown());
    } else if (V < -1) {
      C.fail("shape ", intsToString(*Target), " has invalid extent ", V);
    } else if (V == 0 && !AllowZero) {
      if (X.hasRank() && static_cast<int64_t>(I) >= X.rank())
        C.fail("shape ", intsToString(*Target), " has 0 (copy) at position ", I,
               " but X ", X.toString(), " has rank ", X.rank());
      Out.push_back(X.hasRank() ? X.dim(I) : Dim::unknown());
    } else {
      HasZero |= V == 0;
      Out.push_back(Dim(V));
    }
  }
  if (AllowZero && HasZero && MinusOne >= 0)
    C.fail("shape ", intsToString(*Target),
           " has both 0 and -1, which allowzero=1 forbids");
  if (X.hasRank()) {
    SymProduct In = productOf(X.dims(), 0, X.rank()), Known;
    for (size_t I = 0; I < Out.size(); ++I)
      if (static_cast<int64_t>(I) != MinusOne)
        Known.mul(Out[I]);
    if (MinusOne >= 0)
      Out[MinusOne] = inferMinusOne(C, X, In, Known, *Target);
    else if (!In.Unknown && !Known.Unknown && In.Syms == Known.Syms &&
             In.Coeff != Known.Coeff)
      C.fail("cannot reshape X ", X.toString(), " to ", intsToString(*Target),
             ": the element counts differ");
  }
  C.setOutputType(0, TensorType(X.dtype(), std::move(Out)));
}

/// Transpose: dims permuted by perm (reversed when perm is absent).
void inferTranspose(InferContext &C) {
  const TensorType &X = C.inputType(0);
  std::vector<int64_t> Perm = C.attrInts("perm");
  if (!X.hasRank()) {
    C.setOutputType(0, Perm.empty() ? X : unknownDims(X.dtype(), Perm.size()));
    return;
  }
  int64_t R = X.rank();
  if (!C.hasAttr("perm"))
    for (int64_t I = R - 1; I >= 0; --I)
      Perm.push_back(I);
  if (static_cast<int64_t>(Perm.size()) != R)
    C.fail("perm ", intsToString(Perm), " has ", Perm.size(), " entries but X ",
           X.toString(), " has rank ", R);
  if (!transposePerm(Perm, R))
    C.fail("perm ", intsToString(Perm), " is not a permutation of [0, ", R,
           ")");
  std::vector<Dim> Out;
  for (int64_t P : Perm)
    Out.push_back(X.dim(P));
  C.setOutputType(0, TensorType(X.dtype(), std::move(Out)));
}

/// Squeeze(data, axes?): removes the listed size-1 axes, or every size-1
/// axis when axes is absent (unknown rank when that depends on unknown
/// dims).
void inferSqueeze(InferContext &C) {
  const TensorType &X = C.inputType(0);
  if (C.hasInput(1))
    checkDType(C, 1, DType::I64, "(the axes)");
  auto Axes = inputInts(C, 1);
  if (!X.hasRank()) {
    C.setOutputType(0, TensorType(X.dtype()));
    return;
  }
  if (C.hasInput(1) && !Axes) {
    auto Len = staticLength(C.inputType(1));
    C.setOutputType(0, Len && *Len <= X.rank()
                           ? unknownDims(X.dtype(), X.rank() - *Len)
                           : TensorType(X.dtype()));
    return;
  }
  std::vector<bool> Drop(X.rank());
  if (Axes) {
    for (int64_t A : normalizeAxes(C, *Axes, X.rank())) {
      const Dim &D = X.dim(A);
      if (D.isStatic() && D.value() != 1)
        C.fail("cannot squeeze axis ", A, " of X ", X.toString(),
               ": its extent is ", D.value(), ", not 1");
      Drop[A] = true;
    }
  } else {
    for (int64_t I = 0; I < X.rank(); ++I) {
      const Dim &D = X.dim(I);
      if (!D.isStatic()) {
        C.setOutputType(0, TensorType(X.dtype()));
        return;
      }
      Drop[I] = D.value() == 1;
    }
  }
  std::vector<Dim> Out;
  for (int64_t I = 0; I < X.rank(); ++I)
    if (!Drop[I])
      Out.push_back(X.dim(I));
  C.setOutputType(0, TensorType(X.dtype(), std::move(Out)));
}

/// Unsqueeze(data, axes): inserts size-1 axes at the listed positions of
/// the output (axes in [-r', r') where r' = rank + len(axes)).
void inferUnsqueeze(InferContext &C) {
  const TensorType &X = C.inputType(0);
  checkDType(C, 1, DType::I64, "(the axes)");
  auto Axes = inputInts(C, 1);
  if (!X.hasRank()) {
    C.setOutputType(0, TensorType(X.dtype()));
    return;
  }
  if (!Axes) {
    auto Len = staticLength(C.inputType(1));
    C.setOutputType(0, Len ? unknownDims(X.dtype(), X.rank() + *Len)
                           : TensorType(X.dtype()));
    return;
  }
  int64_t R = X.rank() + static_cast<int64_t>(Axes->size());
  std::vector<bool> Insert(R);
  for (int64_t A : normalizeAxes(C, *Axes, R))
    Insert[A] = true;
  std::vector<Dim> Out;
  int64_t Next = 0;
  for (int64_t I = 0; I < R; ++I)
    Out.push_back(Insert[I] ? Dim(1) : X.dim(Next++));
  C.setOutputType(0, TensorType(X.dtype(), std::move(Out)));
}

/// Expand(input, shape): input broadcast with shape (numpy rules; a 1 in
/// shape keeps the input's extent).
void inferExpand(InferContext &C) {
  const TensorType &X = C.inputType(0);
  checkDType(C, 1, DType::I64, "(the target shape)");
  requireRank(C, 1, 1, "(the target shape)");
  auto Shape = inputInts(C, 1);
  if (!Shape) {
    auto Len = staticLength(C.inputType(1));
    C.setOutputType(0, Len && X.hasRank()
                           ? broadcastTypes(C, X, unknownDims(X.dtype(), *Len))
                           : TensorType(X.dtype()));
    return;
  }
  std::vector<Dim> Dims;
  for (int64_t V : *Shape) {
    if (V < 0)
      C.fail("shape ", intsToString(*Shape), " has negative extent ", V);
    Dims.push_back(Dim(V));
  }
  C.setOutputType(0, broadcastTypes(C, X, TensorType(X.dtype(), Dims)));
}

/// Tile(input, repeats): extent i multiplied by repeats[i].
void inferTile(InferContext &C) {
  const TensorType &X = C.inputType(0);
  checkDType(C, 1, DType::I64, "(the repeats)");
  requireRank(C, 1, 1, "(the repeats)");
  auto Reps = inputInts(C, 1);
  if (!X.hasRank() || !Reps) {
    // The rank is X's, which is also the length of repeats.
    auto Len = X.hasRank() ? std::optional<int64_t>(X.rank())
                           : staticLength(C.inputType(1));
    C.setOutputType(0,
                    Len ? unknownDims(X.dtype(), *Len) : TensorType(X.dtype()));
    return;
  }
  if (static_cast<int64_t>(Reps->size()) != X.rank())
    C.fail("repeats ", intsToString(*Reps), " has ", Reps->size(),
           " entries but X ", X.toString(), " has rank ", X.rank());
  std::vector<Dim> Out;
  for (int64_t I = 0; I < X.rank(); ++I) {
    int64_t N = (*Reps)[I];
    const Dim &D = X.dim(I);
    if (N < 0)
      C.fail("repeats ", intsToString(*Reps), " has negative entry ", N);
    if (D.isStatic())
      Out.push_back(Dim(D.value() * N));
    else
      Out.push_back(N == 1 ? D : N == 0 ? Dim(0) : Dim::unknown());
  }
  C.setOutputType(0, TensorType(X.dtype(), std::move(Out)));
}

/// Pad(data, pads, constant_value?): extent i grows by pads[i] (begin) and
/// pads[i + r] (end); negative pads crop.
void inferPad(InferContext &C) {
  const TensorType &X = C.inputType(0);
  checkDType(C, 1, DType::I64, "(the pads)");
  requireRank(C, 1, 1, "(the pads)");
  if (C.hasInput(2))
    checkSameDType(C, 0, 2);
  const std::string &Mode = C.attrString("mode");
  if (Mode != "constant" && Mode != "reflect" && Mode != "edge")
    C.fail("attribute mode is '", Mode,
           "'; expected constant, reflect or edge");
  auto Pads = inputInts(C, 1);
  if (!X.hasRank() || !Pads) {
    // The rank is X's, which is also half the length of pads.
    auto Len = staticLength(C.inputType(1));
    if (X.hasRank())
      Len = X.rank();
    else if (Len)
      Len = *Len / 2;
    C.setOutputType(0,
                    Len ? unknownDims(X.dtype(), *Len) : TensorType(X.dtype()));
    return;
  }
  int64_t R = X.rank();
  if (static_cast<int64_t>(Pads->size()) != 2 * R)
    C.fail("pads ", intsToString(*Pads), " has ", Pads->size(), " entries; X ",
           X.toString(), " needs 2 * rank = ", 2 * R);
  std::vector<Dim> Out;
  for (int64_t I = 0; I < R; ++I) {
    int64_t B = (*Pads)[I], E = (*Pads)[I + R];
    const Dim &D = X.dim(I);
    if (!D.isStatic()) {
      Out.push_back(B == 0 && E == 0 ? D : Dim::unknown());
      continue;
    }
    int64_t N = D.value() + B + E;
    if (N < 0)
      C.fail("pads ", intsToString(*Pads), " crop axis ", I, " of X ",
             X.toString(), " below zero");
    // Reflect pads wider than the axis reflect repeatedly (numpy); only
    // an empty axis has nothing to reflect or repeat.
    if (Mode != "constant" && D.value() == 0 && (B > 0 || E > 0))
      C.fail(Mode, " padding of empty axis ", I, " of X ", X.toString());
    Out.push_back(Dim(N));
  }
  C.setOutputType(0, TensorType(X.dtype(), std::move(Out)));
}

} // namespace nng::ir
