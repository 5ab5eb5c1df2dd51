//===- KernelsEinsum.cpp - Einsum and block rearrangements ----------------===//
//
// Reference kernels of Einsum (the equation resolved by planEinsum; one
// loop over every label's extent, output labels outermost, summing the
// product of the operands; repeated labels read diagonals, ellipsis axes of
// extent 1 broadcast; floats in double, integers wrapping in int64),
// DepthToSpace (DCR and CRD) and SpaceToDepth as reshape-transpose-reshape,
// and MaxUnpool (scatters X into a zero tensor at the flat positions I of
// the default unpooled shape; an explicit output_shape pads that shape at
// the end of each axis, as ONNX Runtime does).
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "nngraph/ir/EinsumEquation.h"

#include <cstring>

namespace nng::backends::reference {

namespace {

/// Einsum over operands already converted to Elem (double or int64_t).
template <typename Elem>
Tensor einsumLoop(const std::vector<Tensor> &Ops, const ir::EinsumPlan &Plan,
                  const std::vector<int64_t> &Extent, DType ElemT) {
  // Loop order: output labels, then the contracted ones.
  std::vector<int> Order = Plan.OutputLabels;
  std::vector<bool> IsOut(Plan.NumLabels, false);
  for (int L : Order)
    IsOut[L] = true;
  for (int L = 0; L < Plan.NumLabels; ++L)
    if (!IsOut[L])
      Order.push_back(L);
  size_t NL = Order.size(), NO = Ops.size();
  // Per operand, the element stride of each loop level.
  std::vector<std::vector<int64_t>> Str(NO, std::vector<int64_t>(NL, 0));
  for (size_t K = 0; K < NO; ++K)
    for (size_t A = 0; A < Plan.InputLabels[K].size(); ++A) {
      int L = Plan.InputLabels[K][A];
      if (Ops[K].size(A) == 1 && Extent[L] != 1)
        continue; // A broadcast ellipsis axis.
      size_t Level = std::find(Order.begin(), Order.end(), L) - Order.begin();
      Str[K][Level] += Ops[K].strides()[A];
    }
  std::vector<int64_t> Size(NL);
  Shape OutShape;
  int64_t OutNumel = 1, Total = 1;
  for (size_t Level = 0; Level < NL; ++Level) {
    Size[Level] = Extent[Order[Level]];
    Total *= Size[Level];
    if (Level < Plan.OutputLabels.size()) {
      OutShape.push_back(Size[Level]);
      OutNumel *= Size[Level];
    }
  }
  Tensor Out = Tensor::empty(OutShape, ElemT);
  Elem *PO = mutPtr<Elem>(Out);
  std::fill(PO, PO + OutNumel, Elem(0));
  if (Total == 0)
    return Out;
  int64_t Inner = Total / OutNumel;
  std::vector<const Elem *> P(NO);
  for (size_t K = 0; K < NO; ++K)
    P[K] = ptr<Elem>(Ops[K]);
  std::vector<int64_t> Idx(NL, 0), Off(NO, 0);
  for (int64_t It = 0; It < Total; ++It) {
    Elem Prod = 1;
    for (size_t K = 0; K < NO; ++K) {
      if constexpr (std::is_integral_v<Elem>)
        Prod = Wrap<Elem>::mul(Prod, P[K][Off[K]]);
      else
        Prod *= P[K][Off[K]];
    }
    Elem &Dst = PO[It / Inner];
    if constexpr (std::is_integral_v<Elem>)
      Dst = Wrap<Elem>::add(Dst, Prod);
    else
      Dst += Prod;
    for (size_t Level = NL; Level-- > 0;) {
      if (++Idx[Level] < Size[Level]) {
        for (size_t K = 0; K < NO; ++K)
          Off[K] += Str[K][Level];
        break;
      }
      for (size_t K = 0; K < NO; ++K)
        Off[K] -= (Size[Level] - 1) * Str[K][Level];
      Idx[Level] = 0;
    }
  }
  return Out;
}

/// Fails unless X is 4-D; returns the positive blocksize.
int64_t checkBlocks(const KernelContext &C, const Tensor &X) {
  if (X.rank() != 4)
    C.fail("input must be [N, C, H, W], got ", X.shape().toString());
  int64_t B = C.attrInt("blocksize");
  if (B <= 0)
    C.fail("attribute blocksize = ", B, " must be positive");
  return B;
}

} // namespace

void kernelEinsum(KernelContext &C) {
  DType T = C.in(0).dtype();
  std::vector<int64_t> Ranks;
  for (const Tensor &X : C.Inputs) {
    requireSameDType(C, C.in(0), X, "Inputs[0]", "every operand");
    Ranks.push_back(static_cast<int64_t>(X.rank()));
  }
  if (T == DType::Bool)
    C.fail("operands must be numeric, got bool");
  ir::EinsumPlan Plan;
  std::string Error;
  if (!ir::planEinsum(C.attrString("equation"), Ranks, Plan, Error))
    C.fail(Error);
  // Every label's extent: letters must agree, ellipsis axes broadcast.
  std::vector<int64_t> Extent(Plan.NumLabels, -1);
  for (size_t K = 0; K < C.Inputs.size(); ++K)
    for (size_t A = 0; A < Plan.InputLabels[K].size(); ++A) {
      int L = Plan.InputLabels[K][A];
      int64_t D = C.in(K).size(A);
      bool Broadcast = L < Plan.EllipsisRank;
      if (Extent[L] < 0 || (Broadcast && Extent[L] == 1))
        Extent[L] = D;
      else if (D != Extent[L] && !(Broadcast && D == 1))
        C.fail("label '", Plan.LabelNames[L], "' has extents ", Extent[L],
               " and ", D, " (operand ", K, ", shape ",
               C.in(K).shape().toString(), ")");
    }
  bool Float = isFloatingPoint(T);
  DType ElemT = Float ? DType::F64 : DType::I64;
  std::vector<Tensor> Ops;
  for (const Tensor &X : C.Inputs)
    Ops.push_back(X.to(ElemT));
  Tensor Out = Float ? einsumLoop<double>(Ops, Plan, Extent, ElemT)
                     : einsumLoop<int64_t>(Ops, Plan, Extent, ElemT);
  C.Outputs[0] = Out.to(T);
}

void kernelDepthToSpace(KernelContext &C) {
  Tensor X = C.in(0).contiguous();
  int64_t B = checkBlocks(C, X);
  int64_t N = X.size(0), Ch = X.size(1), H = X.size(2), W = X.size(3);
  if (Ch % (B * B) != 0)
    C.fail("channels ", Ch, " are not divisible by blocksize^2 = ", B * B);
  int64_t OC = Ch / (B * B);
  const std::string &Mode = C.attrString("mode");
  Tensor Y;
  if (Mode == "DCR")
    Y = X.reshape(Shape{N, B, B, OC, H, W}).permute({0, 3, 4, 1, 5, 2});
  else if (Mode == "CRD")
    Y = X.reshape(Shape{N, OC, B, B, H, W}).permute({0, 1, 4, 2, 5, 3});
  else
    C.fail("attribute mode = '", Mode, "' must be 'DCR' or 'CRD'");
  C.Outputs[0] = Y.contiguous().reshape(Shape{N, OC, H * B, W * B});
}

void kernelSpaceToDepth(KernelContext &C) {
  Tensor X = C.in(0).contiguous();
  int64_t B = checkBlocks(C, X);
  int64_t N = X.size(0), Ch = X.size(1), H = X.size(2), W = X.size(3);
  if (H % B != 0 || W % B != 0)
    C.fail("height ", H, " and width ", W, " must be divisible by blocksize ",
           B);
  Tensor Y = X.reshape(Shape{N, Ch, H / B, B, W / B, B})
                 .permute({0, 3, 5, 1, 2, 4})
                 .contiguous();
  C.Outputs[0] = Y.reshape(Shape{N, Ch * B * B, H / B, W / B});
}

void kernelMaxUnpool(KernelContext &C) {
  Tensor X = C.in(0).contiguous();
  const Tensor &I = C.in(1);
  requireFloat(C, X, "X");
  if (I.shape() != X.shape() || !isIntegral(I.dtype()))
    C.fail("indices I (", dtypeName(I.dtype()), I.shape().toString(),
           ") must be integers of the shape of X ", X.shape().toString());
  if (X.rank() < 3)
    C.fail("X must be [N, C, D1, ...], got ", X.shape().toString());
  // The default output: what MaxPool's geometry inverts to (the transposed
  // window of kernel_shape, strides and pads).
  Shape Default{X.size(0), X.size(1)};
  for (int64_t E : transposedWindow(C, X.shape(), {}).Out)
    Default.push_back(E);
  Tensor &Y = C.allocOutput(0);
  // An explicit output_shape pads the default output at the end of each
  // axis: indices keep their coordinates in the default output.
  if (Y.rank() != Default.rank())
    C.fail("output_shape ", Y.shape().toString(), " must have rank ",
           Default.rank());
  for (size_t A = 0; A < Default.rank(); ++A)
    if (Y.size(A) < Default[A] || (A < 2 && Y.size(A) != Default[A]))
      C.fail("output_shape ", Y.shape().toString(),
             " is smaller than the unpooled shape ", Default.toString(),
             " (or differs on N or C)");
  std::memset(Y.rawData(), 0, Y.nbytes());
  std::vector<int64_t> Ind = I.toIntVector(), Pos(Default.rank());
  size_t ES = X.elementSize();
  const char *PX = static_cast<const char *>(X.rawData());
  char *PY = static_cast<char *>(Y.rawData());
  for (int64_t J = 0; J < X.numel(); ++J) {
    if (Ind[J] < 0 || Ind[J] >= Default.numel())
      C.fail("index ", Ind[J], " at position ", J,
             " is out of range for the unpooled shape ", Default.toString(),
             " (valid: [0, ", Default.numel() - 1, "])");
    unflatten(Ind[J], Default.dims(), Pos.data());
    int64_t At = 0;
    for (size_t A = 0; A < Pos.size(); ++A)
      At = At * Y.size(A) + Pos[A];
    std::memcpy(PY + At * ES, PX + J * ES, ES);
  }
}

} // namespace nng::backends::reference
