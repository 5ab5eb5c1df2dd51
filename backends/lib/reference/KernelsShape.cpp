//===- KernelsShape.cpp - Shape manipulation -----------------------------===//
//
// Reference kernels that move data without arithmetic: Flatten, Reshape,
// Transpose, Squeeze, Unsqueeze, Concat, Split, Slice (negative steps too),
// Expand, Tile, Pad (constant, reflect, edge; negative pads crop), Shape and
// Size. They work for every dtype, build a strided view where they can and
// always return fresh storage (outputs never alias inputs).
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "nngraph/ir/ViewGeometry.h"

#include <algorithm>
#include <cstring>

namespace nng::backends::reference {

namespace {

/// Out[o] = X[Src(o)] for each output position, byte-wise for any dtype;
/// Map(OutIdx, SrcIdx) fills the source multi-index and returns false where
/// the output keeps its prefilled value.
template <typename Fn>
void gatherPositions(const Tensor &X, Tensor &Out, Fn Map) {
  size_t R = Out.rank(), ES = X.elementSize();
  const char *Base = static_cast<const char *>(X.rawData());
  char *Dst = static_cast<char *>(Out.rawData());
  std::vector<int64_t> OIdx(R), SIdx(R);
  for (int64_t I = 0; I < Out.numel(); ++I) {
    unflatten(I, Out.shape().dims(), OIdx.data());
    if (!Map(OIdx, SIdx))
      continue;
    int64_t Off = 0;
    for (size_t D = 0; D < R; ++D)
      Off += SIdx[D] * X.strides()[D];
    std::memcpy(Dst + I * ES, Base + Off * ES, ES);
  }
}

/// Output I = a fresh copy of V.
void setOut(KernelContext &C, size_t I, const Tensor &V) {
  C.Outputs.resize(std::max(C.Outputs.size(), I + 1));
  C.Outputs[I] = V.clone();
}

} // namespace

void kernelFlatten(KernelContext &C) {
  const Tensor &X = C.in(0);
  int64_t R = static_cast<int64_t>(X.rank()), Axis = C.attrInt("axis");
  if (Axis < -R || Axis > R)
    C.fail("axis ", Axis, " is out of range for rank ", R, " (valid: [", -R,
           ", ", R, "])");
  if (Axis < 0)
    Axis += R;
  int64_t Outer = 1, Inner = 1;
  for (int64_t D = 0; D < R; ++D)
    (D < Axis ? Outer : Inner) *= X.size(D);
  C.Outputs[0] = X.clone().reshape(Shape{Outer, Inner});
}

void kernelReshape(KernelContext &C) {
  const Tensor &X = C.in(0);
  std::vector<int64_t> Req = intsOf(C, C.in(1), "shape");
  bool AllowZero = C.attrInt("allowzero") != 0;
  std::vector<int64_t> Dims(Req.size());
  int64_t Known = 1, Infer = -1;
  for (size_t I = 0; I < Req.size(); ++I) {
    int64_t V = Req[I];
    if (V == 0 && !AllowZero) {
      if (I >= X.rank())
        C.fail("shape ", intsToString(Req), " copies dim ", I,
               " (0) but the input ", X.shape().toString(), " has rank ",
               X.rank());
      V = X.size(static_cast<int64_t>(I));
    } else if (V == -1) {
      if (Infer >= 0)
        C.fail("shape ", intsToString(Req), " has more than one -1");
      Infer = static_cast<int64_t>(I);
      continue;
    } else if (V < -1) {
      C.fail("shape ", intsToString(Req), " has a negative extent");
    }
    Dims[I] = V;
    Known *= V;
  }
  if (Infer >= 0) {
    if (Known == 0 || X.numel() % Known != 0)
      C.fail("cannot reshape ", X.shape().toString(), " to ", intsToString(Req),
             ": the -1 extent cannot be inferred");
    Dims[Infer] = X.numel() / Known;
  } else if (Known != X.numel()) {
    C.fail("cannot reshape ", X.shape().toString(), " (", X.numel(),
           " elements) to ", intsToString(Req), " (", Known, " elements)");
  }
  C.Outputs[0] = X.clone().reshape(Shape(Dims));
}

void kernelTranspose(KernelContext &C) {
  const Tensor &X = C.in(0);
  int64_t R = static_cast<int64_t>(X.rank());
  std::vector<int64_t> Perm = C.attrInts("perm");
  if (Perm.empty() && R > 0)
    for (int64_t D = R; D-- > 0;)
      Perm.push_back(D);
  std::vector<bool> Seen(R);
  if (static_cast<int64_t>(Perm.size()) != R)
    C.fail("perm ", intsToString(Perm), " must list each of the ", R,
           " axes once");
  for (int64_t &P : Perm) {
    P = normAxis(C, P, R, "perm axis");
    if (Seen[P])
      C.fail("perm ", intsToString(C.attrInts("perm")), " repeats axis ", P);
    Seen[P] = true;
  }
  setOut(C, 0, X.permute(Perm));
}

void kernelSqueeze(KernelContext &C) {
  const Tensor &X = C.in(0);
  int64_t R = static_cast<int64_t>(X.rank());
  std::vector<bool> Drop(R, false);
  if (C.hasInput(1)) {
    for (int64_t A : intsOf(C, C.in(1), "axes")) {
      int64_t D = normAxis(C, A, R);
      if (X.size(D) != 1)
        C.fail("cannot squeeze axis ", A, " of ", X.shape().toString(),
               ": its extent is not 1");
      Drop[D] = true;
    }
  } else {
    for (int64_t D = 0; D < R; ++D)
      Drop[D] = X.size(D) == 1;
  }
  Shape Out;
  for (int64_t D = 0; D < R; ++D)
    if (!Drop[D])
      Out.push_back(X.size(D));
  C.Outputs[0] = X.clone().reshape(Out);
}

void kernelUnsqueeze(KernelContext &C) {
  const Tensor &X = C.in(0);
  std::vector<int64_t> Axes = intsOf(C, C.in(1), "axes");
  int64_t OutR = static_cast<int64_t>(X.rank() + Axes.size());
  std::vector<bool> New(OutR, false);
  for (int64_t A : Axes) {
    int64_t D = normAxis(C, A, OutR);
    if (New[D])
      C.fail("axes ", intsToString(Axes), " repeat axis ", D);
    New[D] = true;
  }
  Shape Out;
  size_t Next = 0;
  for (int64_t D = 0; D < OutR; ++D)
    Out.push_back(New[D] ? 1 : X.shape()[Next++]);
  C.Outputs[0] = X.clone().reshape(Out);
}

void kernelConcat(KernelContext &C) {
  const Tensor &First = C.in(0);
  int64_t R = static_cast<int64_t>(First.rank());
  if (R == 0)
    C.fail("cannot concatenate scalars (rank 0)");
  int64_t Axis = normAxis(C, C.attrInt("axis"), R);
  Shape Out = First.shape();
  Out[Axis] = 0;
  for (size_t I = 0; I < C.Inputs.size(); ++I) {
    const Tensor &T = C.in(I);
    requireSameDType(C, First, T, "inputs[0]", "every other input");
    bool Fits = static_cast<int64_t>(T.rank()) == R;
    for (int64_t D = 0; Fits && D < R; ++D)
      Fits = D == Axis || T.size(D) == First.size(D);
    if (!Fits)
      C.fail("input ", I, " ", T.shape().toString(), " does not fit input 0 ",
             First.shape().toString(), " along axis ", Axis);
    Out[Axis] += T.size(Axis);
  }
  Tensor &Y = C.allocOutput(0, Out, First.dtype());
  int64_t Off = 0;
  for (const Tensor &T : C.Inputs) {
    int64_t Len = T.size(Axis);
    if (Len > 0 && T.numel() > 0)
      Y.slice(Axis, Off, Off + Len).copyFrom(T);
    Off += Len;
  }
}

void kernelSplit(KernelContext &C) {
  const Tensor &X = C.in(0);
  int64_t R = static_cast<int64_t>(X.rank());
  int64_t Axis = normAxis(C, C.attrInt("axis"), R);
  int64_t N = static_cast<int64_t>(C.Outputs.size()), Dim = X.size(Axis);
  std::vector<int64_t> Sizes;
  if (C.hasInput(1)) {
    Sizes = intsOf(C, C.in(1), "split");
    int64_t Sum = 0;
    for (int64_t S : Sizes) {
      if (S < 0)
        C.fail("split ", intsToString(Sizes), " has a negative size");
      Sum += S;
    }
    if (static_cast<int64_t>(Sizes.size()) != N || Sum != Dim)
      C.fail("split ", intsToString(Sizes), " must have one size per output (",
             N, ") summing to the extent ", Dim, " of axis ", Axis);
  } else {
    if (Dim % N != 0)
      C.fail("axis ", Axis, " of extent ", Dim, " does not split into ", N,
             " equal parts");
    Sizes.assign(N, Dim / N);
  }
  int64_t Off = 0;
  for (int64_t I = 0; I < N; ++I) {
    setOut(C, I, X.slice(Axis, Off, Off + Sizes[I]));
    Off += Sizes[I];
  }
}

void kernelSlice(KernelContext &C) {
  const Tensor &X = C.in(0);
  int64_t R = static_cast<int64_t>(X.rank());
  std::vector<int64_t> Starts = intsOf(C, C.in(1), "starts");
  std::vector<int64_t> Ends = intsOf(C, C.in(2), "ends");
  size_t K = Starts.size();
  std::vector<int64_t> Axes, Steps(K, 1);
  if (C.hasInput(3)) {
    Axes = intsOf(C, C.in(3), "axes");
  } else {
    for (size_t I = 0; I < K; ++I)
      Axes.push_back(static_cast<int64_t>(I));
  }
  if (C.hasInput(4))
    Steps = intsOf(C, C.in(4), "steps");
  if (Ends.size() != K || Axes.size() != K || Steps.size() != K)
    C.fail("starts ", intsToString(Starts), ", ends ", intsToString(Ends),
           ", axes ", intsToString(Axes), " and steps ", intsToString(Steps),
           " must have the same length");
  Shape OutShape = X.shape();
  Strides OutStrides = X.strides();
  int64_t Offset = X.offset();
  std::vector<bool> Seen(R, false);
  for (size_t I = 0; I < K; ++I) {
    int64_t A = normAxis(C, Axes[I], R);
    if (Seen[A])
      C.fail("axes ", intsToString(Axes), " repeat axis ", A);
    Seen[A] = true;
    int64_t Dim = X.size(A), Step = Steps[I];
    if (Step == 0)
      C.fail("steps ", intsToString(Steps), " contain 0");
    ir::SliceAxis SA = ir::sliceAxis(Dim, Starts[I], Ends[I], Step);
    int64_t S = SA.Start, Len = SA.Length;
    OutShape[A] = Len;
    if (Len > 0)
      Offset += S * X.strides()[A];
    OutStrides[A] = X.strides()[A] * Step;
  }
  if (OutShape.numel() == 0) {
    C.allocOutput(0, OutShape, X.dtype());
    return;
  }
  setOut(C, 0, Tensor(X.storage(), OutShape, OutStrides, Offset, X.dtype()));
}

void kernelExpand(KernelContext &C) {
  const Tensor &X = C.in(0);
  std::vector<int64_t> Req = intsOf(C, C.in(1), "shape");
  for (int64_t D : Req)
    if (D < 0)
      C.fail("shape ", intsToString(Req), " has a negative extent");
  Shape Out = broadcastShapes(X.shape(), Shape(Req));
  setOut(C, 0, X.broadcastTo(Out));
}

void kernelTile(KernelContext &C) {
  const Tensor &X = C.in(0);
  std::vector<int64_t> Rep = intsOf(C, C.in(1), "repeats");
  if (Rep.size() != X.rank())
    C.fail("repeats ", intsToString(Rep), " needs one value per axis of ",
           X.shape().toString());
  Shape Out;
  for (size_t D = 0; D < Rep.size(); ++D) {
    if (Rep[D] < 0)
      C.fail("repeats ", intsToString(Rep), " has a negative value");
    Out.push_back(X.shape()[D] * Rep[D]);
  }
  Tensor &Y = C.allocOutput(0, Out, X.dtype());
  gatherPositions(X, Y,
                  [&](const std::vector<int64_t> &O, std::vector<int64_t> &S) {
                    for (size_t D = 0; D < O.size(); ++D)
                      S[D] = O[D] % X.shape()[D];
                    return true;
                  });
}

void kernelPad(KernelContext &C) {
  const Tensor &X = C.in(0);
  size_t R = X.rank();
  std::vector<int64_t> Pads = intsOf(C, C.in(1), "pads");
  if (Pads.size() != 2 * R)
    C.fail("pads ", intsToString(Pads), " needs ", 2 * R, " values for ",
           X.shape().toString());
  const std::string &Mode = C.attrString("mode");
  if (Mode != "constant" && Mode != "reflect" && Mode != "edge")
    C.fail("mode must be constant, reflect or edge, got '", Mode, "'");
  Shape Out;
  for (size_t D = 0; D < R; ++D) {
    int64_t E = X.shape()[D] + Pads[D] + Pads[D + R];
    if (E < 0)
      C.fail("pads ", intsToString(Pads), " crop axis ", D, " of ",
             X.shape().toString(), " below zero");
    if (Mode != "constant" && X.shape()[D] == 0 && E > 0)
      C.fail("cannot ", Mode, "-pad axis ", D, " of extent 0");
    Out.push_back(E);
  }
  Tensor &Y = C.allocOutput(0, Out, X.dtype());
  if (Mode == "constant" && C.hasInput(2) && Y.numel() > 0) {
    const Tensor &V = C.in(2);
    requireSameDType(C, X, V, "data", "constant_value");
    if (V.numel() != 1)
      C.fail("constant_value must be a scalar, got ", V.shape().toString());
    Tensor Vc = V.contiguous();
    char *Dst = static_cast<char *>(Y.rawData());
    for (int64_t I = 0; I < Y.numel(); ++I)
      std::memcpy(Dst + I * Y.elementSize(), Vc.rawData(), Y.elementSize());
  }
  if (Y.numel() == 0)
    return;
  // Each axis's source index per output index (-1: the constant), then rows
  // of the last axis copied through its map.
  std::vector<std::vector<int64_t>> Map(R);
  ir::PadMode PM = Mode == "constant" ? ir::PadMode::Constant
                   : Mode == "edge"   ? ir::PadMode::Edge
                                      : ir::PadMode::Reflect;
  for (size_t D = 0; D < R; ++D)
    for (int64_t O = 0; O < Out[D]; ++O)
      Map[D].push_back(ir::padSource(O, Pads[D], X.shape()[D], PM));
  if (!isNumeric(X.dtype()) && X.dtype() != DType::Bool) {
    gatherPositions(
        X, Y, [&](const std::vector<int64_t> &O, std::vector<int64_t> &S) {
          for (size_t D = 0; D < R; ++D)
            if ((S[D] = Map[D][O[D]]) < 0)
              return false;
          return true;
        });
    return;
  }
  Tensor Xc = X.contiguous();
  const char *Src = static_cast<const char *>(Xc.rawData());
  char *Dst = static_cast<char *>(Y.rawData());
  size_t Elem = Y.elementSize();
  if (R == 0) {
    std::memcpy(Dst, Src, Elem);
    return;
  }
  int64_t Inner = Out[R - 1], InnerIn = X.shape()[R - 1];
  const std::vector<int64_t> &Last = Map[R - 1];
  std::vector<int64_t> Idx(R, 0); // Over the outer axes.
  for (int64_t Row = 0, Rows = Y.numel() / Inner; Row < Rows; ++Row) {
    int64_t SrcRow = 0;
    bool Constant = false;
    for (size_t D = 0; D + 1 < R; ++D) {
      int64_t P = Map[D][Idx[D]];
      Constant |= P < 0;
      SrcRow = SrcRow * X.shape()[D] + (P < 0 ? 0 : P);
    }
    if (!Constant) {
      const char *From = Src + SrcRow * InnerIn * Elem;
      char *To = Dst + Row * Inner * Elem;
      // Runs of consecutive sources (the unpadded middle) as one copy.
      for (int64_t O = 0, Run; O < Inner; O += Run) {
        for (Run = 1; O + Run < Inner && Last[O] >= 0 &&
                      Last[O + Run] == Last[O] + Run;
             ++Run)
          ;
        if (Last[O] >= 0)
          std::memcpy(To + O * Elem, From + Last[O] * Elem, Run * Elem);
      }
    }
    for (size_t D = R - 1; D-- > 0;) { // Next row: the outer index.
      if (++Idx[D] < Out[D])
        break;
      Idx[D] = 0;
    }
  }
}

void kernelShape(KernelContext &C) {
  const Tensor &X = C.in(0);
  int64_t R = static_cast<int64_t>(X.rank());
  auto Clamp = [&](int64_t V) {
    if (V < 0)
      V += R;
    return std::clamp<int64_t>(V, 0, R);
  };
  int64_t Start = Clamp(C.attrInt("start"));
  int64_t End = C.N.attrs().has("end") ? Clamp(C.attrInt("end")) : R;
  std::vector<int64_t> Dims;
  for (int64_t D = Start; D < End; ++D)
    Dims.push_back(X.size(D));
  int64_t Len = static_cast<int64_t>(Dims.size());
  C.Outputs[0] = Tensor::fromVector(Dims, Shape{Len});
}

void kernelSize(KernelContext &C) {
  C.Outputs[0] = Tensor::scalar<int64_t>(C.in(0).numel());
}

} // namespace nng::backends::reference
