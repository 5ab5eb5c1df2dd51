//===- Shape.cpp - Tensor shapes and strides ------------------------------===//

#include "nngraph/runtime/Shape.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <limits>

namespace nng {

int64_t Shape::dim(int64_t I) const {
  int64_t R = static_cast<int64_t>(rank());
  int64_t A = normalizeAxis(I, R, "dim");
  return Dims[A];
}

int64_t Shape::numel() const {
  int64_t N = 1;
  for (int64_t D : Dims)
    N *= D;
  return N;
}

std::string intsToString(const std::vector<int64_t> &V) {
  std::string S = "[";
  for (size_t I = 0; I < V.size(); ++I) {
    if (I)
      S += ", ";
    S += std::to_string(V[I]);
  }
  return S + "]";
}

std::string Shape::toString() const { return intsToString(Dims); }

void Shape::validate() const {
  int64_t N = 1, Span = 1;
  for (size_t I = 0; I < Dims.size(); ++I) {
    NNG_CHECK(Dims[I] >= 0, "invalid shape ", toString(), ": extent ", Dims[I],
              " of axis ", I, " is negative");
    if (Dims[I] != 0 && N > std::numeric_limits<int64_t>::max() / Dims[I])
      fail(ErrorKind::InvalidArgument, "invalid shape ", toString(),
           ": the element count overflows 64 bits");
    N *= Dims[I];
    // contiguousStrides() multiplies the extents with 0 counted as 1, so a
    // zero-size shape with huge extents ([0, 2^40, 2^40]) must be refused
    // too.
    int64_t E = std::max<int64_t>(Dims[I], 1);
    if (Span > std::numeric_limits<int64_t>::max() / E)
      fail(ErrorKind::InvalidArgument, "invalid shape ", toString(),
           ": its strides overflow 64 bits");
    Span *= E;
  }
}

Strides contiguousStrides(const Shape &S) {
  Strides St(S.rank());
  int64_t Acc = 1;
  for (size_t I = S.rank(); I-- > 0;) {
    St[I] = Acc;
    Acc *= std::max<int64_t>(S[I], 1);
  }
  return St;
}

int64_t normalizeAxis(int64_t Axis, int64_t Rank, const char *What) {
  if (Axis < -Rank || Axis >= Rank || Rank == 0)
    fail(ErrorKind::InvalidArgument, What, " ", Axis,
         " is out of range for rank ", Rank, " (valid: [", -Rank, ", ",
         Rank - 1, "])");
  return Axis < 0 ? Axis + Rank : Axis;
}

Shape broadcastShapes(const Shape &A, const Shape &B) {
  size_t R = std::max(A.rank(), B.rank());
  std::vector<int64_t> Out(R);
  for (size_t I = 0; I < R; ++I) {
    int64_t DA = I < R - A.rank() ? 1 : A[I - (R - A.rank())];
    int64_t DB = I < R - B.rank() ? 1 : B[I - (R - B.rank())];
    if (DA == DB || DB == 1)
      Out[I] = DA;
    else if (DA == 1)
      Out[I] = DB;
    else
      fail(ErrorKind::ShapeMismatch, "shapes ", A.toString(), " and ",
           B.toString(), " cannot be broadcast: axis ", I, " has ", DA, " vs ",
           DB);
  }
  return Shape(std::move(Out));
}

} // namespace nng
