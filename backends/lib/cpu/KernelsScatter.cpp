//===- KernelsScatter.cpp - ScatterElements as a typed copy loop ----------===//
//
// ScatterElements without a reduction ('none'), for any numeric dtype: the
// output starts as a copy of data, then every update is written at its
// index, in the order of the updates (a repeated index keeps the last
// write, as the reference kernel's loop does). The reference kernel finds
// every element's position by division and writes it through a dtype
// dispatch; this loop walks the indices' rows with an odometer and moves
// elements by their size. torchvision's MultiScaleRoIAlign scatters its
// pooled features ([rois, 256, 7, 7]) this way after every RoiAlign.
// Indices out of range, reductions and strings go to the reference kernel,
// which reports or computes them.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <cstring>

namespace nng::backends::cpu {

namespace {

/// Writes Upd's elements (of type T) into Y at the rows Ind gives along
/// Axis (in Upd's order; already checked to lie in [-N, N), N the axis'
/// extent; negative ones count from the end).
template <typename T>
void scatterRows(const Tensor &Upd, Tensor &Y, const int64_t *Ind,
                 int64_t Axis) {
  const Shape &IS = Upd.shape();
  int64_t R = static_cast<int64_t>(IS.rank());
  std::vector<int64_t> YSt = contiguousStrides(Y.shape());
  const T *PU = static_cast<const T *>(Upd.rawData());
  T *PY = static_cast<T *>(Y.rawData());
  int64_t Inner = IS[R - 1], Rows = IS.numel() / Inner, N = Y.size(Axis);
  auto Wrap = [N](int64_t J) { return J < 0 ? J + N : J; };
  // Output offset of each row's first element without the axis' term, by
  // an odometer over the outer axes of the indices' shape.
  std::vector<int64_t> Pos(static_cast<size_t>(R - 1), 0);
  int64_t Base = 0, InnerSt = YSt[R - 1];
  for (int64_t Row = 0; Row < Rows; ++Row) {
    const int64_t *IR = Ind + Row * Inner;
    const T *U = PU + Row * Inner;
    if (Axis == R - 1) {
      for (int64_t I = 0; I < Inner; ++I)
        PY[Base + Wrap(IR[I]) * InnerSt] = U[I];
    } else {
      int64_t AxisSt = YSt[Axis];
      for (int64_t I = 0; I < Inner; ++I)
        PY[Base + Wrap(IR[I]) * AxisSt + I * InnerSt] = U[I];
    }
    for (int64_t D = R - 2; D >= 0; --D) {
      int64_t St = D == Axis ? 0 : YSt[D];
      Base += St;
      if (++Pos[D] < IS[D])
        break;
      Base -= Pos[D] * St;
      Pos[D] = 0;
    }
  }
}

} // namespace

bool runScatterElements(reference::KernelContext &C) {
  if (C.Inputs.size() != 3 || !C.hasInput(0) || !C.hasInput(1) ||
      !C.hasInput(2))
    return false;
  const Tensor &Data = C.in(0), &Idx = C.in(1), &UpdIn = C.in(2);
  if (C.attrString("reduction") != "none" || !isNumeric(Data.dtype()) ||
      UpdIn.dtype() != Data.dtype() ||
      (Idx.dtype() != DType::I64 && Idx.dtype() != DType::I32))
    return false;
  int64_t R = static_cast<int64_t>(Data.rank());
  if (R == 0 || static_cast<int64_t>(Idx.rank()) != R ||
      Idx.shape() != UpdIn.shape())
    return false;
  int64_t Axis = C.attrInt("axis");
  if (Axis < -R || Axis >= R)
    return false;
  if (Axis < 0)
    Axis += R;
  for (int64_t D = 0; D < R; ++D)
    if (D != Axis && Idx.size(D) > Data.size(D))
      return false;
  // Dense i64 indices are read where they lie (torchvision's are as large
  // as the pooled features), others as a copy.
  std::vector<int64_t> Copy;
  const int64_t *Ind;
  if (Idx.dtype() == DType::I64 && Idx.isContiguous()) {
    Ind = static_cast<const int64_t *>(Idx.rawData());
  } else {
    Copy = Idx.toIntVector();
    Ind = Copy.data();
  }
  int64_t N = Data.size(Axis), Count = Idx.numel();
  for (int64_t I = 0; I < Count; ++I)
    if (Ind[I] < -N || Ind[I] >= N)
      return false; // The reference kernel names the bad index.
  Tensor &Y = allocDenseOutput(C, 0, Data.shape(), Data.dtype());
  Y.copyFrom(Data);
  if (Idx.numel() == 0)
    return true;
  Tensor Upd = UpdIn.contiguous();
  switch (Y.elementSize()) {
  case 1:
    scatterRows<uint8_t>(Upd, Y, Ind, Axis);
    return true;
  case 2:
    scatterRows<uint16_t>(Upd, Y, Ind, Axis);
    return true;
  case 4:
    scatterRows<uint32_t>(Upd, Y, Ind, Axis);
    return true;
  case 8:
    scatterRows<uint64_t>(Upd, Y, Ind, Axis);
    return true;
  default:
    return false; // Not reached: numeric dtypes are 1 to 8 bytes.
  }
}

} // namespace nng::backends::cpu
