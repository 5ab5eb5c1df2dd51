//===- Solve.cpp - torch.linalg.solve -------------------------------------===//
//
// A X = B by Gauss-Jordan elimination with partial pivoting on the
// augmented matrix [A | B], written with tensor ops (row swaps by
// index_select / gather, eliminations by broadcasting), so autograd
// differentiates it. The pivots are chosen from the values at each step
// (Linalg.h); a zero pivot column is reported as a singular matrix.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/detail/EagerInternal.h"
#include "nngraph/frontend/Linalg.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

#include <cmath>

namespace nng::linalg {

using detail::describe;

namespace {

constexpr const char *Op = "linalg::solve";

/// The broadcast of batch shapes BA and BB, or an error naming A and B.
std::vector<int64_t> broadcastBatch(const std::vector<int64_t> &BA,
                                    const std::vector<int64_t> &BB,
                                    const Tensor &A, const Tensor &B) {
  size_t R = std::max(BA.size(), BB.size());
  std::vector<int64_t> Out(R);
  for (size_t I = 0; I < R; ++I) {
    int64_t X = I < R - BA.size() ? 1 : BA[I - (R - BA.size())];
    int64_t Y = I < R - BB.size() ? 1 : BB[I - (R - BB.size())];
    if (X != Y && X != 1 && Y != 1)
      fail(ErrorKind::ShapeMismatch, Op, ": A ", describe(A), " and B ",
           describe(B), ": the batch dimensions do not broadcast");
    Out[I] = X == 1 ? Y : X;
  }
  return Out;
}

} // namespace

Tensor solve(const Tensor &A, const Tensor &B) {
  if (!A.defined() || !B.defined())
    fail(ErrorKind::InvalidArgument, Op, ": an operand is undefined");
  if (A.dim() < 2 || A.shape()[A.dim() - 1] != A.shape()[A.dim() - 2])
    fail(ErrorKind::ShapeMismatch, Op, ": A ", describe(A),
         " must be a square matrix or a batch of square matrices (..., n, n)");
  DType T = promote_types(A.dtype(), B.dtype());
  if (T != DType::F32 && T != DType::F64)
    fail(ErrorKind::InvalidArgument, Op, ": A ", describe(A), " and B ",
         describe(B), " must be f32 or f64; convert them with .to()");
  int64_t N = A.shape()[A.dim() - 1];
  bool IsVector = B.dim() == 1;
  Tensor Bm = IsVector ? B.unsqueeze(-1) : B;
  if (Bm.dim() < 2 || Bm.shape()[Bm.dim() - 2] != N)
    fail(ErrorKind::ShapeMismatch, Op, ": B ", describe(B), " must be (..., ",
         N, ", k) or a vector of ", N, " entries for A ", describe(A));
  int64_t K = Bm.shape()[Bm.dim() - 1];
  std::vector<int64_t> AD = A.shape().dims(), BD = Bm.shape().dims();
  std::vector<int64_t> Batch = broadcastBatch({AD.begin(), AD.end() - 2},
                                              {BD.begin(), BD.end() - 2}, A, B);
  int64_t NB = 1;
  for (int64_t D : Batch)
    NB *= D;
  auto WithBatch = [&](int64_t R, int64_t C) {
    std::vector<int64_t> S = Batch;
    S.push_back(R);
    S.push_back(C);
    return S;
  };
  Tensor M =
      cat({expand(A.to(T), WithBatch(N, N)), expand(Bm.to(T), WithBatch(N, K))},
          -1);
  M = reshape(M, std::vector<int64_t>{NB, N, N + K});
  int64_t W = N + K;
  for (int64_t C = 0; C < N; ++C) {
    // Pivots: the largest magnitude in column C at or below row C.
    std::vector<double> V = M.data().toDoubleVector();
    std::vector<int64_t> Pivot(NB);
    bool Swap = false;
    for (int64_t Bi = 0; Bi < NB; ++Bi) {
      int64_t P = C;
      for (int64_t R = C + 1; R < N; ++R)
        if (std::abs(V[(Bi * N + R) * W + C]) >
            std::abs(V[(Bi * N + P) * W + C]))
          P = R;
      if (V[(Bi * N + P) * W + C] == 0)
        fail(ErrorKind::InvalidArgument, Op, ": A ", describe(A),
             " is singular: column ", C, " has no nonzero pivot",
             NB > 1 ? " (batch element " + std::to_string(Bi) + ")" : "",
             "; check the matrix, or use a least-squares method");
      Pivot[Bi] = P;
      Swap |= P != C;
    }
    if (Swap) {
      if (NB == 1) {
        std::vector<int64_t> Perm(N);
        for (int64_t R = 0; R < N; ++R)
          Perm[R] = R == C ? Pivot[0] : R == Pivot[0] ? C : R;
        M = index_select(M, 1, detail::i64Tensor(Perm));
      } else {
        std::vector<double> Idx(NB * N * W);
        for (int64_t Bi = 0; Bi < NB; ++Bi)
          for (int64_t R = 0; R < N; ++R) {
            int64_t From = R == C ? Pivot[Bi] : R == Pivot[Bi] ? C : R;
            for (int64_t J = 0; J < W; ++J)
              Idx[(Bi * N + R) * W + J] = static_cast<double>(From);
          }
        M = gather(M, 1,
                   tensor(Idx, std::vector<int64_t>{NB, N, W}, DType::I64));
      }
    }
    // Row C divided by its pivot replaces row C; the other rows lose their
    // multiple of it.
    Tensor Row = select(M, 1, C);
    Row = (Row / narrow(Row, 1, C, 1)).unsqueeze(1); // (NB, 1, W)
    std::vector<double> EC(N, 0.0);
    EC[C] = 1;
    Tensor E = tensor(EC, std::vector<int64_t>{N, 1}, T);
    M = (M - narrow(M, 2, C, 1) * Row) * (1.0 - E) + E * Row;
  }
  Tensor X = reshape(narrow(M, 2, N, K), WithBatch(N, K));
  return IsVector ? X.squeeze(-1) : X;
}

} // namespace nng::linalg
