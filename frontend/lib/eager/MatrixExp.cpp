//===- MatrixExp.cpp - torch.matrix_exp -----------------------------------===//
//
// e^A by scaling and squaring: A is scaled by 2^-s so that its 1-norm is at
// most 1, the Taylor polynomial of degree 18 (f64) or 12 (f32) is evaluated
// by Horner's rule with matmuls, and the result squared s times. The
// truncation error is below the dtype's rounding (1/19! ~ 8e-18, 1/13! ~
// 2e-10 relative), and autograd differentiates the composition. s is read
// from A's values (Linalg.h).
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/detail/EagerInternal.h"
#include "nngraph/frontend/Linalg.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <cmath>

namespace nng {

using detail::describe;

namespace {

/// The largest 1-norm (maximal absolute column sum) over A's matrices;
/// infinite or NaN when an entry is.
double maxOneNorm(const Tensor &A) {
  // A proxy's example values (Linalg.h); data() does not refuse them.
  std::vector<double> V = A.data().toDoubleVector();
  int64_t N = A.data().shape()[A.dim() - 1];
  double Best = 0;
  for (size_t Base = 0; Base + N * N <= V.size(); Base += N * N)
    for (int64_t C = 0; C < N; ++C) {
      double S = 0;
      for (int64_t R = 0; R < N; ++R)
        S += std::abs(V[Base + R * N + C]);
      if (!std::isfinite(S))
        return S;
      Best = std::max(Best, S);
    }
  return Best;
}

} // namespace

Tensor matrix_exp(const Tensor &A) {
  if (!A.defined())
    fail(ErrorKind::InvalidArgument, "matrix_exp: the input is undefined");
  if (A.dim() < 2 || A.shape()[A.dim() - 1] != A.shape()[A.dim() - 2])
    fail(ErrorKind::ShapeMismatch, "matrix_exp: A ", describe(A),
         " must be a square matrix or a batch of square matrices (..., n, n)");
  if (A.dtype() != DType::F32 && A.dtype() != DType::F64)
    fail(ErrorKind::InvalidArgument, "matrix_exp: A ", describe(A),
         " must be f32 or f64; convert it with .to(DType::F32)");
  int64_t N = A.shape()[A.dim() - 1];
  if (A.numel() == 0)
    return A.clone();
  double Norm = maxOneNorm(A);
  if (!std::isfinite(Norm))
    fail(ErrorKind::InvalidArgument, "matrix_exp: A ", describe(A),
         " has an infinite or NaN entry");
  int Squarings = Norm > 1.0 ? static_cast<int>(std::ceil(std::log2(Norm))) : 0;
  int Degree = A.dtype() == DType::F64 ? 18 : 12;
  Tensor X = Squarings ? A / std::ldexp(1.0, Squarings) : A;
  Tensor Id = eye(N, A.dtype());
  // Horner: I + X/1 (I + X/2 (... (I + X/m))).
  Tensor P = Id + X / static_cast<double>(Degree);
  for (int J = Degree - 1; J >= 1; --J)
    P = Id + matmul(X, P) / static_cast<double>(J);
  for (int I = 0; I < Squarings; ++I)
    P = matmul(P, P);
  return P;
}

} // namespace nng
