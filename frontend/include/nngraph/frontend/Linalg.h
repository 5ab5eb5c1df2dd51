//===- Linalg.h - Matrix functions and factorizations ------------*- C++
//-*-===//
//
// The linear algebra beyond matrix products (those are in TensorOps.h):
// torch.matrix_exp, torch.geqrf, torch.linalg.householder_product and
// torch.linalg.solve, with PyTorch's names and conventions. All take a
// matrix or a batch of matrices (..., m, n). matrix_exp,
// householder_product and solve are compositions of tensor operations
// (matmul, slicing, arithmetic), so autograd differentiates them and the
// tracer records them like any other code; their data-dependent choices
// (matrix_exp's number of squarings, solve's pivots) are read from the
// values (a proxy's example values while tracing). geqrf is computed on
// the data in double precision and has no gradient, like PyTorch's.
//
//   Tensor Q = matrix_exp(A - A.transpose(-2, -1)); // orthogonal
//   auto [R, Tau] = geqrf(M);
//   Tensor Q2 = linalg::householder_product(R, Tau); // M's Q factor
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Tensor.h"

#include <utility>

namespace nng {

/// torch.matrix_exp: e^A of a square matrix or batch (floating point),
/// by scaling and squaring with a Taylor approximant (relative error
/// ~1e-15 in f64, f32 rounding in f32).
Tensor matrix_exp(const Tensor &A);

/// torch.geqrf: the QR factorization of A (..., m, n) in LAPACK's compact
/// form: the returned matrix holds R on and above the diagonal and the
/// Householder vectors below it (their leading 1 implicit), Tau (...,
/// min(m, n)) the reflectors' scalars; Q = H_1 H_2 ... H_k with H_i = I -
/// tau_i v_i v_i^T. Signs and zero tau (a column already reduced, and
/// the last column of a square matrix) as LAPACK's dgeqrf. No gradient.
std::pair<Tensor, Tensor> geqrf(const Tensor &A);

namespace linalg {

/// torch.linalg.householder_product: the first n columns of H_1 ... H_k
/// for A (..., m, n) holding the vectors v_i below its diagonal (the
/// leading 1 implicit, the rest of A ignored) and Tau (..., k), k <= n <=
/// m. Differentiable in A and Tau.
Tensor householder_product(const Tensor &A, const Tensor &Tau);

/// torch.linalg.solve: X with A X = B for a square A (..., n, n) and B
/// (..., n, k), batch dims broadcast, or a vector B (n) (X is then a
/// vector). Unlike torch, a B of shape A.shape[:-1] with batch dims is a
/// matrix, not a batch of vectors: unsqueeze(-1) it. Gauss-Jordan
/// elimination with partial pivoting; throws naming the column when A is
/// singular. Differentiable in A and B.
Tensor solve(const Tensor &A, const Tensor &B);

} // namespace linalg
} // namespace nng
