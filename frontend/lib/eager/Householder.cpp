//===- Householder.cpp - geqrf and linalg.householder_product -------------===//
//
// geqrf: the Householder QR factorization of each matrix, computed in
// double on the data as LAPACK's unblocked dgeqr2/dlarfg do it (beta =
// -sign(alpha) ||x||, tau = (beta - alpha) / beta, v = x / (alpha - beta);
// tau = 0 when nothing is left to reduce), so the factors agree with
// torch.geqrf up to rounding. householder_product: H_1 ... H_k applied to
// the first n columns of the identity, right to left, with tensor ops so
// that autograd differentiates it.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/detail/EagerInternal.h"
#include "nngraph/frontend/Linalg.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

#include <cmath>

namespace nng {

using detail::describe;

namespace {

/// Factors the row-major M x N matrix at A in place (R on and above the
/// diagonal, the vectors below); writes the min(M, N) scalars to Tau.
void geqr2(double *A, int64_t M, int64_t N, double *Tau) {
  auto At = [&](int64_t R, int64_t C) -> double & { return A[R * N + C]; };
  int64_t K = std::min(M, N);
  for (int64_t J = 0; J < K; ++J) {
    double Alpha = At(J, J);
    double XNorm = 0;
    for (int64_t R = J + 1; R < M; ++R)
      XNorm = std::hypot(XNorm, At(R, J));
    if (M - J <= 1 || XNorm == 0) { // H = I (dlarfg).
      Tau[J] = 0;
      continue;
    }
    double Beta = -std::copysign(std::hypot(Alpha, XNorm), Alpha);
    Tau[J] = (Beta - Alpha) / Beta;
    double Scale = 1.0 / (Alpha - Beta);
    for (int64_t R = J + 1; R < M; ++R)
      At(R, J) *= Scale;
    At(J, J) = Beta;
    // Apply H = I - tau v v^T (v_J = 1) to the trailing columns.
    for (int64_t C = J + 1; C < N; ++C) {
      double W = At(J, C);
      for (int64_t R = J + 1; R < M; ++R)
        W += At(R, J) * At(R, C);
      W *= Tau[J];
      At(J, C) -= W;
      for (int64_t R = J + 1; R < M; ++R)
        At(R, C) -= W * At(R, J);
    }
  }
}

void checkFloatingMatrix(const char *Op, const char *Name, const Tensor &T) {
  if (!T.defined())
    fail(ErrorKind::InvalidArgument, Op, ": ", Name, " is undefined");
  if (T.dim() < 2)
    fail(ErrorKind::ShapeMismatch, Op, ": ", Name, " ", describe(T),
         " must be a matrix or a batch of matrices (..., m, n)");
  if (T.dtype() != DType::F32 && T.dtype() != DType::F64)
    fail(ErrorKind::InvalidArgument, Op, ": ", Name, " ", describe(T),
         " must be f32 or f64; convert it with .to(DType::F32)");
}

} // namespace

std::pair<Tensor, Tensor> geqrf(const Tensor &A) {
  checkFloatingMatrix("geqrf", "A", A);
  // No gradient, as torch.geqrf's: the results are new leaves.
  std::vector<int64_t> Dims = A.shape().dims();
  int64_t M = Dims[Dims.size() - 2], N = Dims.back(), K = std::min(M, N);
  std::vector<double> V = A.data().toDoubleVector();
  std::vector<int64_t> TauDims(Dims.begin(), Dims.end() - 2);
  TauDims.push_back(K);
  int64_t Batch = M * N > 0 ? static_cast<int64_t>(V.size()) / (M * N) : 0;
  std::vector<double> Tau(static_cast<size_t>(std::max<int64_t>(Batch, 1) * K));
  for (int64_t B = 0; B < Batch; ++B)
    geqr2(V.data() + B * M * N, M, N, Tau.data() + B * K);
  Tau.resize(static_cast<size_t>(Batch * K));
  return {tensor(V, Dims, A.dtype()), tensor(Tau, TauDims, A.dtype())};
}

namespace linalg {

Tensor householder_product(const Tensor &A, const Tensor &Tau) {
  const char *Op = "linalg::householder_product";
  checkFloatingMatrix(Op, "A", A);
  if (!Tau.defined())
    fail(ErrorKind::InvalidArgument, Op, ": tau is undefined");
  int64_t M = A.shape()[A.dim() - 2], N = A.shape()[A.dim() - 1];
  if (M < N)
    fail(ErrorKind::ShapeMismatch, Op, ": A ", describe(A),
         " must have at least as many rows as columns (m >= n)");
  if (Tau.dim() != A.dim() - 1)
    fail(ErrorKind::ShapeMismatch, Op, ": tau ", describe(Tau),
         " must have one dimension less than A ", describe(A));
  int64_t K = Tau.shape()[Tau.dim() - 1];
  if (K > N)
    fail(ErrorKind::ShapeMismatch, Op, ": tau ", describe(Tau), " has ", K,
         " scalars for A ", describe(A), " with ", N,
         " columns; it may have at most one per column");
  for (int64_t D = 0; D + 2 < A.dim(); ++D)
    if (A.shape()[D] != Tau.shape()[D])
      fail(ErrorKind::ShapeMismatch, Op, ": the batch dimensions of A ",
           describe(A), " and tau ", describe(Tau), " differ");
  if (Tau.dtype() != A.dtype())
    fail(ErrorKind::InvalidArgument, Op, ": tau ", describe(Tau),
         " must have A's dtype (", dtypeName(A.dtype()), ")");
  // Column i of V is v_i: zeros above row i, 1 at row i, A's entries below.
  Tensor Eye = slice(eye(M, A.dtype()), 1, 0, N);
  Tensor V = tril(A, -1) + Eye;
  Tensor Q = Eye;
  for (int64_t I = K - 1; I >= 0; --I) {
    Tensor Vi = narrow(V, -1, I, 1);                 // (..., m, 1)
    Tensor Ti = narrow(Tau, -1, I, 1).unsqueeze(-1); // (..., 1, 1)
    Q = Q - matmul(Vi * Ti, matmul(Vi.transpose(-2, -1), Q));
  }
  if (K == 0 && A.dim() > 2)
    Q = expand(Q, SymIntList(A.sym_sizes()));
  return Q;
}

} // namespace linalg
} // namespace nng
