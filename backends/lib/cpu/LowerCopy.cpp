//===- LowerCopy.cpp - Transpose and Slice as views or copy steps ---------===//
//
// Transpose and Slice (with constant starts, ends, axes and steps) are
// views of the input's bytes: sizes, strides and an offset (Slice's bounds
// clamped by ir::sliceAxis, as inference and the reference kernel do). A
// view that is the input's bytes in the same order (a transpose that moves
// only size-1 axes) is an alias of the input's buffer; any other becomes a
// copy step into a dense buffer (stridedCopy, OwnKernels.cpp).
//
//===----------------------------------------------------------------------===//

#include "Lower.h"
#include "nngraph/ir/ViewGeometry.h"

namespace nng::backends::cpu {

namespace {

/// The ints of constant V (an index tensor), or nullopt.
std::optional<std::vector<int64_t>> intsOf(LowerContext &C,
                                           const ir::Value *V) {
  const Tensor *T = C.constantOf(V);
  if (!T || (T->dtype() != DType::I64 && T->dtype() != DType::I32))
    return std::nullopt;
  std::vector<int64_t> R;
  for (int64_t I = 0; I < T->numel(); ++I)
    R.push_back(static_cast<int64_t>(T->getFlat(I)));
  return R;
}

/// The view Transpose N takes of a dense tensor of shape S.
std::optional<StridedView> transposeView(const ir::Node &N, const Shape &S) {
  std::optional<std::vector<int64_t>> Perm =
      ir::transposePerm(N.attrInts("perm"), static_cast<int64_t>(S.rank()));
  if (!Perm)
    return std::nullopt; // The node kernel reports it.
  Strides In = contiguousStrides(S);
  StridedView V;
  for (int64_t P : *Perm) {
    V.Sizes.push_back(S[P]);
    V.Strides.push_back(In[P]);
  }
  return V;
}

/// Slice's constant starts, ends, axes and steps.
struct SliceBounds {
  std::vector<int64_t> Starts, Ends, Axes, Steps;
};

/// The bounds of Slice N, when its operands are constants.
std::optional<SliceBounds> sliceBounds(LowerContext &C, const ir::Node &N) {
  auto Starts = intsOf(C, N.input(1)), Ends = intsOf(C, N.input(2));
  if (!Starts || !Ends || Starts->size() != Ends->size())
    return std::nullopt;
  size_t K = Starts->size();
  SliceBounds B{*Starts, *Ends, {}, std::vector<int64_t>(K, 1)};
  for (size_t I = 0; I < K; ++I)
    B.Axes.push_back(static_cast<int64_t>(I));
  for (auto [Index, List] : {std::pair{size_t(3), &B.Axes},
                             std::pair{size_t(4), &B.Steps}})
    if (N.numInputs() > Index && N.hasInput(Index)) {
      auto L = intsOf(C, N.input(Index));
      if (!L || L->size() != K)
        return std::nullopt;
      *List = *L;
    }
  return B;
}

/// The view a Slice with bounds B takes of a dense tensor of shape S
/// (ir::sliceAxis clamps them).
std::optional<StridedView> sliceView(const SliceBounds &B, const Shape &S) {
  int64_t R = static_cast<int64_t>(S.rank());
  size_t K = B.Starts.size();
  Strides In = contiguousStrides(S);
  StridedView V;
  V.Sizes.assign(S.begin(), S.end());
  V.Strides.assign(In.begin(), In.end());
  std::vector<bool> Seen(R, false);
  for (size_t I = 0; I < K; ++I) {
    int64_t A = B.Axes[I] < 0 ? B.Axes[I] + R : B.Axes[I];
    if (A < 0 || A >= R || Seen[A] || B.Steps[I] == 0)
      return std::nullopt; // The node kernel reports it.
    Seen[A] = true;
    ir::SliceAxis SA = ir::sliceAxis(S[A], B.Starts[I], B.Ends[I], B.Steps[I]);
    V.Sizes[A] = SA.Length;
    if (SA.Length > 0)
      V.Offset += SA.Start * In[A];
    V.Strides[A] = In[A] * B.Steps[I];
  }
  return V;
}

/// True when V's elements are its storage's first ones in row-major
/// order (size-1 axes may have any stride).
bool isDense(const StridedView &V) {
  int64_t Expected = 1;
  for (size_t I = V.Sizes.size(); I-- > 0;) {
    if (V.Sizes[I] == 0)
      return true;
    if (V.Sizes[I] == 1)
      continue;
    if (V.Strides[I] != Expected)
      return false;
    Expected *= V.Sizes[I];
  }
  return true;
}

} // namespace

bool lowerCopy(LowerContext &C, const ir::Node &N) {
  const ir::Value *X = N.input(0);
  int In = C.B.plainOf(C.slotOf(X));
  DType T = C.slot(In).Type;
  const auto &[OutT, OutS] = C.PendingTypes.at(N.output(0));
  if (OutT != T)
    return false;
  // The view at any input shape: a reshaped program takes it again.
  std::function<std::optional<StridedView>(const Shape &)> ViewAt;
  if (N.op() == ir::OpKind::Transpose) {
    ViewAt = [&N](const Shape &S) { return transposeView(N, S); };
  } else {
    std::optional<SliceBounds> B = sliceBounds(C, N);
    if (!B)
      return false;
    ViewAt = [B = *B](const Shape &S) { return sliceView(B, S); };
  }
  std::optional<StridedView> V = ViewAt(C.slot(In).S);
  if (!V || Shape(V->Sizes) != OutS)
    return false;
  bool Dense = V->Offset == 0 && isDense(*V);
  if (Dense && C.slot(In).Kind == SlotKind::Buffer) {
    int A = C.B.aliasOf(In, OutS, N.output(0)->name(), N.output(0));
    C.slot(A).ViewOf = In;
    C.slot(A).ViewDense =
        std::make_shared<const std::function<bool(const Shape &)>>(
            [ViewAt](const Shape &S) {
              std::optional<StridedView> W = ViewAt(S);
              return W && W->Offset == 0 && isDense(*W);
            });
    C.SlotOf[N.output(0)] = A;
    ++C.program().Stats.AliasNodes;
    return true;
  }
  int Out = C.defineBuffer(N.output(0));
  size_t Elem = dtypeSize(T);
  auto Cur = std::make_shared<StridedView>(*V);
  emitLoop(
      C, {In}, Out, C.describe(N),
      [=](Program &P) {
        stridedCopy(static_cast<const char *>(P.dataOf(In)), P.bufferData(Out),
                    *Cur, Elem);
      },
      [=](const Program &, const SlotShapes &New) {
        std::optional<StridedView> W = ViewAt(New[In]);
        return W && Shape(W->Sizes) == New[Out];
      },
      [=](Program &P) {
        *Cur = *ViewAt(P.Slots[In].S); // From now on, at the new shapes.
        return true;
      });
  return true;
}

} // namespace nng::backends::cpu
