//===- LowerCopy.cpp - Transpose and Slice as views or copy steps ---------===//
//
// Transpose and Slice (with constant starts, ends, axes and steps) are
// views of the input's bytes: sizes, strides and an offset (Slice's bounds
// clamped by ir::sliceAxis, as inference and the reference kernel do). A
// view that is the input's bytes in the same order (a transpose that moves
// only size-1 axes) is an alias of the input's buffer; any other becomes a
// copy step into a dense buffer (stridedCopy, LoopsCopy.cpp).
//
//===----------------------------------------------------------------------===//

#include "InPlaceViews.h"
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

/// The view a Transpose with attribute perm PermAttr takes of a dense tensor
/// of shape S.
std::optional<StridedView> transposeView(const std::vector<int64_t> &PermAttr,
                                         const Shape &S) {
  std::optional<GroupedView> V = transposeOf(denseView(S), PermAttr);
  return V ? std::optional(stridedOf(*V)) : std::nullopt;
}

} // namespace

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

namespace {

/// The view a Slice with bounds B takes of a dense tensor of shape S
/// (ir::sliceAxis clamps them).
std::optional<StridedView> sliceView(const SliceBounds &B, const Shape &S) {
  std::optional<GroupedView> V = sliceOf(denseView(S), B, S);
  return V ? std::optional(stridedOf(*V)) : std::nullopt;
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

namespace {

using ViewFn = std::function<std::optional<StridedView>(const Shape &)>;

/// Emits the copy of In's view (ViewAt of its shape, V now) into Out, a
/// step that takes the view of a reshaped program's new shapes.
void emitViewCopy(LowerContext &C, const ir::Node &N, int In, int Out,
                  ViewFn ViewAt, const StridedView &V) {
  size_t Elem = dtypeSize(C.slot(In).Type);
  auto Cur = std::make_shared<StridedView>(V);
  // The view at the shapes a reshape asks about (fits), which its adopt
  // then takes: each reshape computes it once.
  auto Next = std::make_shared<std::optional<StridedView>>();
  emitLoop(
      C, {In}, Out, C.describe(N),
      [=](Program &P) {
        stridedCopy(static_cast<const char *>(P.dataOf(In)), P.bufferData(Out),
                    *Cur, Elem);
      },
      [=](const Program &, const SlotShapes &New) {
        *Next = ViewAt(New[In]);
        return *Next && Shape((*Next)->Sizes) == New[Out];
      },
      [=](Program &P) {
        // From now on, at the new shapes (fits saw them).
        *Cur = *Next ? std::move(**Next) : *ViewAt(P.Slots[In].S);
        Next->reset();
        return true;
      });
}

/// True when Transpose N swaps only the last two axes and its one reader is
/// a product that will take it as its right operand with at most
/// OwnLoopRows rows on the left (a decoder's scores against its cached
/// keys): the product reads the keys in place (lowerBatched).
bool feedsFewRowsTransposed(LowerContext &C, const ir::Node &N, int In,
                            const Shape &OutS) {
  int64_t R = static_cast<int64_t>(OutS.rank());
  std::vector<int64_t> Perm = N.attrInts("perm");
  if (R < 2 || R > 12 || static_cast<int64_t>(Perm.size()) != R ||
      C.slot(In).Kind != SlotKind::Buffer || C.slot(In).Blocked ||
      C.slot(In).Type != DType::F32)
    return false;
  for (int64_t I = 0; I < R; ++I)
    if (Perm[I] != (I < R - 2 ? I : 2 * R - 3 - I))
      return false;
  const ir::Node *U = C.soleConsumer(N.output(0));
  if (!U || U->op() != ir::OpKind::MatMul || U->input(1) != N.output(0) ||
      U->input(0) == N.output(0) || !C.SlotOf.count(U->input(0)))
    return false;
  const ValueSlot &A = C.slotOfValue(U->input(0));
  if (A.Type != DType::F32 || A.Kind == SlotKind::Constant ||
      A.S.rank() != OutS.rank())
    return false;
  std::optional<FewRowsDims> D =
      fewRowsDims(A.S, C.slot(In).S, static_cast<size_t>(R), /*TransB=*/true);
  return D && D->M <= OwnLoopRows && D->M * D->N * D->Batches > 0;
}

} // namespace

int materializeTranspose(LowerContext &C, const ir::Value *Y) {
  const ValueSlot &Alias = C.slotOfValue(Y);
  int In = Alias.TransposeOf;
  const ir::Node &N = *Y->producer();
  int Out = C.B.newBuffer(DType::F32, Alias.S, {}, Y->name(), Y);
  C.SlotOf[Y] = Out;
  ViewFn ViewAt = [Perm = N.attrInts("perm")](const Shape &S) {
    return transposeView(Perm, S);
  };
  emitViewCopy(C, N, In, Out, ViewAt, *ViewAt(C.slot(In).S));
  return Out;
}

bool lowerCopy(LowerContext &C, const ir::Node &N) {
  if (lowerInPlaceView(C, N))
    return true;
  materializeInPlaceInputs(C, N);
  const ir::Value *X = N.input(0);
  int In = C.B.plainOf(C.slotOf(X));
  DType T = C.slot(In).Type;
  const auto &[OutT, OutS] = C.PendingTypes.at(N.output(0));
  if (OutT != T)
    return false;
  // The view at any input shape: a reshaped program takes it again.
  ViewFn ViewAt;
  if (N.op() == ir::OpKind::Transpose) {
    ViewAt = [Perm = N.attrInts("perm")](const Shape &S) {
      return transposeView(Perm, S);
    };
  } else {
    std::optional<SliceBounds> B = sliceBounds(C, N);
    if (!B)
      return false;
    ViewAt = [B = *B](const Shape &S) { return sliceView(B, S); };
  }
  std::optional<StridedView> V = ViewAt(C.slot(In).S);
  if (!V || Shape(V->Sizes) != OutS)
    return false;
  if (N.op() == ir::OpKind::Transpose &&
      feedsFewRowsTransposed(C, N, In, OutS)) {
    // No copy: the product reads In's bytes as they lie.
    int A = C.B.aliasOf(In, OutS, N.output(0)->name(), N.output(0));
    C.slot(A).TransposeOf = In;
    C.SlotOf[N.output(0)] = A;
    ++C.program().Stats.FusedNodes;
    return true;
  }
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
  emitViewCopy(C, N, In, Out, ViewAt, *V);
  return true;
}

} // namespace nng::backends::cpu
