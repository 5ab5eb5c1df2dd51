//===- InPlaceViews.cpp - Views an attention loop reads in place ----------===//
//
// The views of Slice, Transpose and reshape-like nodes as GroupedViews,
// composed along a chain that ends at an nng.Attention operand; the chain's
// values are left unmaterialized (ValueSlot::InPlace) and the attention
// loop reads them where the chain's root lies (InPlaceViews.h). The copy
// steps of Transpose and Slice (LowerCopy.cpp) take their strided views
// from the same operations on a dense view.
//
//===----------------------------------------------------------------------===//

#include "InPlaceViews.h"
#include "nngraph/ir/ViewGeometry.h"

namespace nng::backends::cpu {

namespace {

/// Index of the first strided axis of logical axis A.
size_t firstAxis(const GroupedView &V, size_t A) {
  size_t F = 0;
  for (size_t I = 0; I < A; ++I)
    F += V.Groups[I];
  return F;
}

/// True when V's sole reader starts a chain of view nodes, each the sole
/// reader of the one before, that ends at Q, K or V of an nng.Attention of
/// f32 operands.
bool feedsAttention(LowerContext &C, const ir::Value *V) {
  for (int Depth = 0; Depth < 16; ++Depth) {
    const ir::Node *U = C.soleConsumer(V);
    if (!U)
      return false;
    switch (U->op()) {
    case ir::OpKind::Slice:
    case ir::OpKind::Transpose:
    case ir::OpKind::Reshape:
    case ir::OpKind::Flatten:
    case ir::OpKind::Squeeze:
    case ir::OpKind::Unsqueeze:
    case ir::OpKind::Identity:
      if (U->input(0) != V || U->numOutputs() != 1)
        return false;
      V = U->output(0);
      continue;
    case ir::OpKind::Attention:
      // (Its operands' dtypes as inference gave them: some are not
      // lowered yet.)
      for (size_t I = 0; I < U->numExplicitInputs(); ++I)
        if (U->hasInput(I) && U->input(I)->type().dtype() != DType::F32)
          return false;
      return U->input(0) == V || U->input(1) == V || U->input(2) == V;
    default:
      return false;
    }
  }
  return false;
}

/// The shapes of C's slots now.
SlotShapeFn shapesNow(LowerContext &C) {
  return [&C](int S) -> const Shape & { return C.slot(S).S; };
}

} // namespace

GroupedView denseView(const Shape &S) {
  GroupedView V;
  Strides St = contiguousStrides(S);
  for (size_t I = 0; I < S.rank(); ++I) {
    V.Axes.push_back({S[I], St[I]});
    V.Groups.push_back(1);
  }
  return V;
}

std::optional<GroupedView> sliceOf(GroupedView V, const SliceBounds &B,
                                   const Shape &In) {
  int64_t R = static_cast<int64_t>(In.rank());
  std::vector<bool> Seen(R, false);
  for (size_t I = 0; I < B.Starts.size(); ++I) {
    int64_t A = B.Axes[I] < 0 ? B.Axes[I] + R : B.Axes[I];
    if (A < 0 || A >= R || Seen[A] || B.Steps[I] == 0)
      return std::nullopt; // The node kernel reports it.
    Seen[A] = true;
    ir::SliceAxis SA = ir::sliceAxis(In[A], B.Starts[I], B.Ends[I], B.Steps[I]);
    if (SA.Length == In[A] && B.Steps[I] == 1)
      continue; // All of it.
    if (V.Groups[A] != 1)
      return std::nullopt;
    GroupedView::Axis &X = V.Axes[firstAxis(V, A)];
    if (SA.Length > 0)
      V.Offset += SA.Start * X.Stride;
    X.Size = SA.Length;
    X.Stride *= B.Steps[I];
  }
  return V;
}

std::optional<GroupedView> transposeOf(const GroupedView &V,
                                       const std::vector<int64_t> &PermAttr) {
  std::optional<std::vector<int64_t>> Perm = ir::transposePerm(
      PermAttr, static_cast<int64_t>(V.Groups.size()));
  if (!Perm)
    return std::nullopt;
  GroupedView W;
  W.Offset = V.Offset;
  for (int64_t P : *Perm) {
    size_t F = firstAxis(V, P);
    for (int J = 0; J < V.Groups[P]; ++J)
      W.Axes.push_back(V.Axes[F + J]);
    W.Groups.push_back(V.Groups[P]);
  }
  return W;
}

std::optional<GroupedView> reshapeOf(const GroupedView &V, const Shape &To) {
  std::vector<GroupedView::Axis> Flat;
  for (const GroupedView::Axis &X : V.Axes) {
    if (X.Size == 0)
      return std::nullopt;
    if (X.Size == 1)
      continue;
    if (!Flat.empty() && Flat.back().Stride == X.Size * X.Stride) {
      Flat.back().Size *= X.Size;
      Flat.back().Stride = X.Stride;
    } else {
      Flat.push_back(X);
    }
  }
  GroupedView W;
  W.Offset = V.Offset;
  size_t I = 0;
  for (size_t D = 0; D < To.rank(); ++D) {
    int64_t Need = To[D];
    if (Need <= 0)
      return std::nullopt;
    int Count = 0;
    while (Need > 1) {
      if (I == Flat.size())
        return std::nullopt;
      GroupedView::Axis &X = Flat[I];
      if (Need % X.Size == 0) {
        W.Axes.push_back(X);
        Need /= X.Size;
        ++I;
      } else if (X.Size % Need == 0) {
        X.Size /= Need;
        W.Axes.push_back({Need, X.Stride * X.Size});
        Need = 1;
      } else {
        return std::nullopt;
      }
      ++Count;
    }
    W.Groups.push_back(Count);
  }
  if (I != Flat.size())
    return std::nullopt;
  return W;
}

StridedView stridedOf(const GroupedView &V) {
  StridedView S;
  S.Offset = V.Offset;
  for (const GroupedView::Axis &X : V.Axes) {
    S.Sizes.push_back(X.Size);
    S.Strides.push_back(X.Stride);
  }
  return S;
}

Shape logicalShape(const GroupedView &V) {
  std::vector<int64_t> Dims;
  size_t I = 0;
  for (int G : V.Groups) {
    int64_t E = 1;
    for (int J = 0; J < G; ++J)
      E *= V.Axes[I++].Size;
    Dims.push_back(E);
  }
  return Shape(Dims);
}

std::optional<MatrixView> matrixView(const GroupedView &V) {
  size_t R = V.Groups.size();
  if (R < 2 || V.Groups[R - 2] > 1 || V.Groups[R - 1] > 1)
    return std::nullopt;
  MatrixView M;
  size_t F = firstAxis(V, R - 2);
  size_t Col = F + V.Groups[R - 2];
  if (V.Groups[R - 2] == 1)
    M.RowStride = V.Axes[F].Stride;
  if (V.Groups[R - 1] == 1)
    M.ColStride = V.Axes[Col].Stride;
  // Batch entries: the strided axes before F, row-major.
  int64_t Count = 1;
  for (size_t I = 0; I < F; ++I)
    Count *= V.Axes[I].Size;
  M.Offsets.assign(Count, V.Offset);
  for (int64_t B = 0; B < Count; ++B) {
    int64_t Rem = B;
    for (size_t I = F; I-- > 0;) {
      M.Offsets[B] += (Rem % V.Axes[I].Size) * V.Axes[I].Stride;
      Rem /= V.Axes[I].Size;
    }
  }
  return M;
}

bool lowerInPlaceView(LowerContext &C, const ir::Node &N) {
  const ir::Value *Y = N.output(0);
  if (N.numOutputs() != 1 || C.PendingTypes.at(Y).first != DType::F32 ||
      !C.isF32(N.input(0)) || !feedsAttention(C, Y))
    return false;
  int In = C.slotOf(N.input(0));
  std::shared_ptr<const InPlaceView> Prev = C.slot(In).InPlace;
  const ValueSlot &IS = C.slot(In);
  if (!Prev && (IS.Kind != SlotKind::Buffer || IS.Blocked))
    return false;
  // This node's view of its input's view, at any shapes of the two slots.
  using LinkFn = std::function<std::optional<GroupedView>(
      const GroupedView &, const Shape &In, const Shape &Out)>;
  LinkFn Link;
  switch (N.op()) {
  case ir::OpKind::Slice: {
    std::optional<SliceBounds> B = sliceBounds(C, N);
    if (!B)
      return false;
    Link = [B = *B](const GroupedView &V, const Shape &InS, const Shape &) {
      return sliceOf(V, B, InS);
    };
    break;
  }
  case ir::OpKind::Transpose:
    Link = [Perm = N.attrInts("perm")](const GroupedView &V, const Shape &,
                                        const Shape &) {
      return transposeOf(V, Perm);
    };
    break;
  default: // Reshape-like: the output's shape says it all.
    Link = [](const GroupedView &V, const Shape &, const Shape &OutS) {
      return reshapeOf(V, OutS);
    };
    break;
  }
  const Shape &OutS = C.PendingTypes.at(Y).second;
  std::optional<GroupedView> InView =
      Prev ? Prev->At(shapesNow(C)) : denseView(IS.S);
  std::optional<GroupedView> Now =
      InView ? Link(*InView, IS.S, OutS) : std::nullopt;
  if (!Now || logicalShape(*Now) != OutS)
    return false;
  int Root = Prev ? Prev->Root : In;
  int Out = C.B.aliasOf(Root, OutS, Y->name(), Y);
  auto View = std::make_shared<InPlaceView>();
  View->Root = Root;
  View->At = [Prev, In, Out, Link](const SlotShapeFn &ShapeOf)
      -> std::optional<GroupedView> {
    std::optional<GroupedView> V =
        Prev ? Prev->At(ShapeOf) : denseView(ShapeOf(In));
    if (!V)
      return std::nullopt;
    V = Link(*V, ShapeOf(In), ShapeOf(Out));
    if (!V || logicalShape(*V) != ShapeOf(Out))
      return std::nullopt;
    return V;
  };
  C.slot(Out).InPlace = std::move(View);
  C.SlotOf[Y] = Out;
  ++C.program().Stats.AliasNodes;
  return true;
}

int materializeInPlace(LowerContext &C, const ir::Value *Y) {
  int Alias = C.slotOf(Y);
  std::shared_ptr<const InPlaceView> View = C.slot(Alias).InPlace;
  int Out = C.B.newBuffer(DType::F32, C.slot(Alias).S, {}, Y->name(), Y);
  C.SlotOf[Y] = Out;
  // The step reads the alias, which shares the root's buffer: the root
  // lives until the copy.
  emitLoop(
      C, {Alias}, Out, C.describe(*Y->producer()) + " (view made real)",
      [View, Alias, Out](Program &P) {
        std::optional<GroupedView> V = View->At(
            [&P](int S) -> const Shape & { return P.Slots[S].S; });
        stridedCopy(static_cast<const char *>(P.dataOf(Alias)),
                    P.bufferData(Out), stridedOf(*V), sizeof(float));
      },
      [View, Out](const Program &, const SlotShapes &New) {
        std::optional<GroupedView> V =
            View->At([&New](int S) -> const Shape & { return New[S]; });
        return V && logicalShape(*V) == New[Out];
      });
  return Out;
}

void materializeInPlaceInputs(LowerContext &C, const ir::Node &N,
                              size_t Keep) {
  for (size_t I = Keep; I < N.numInputs(); ++I)
    if (N.hasInput(I) && C.slotOfValue(N.input(I)).InPlace)
      materializeInPlace(C, N.input(I));
}

} // namespace nng::backends::cpu
