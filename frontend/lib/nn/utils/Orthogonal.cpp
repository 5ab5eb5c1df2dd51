//===- Orthogonal.cpp - parametrizations::orthogonal ----------------------===//
//
// PyTorch 1.13's _Orthogonal and orthogonal() (Parametrizations.h): the
// three maps from the original to an orthogonal matrix (matrix_exp and
// cayley of a skew-symmetric matrix, a product of Householder
// reflectors), the transposition of wide matrices, the trivialization's
// base, and right_inverse with PyTorch's QR-based initialization.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Linalg.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/utils/Parametrizations.h"
#include "nngraph/runtime/Error.h"

#include <limits>

namespace nng::nn::utils::parametrizations {

namespace {

int64_t rows(const Tensor &X) { return X.shape()[X.dim() - 2]; }
int64_t cols(const Tensor &X) { return X.shape()[X.dim() - 1]; }
Tensor mT(const Tensor &X) { return X.transpose(-2, -1); }

/// The batch dims of X followed by R, C.
std::vector<int64_t> batchWith(const Tensor &X, int64_t R, int64_t C) {
  std::vector<int64_t> S(X.shape().dims().begin(), X.shape().dims().end() - 2);
  S.push_back(R);
  S.push_back(C);
  return S;
}

/// The R x C matrix with ones on its diagonal.
Tensor eyeRect(int64_t R, int64_t C, DType T) {
  return slice(slice(eye(std::max(R, C), T), 0, 0, R), 1, 0, C);
}

/// The diagonal of each matrix of X (..., n, k), n >= k, as (..., k).
Tensor diagonalOf(const Tensor &X) {
  return sum(X * eyeRect(rows(X), cols(X), X.dtype()), {-2});
}

/// torch's _is_orthogonal: Q^T Q = I within 10 n eps.
bool isOrthogonal(const Tensor &Q) {
  double Eps = Q.dtype() == DType::F64 ? std::numeric_limits<double>::epsilon()
                                       : std::numeric_limits<float>::epsilon();
  Tensor Id = eye(cols(Q), Q.dtype());
  return allclose(matmul(mT(Q), Q), expand(Id, batchWith(Q, cols(Q), cols(Q))),
                  1e-5, 10.0 * static_cast<double>(rows(Q)) * Eps);
}

/// torch's _make_orthogonal: the Q factor of tall A with diag(R) >= 0.
Tensor makeOrthogonal(const Tensor &A) {
  auto [X, Tau] = geqrf(A);
  Tensor Q = linalg::householder_product(X, Tau);
  return Q * sign(diagonalOf(X)).unsqueeze(-2);
}

const char *mapName(Orthogonal::Map M) {
  switch (M) {
  case Orthogonal::Map::MatrixExp:
    return "matrix_exp";
  case Orthogonal::Map::Cayley:
    return "cayley";
  case Orthogonal::Map::Householder:
    return "householder";
  }
  return "?";
}

} // namespace

Orthogonal::Orthogonal(const Tensor &weight, Map orthogonal_map,
                       bool use_trivialization)
    : shape(weight.shape()), orthogonal_map(orthogonal_map),
      use_trivialization(use_trivialization) {
  set_type_name("_Orthogonal");
  if (weight.dim() < 2)
    fail(ErrorKind::InvalidArgument,
         "orthogonal: expected a matrix or a "
         "batch of matrices, got a tensor of ",
         weight.dim(), " dimension(s) ", shape.toString());
  if (use_trivialization)
    base = register_buffer("base", Tensor());
}

Tensor Orthogonal::forward(const Tensor &Original) {
  if (Original.shape() != shape)
    fail(ErrorKind::ShapeMismatch, "_Orthogonal: the original has shape ",
         Original.shape().toString(), "; the parametrization was made for ",
         shape.toString());
  Tensor X = Original;
  int64_t N = rows(X), K = cols(X);
  bool Transposed = N < K;
  if (Transposed) {
    X = mT(X);
    std::swap(N, K);
  }
  // X is tall (N >= K).
  Tensor Q;
  if (orthogonal_map != Map::Householder) {
    X = tril(X);
    if (N != K)
      X = cat({X, zeros(batchWith(X, N, N - K), X.dtype())}, -1);
    Tensor A = X - mT(X); // Skew-symmetric.
    if (orthogonal_map == Map::MatrixExp) {
      Q = matrix_exp(A);
    } else {
      Tensor Id = eye(N, A.dtype());
      Q = linalg::solve(Id - A * 0.5, Id + A * 0.5);
    }
    if (N != K)
      Q = narrow(Q, -1, 0, K);
  } else {
    Tensor A = tril(X, -1);
    Tensor Tau = 2.0 / (1.0 + sum(A * A, {-2}));
    Q = linalg::householder_product(A, Tau);
    // The diagonal's signs, truncated toward zero as PyTorch's .int(); no
    // gradient flows to the diagonal.
    Tensor Signs = diagonalOf(X.detach()).to(DType::I32).to(X.dtype());
    Q = Q * Signs.unsqueeze(-2);
  }
  if (use_trivialization) {
    if (!base.defined())
      fail(ErrorKind::InvalidArgument,
           "_Orthogonal: the buffer 'base' is "
           "not set; register the parametrization with orthogonal() on an "
           "unparametrized tensor, or assign a value "
           "(parametrize::assign), which sets it");
    Q = matmul(base, Q);
  }
  return Transposed ? mT(Q) : Q;
}

Tensor Orthogonal::right_inverse(const Tensor &Value) {
  NoGradGuard NoGrad;
  if (Value.shape() != shape)
    fail(ErrorKind::ShapeMismatch,
         "_Orthogonal.right_inverse: expected a "
         "matrix or batch of matrices of shape ",
         shape.toString(), ", got a tensor of shape ",
         Value.shape().toString());
  if (Value.dtype() != DType::F32 && Value.dtype() != DType::F64)
    fail(ErrorKind::InvalidArgument, "_Orthogonal.right_inverse: the value is ",
         dtypeName(Value.dtype()), "; orthogonal needs f32 or f64");
  Tensor Q = Value.detach();
  int64_t N = rows(Q), K = cols(Q);
  bool Transposed = N < K;
  if (Transposed) {
    Q = mT(Q);
    std::swap(N, K);
  }
  if (!use_trivialization) {
    if (orthogonal_map != Map::Householder)
      throw parametrize::NotImplemented(
          std::string("_Orthogonal.right_inverse: it is not possible to "
                      "assign to the ") +
          mapName(orthogonal_map) +
          " parametrization when use_trivialization=false; use the "
          "householder map or use_trivialization=true");
    // The reflectors of Q's QR, the diagonal holding diag(R)'s signs
    // (flipped where no reflection was used: forward's tau is then 2).
    auto [A, Tau] = geqrf(Q);
    Tensor Mask = eyeRect(N, K, A.dtype());
    Tensor Signs = sign(diagonalOf(A));
    Signs = where(Tau == 0.0, -Signs, Signs);
    A = A * (1.0 - Mask) + Mask * Signs.unsqueeze(-2);
    return Transposed ? mT(A).contiguous() : A;
  }
  if (N == K) {
    Q = isOrthogonal(Q) ? Q.clone() : makeOrthogonal(Q);
  } else {
    // Complete Q to a square matrix with random columns.
    Tensor Extra = randn(batchWith(Q, N, N - K), Q.dtype());
    Q = makeOrthogonal(cat({Q, Extra}, -1));
  }
  base = replace_buffer("base", Q.contiguous());
  // -I: householder(0) is then eye(n, k), and A = 0 for the others.
  return -expand(eyeRect(rows(Value), cols(Value), Value.dtype()),
                 Value.shape().dims())
              .contiguous();
}

ModuleBase &orthogonal(ModuleBase &M, const std::string &Name,
                       std::optional<std::string> OrthogonalMap,
                       bool UseTrivialization) {
  Tensor Weight;
  if (parametrize::is_parametrized(M, Name)) {
    Weight = parametrize::value(M, Name);
  } else {
    for (const auto &[N, T] : M.named_parameters("", false, false))
      if (N == Name)
        Weight = T;
    for (const auto &[N, T] : M.named_buffers("", false, false))
      if (N == Name)
        Weight = T;
  }
  if (!Weight.defined())
    fail(ErrorKind::InvalidArgument, "orthogonal: ", M.type_name(),
         " has no parameter or buffer '", Name, "'");
  if (Weight.dim() < 2)
    fail(ErrorKind::InvalidArgument, "orthogonal(", M.type_name(), ", '", Name,
         "'): expected a matrix or a batch of matrices, got a tensor "
         "of ",
         Weight.dim(), " dimension(s) ", Weight.shape().toString());
  if (Weight.dtype() != DType::F32 && Weight.dtype() != DType::F64)
    fail(ErrorKind::InvalidArgument, "orthogonal(", M.type_name(), ", '", Name,
         "'): the tensor is ", dtypeName(Weight.dtype()),
         "; orthogonal needs f32 or f64 (convert the module first)");
  std::string MapName =
      OrthogonalMap
          ? *OrthogonalMap
          : (rows(Weight) == cols(Weight) ? "matrix_exp" : "householder");
  Orthogonal::Map Map;
  if (MapName == "matrix_exp")
    Map = Orthogonal::Map::MatrixExp;
  else if (MapName == "cayley")
    Map = Orthogonal::Map::Cayley;
  else if (MapName == "householder")
    Map = Orthogonal::Map::Householder;
  else
    fail(ErrorKind::InvalidArgument, "orthogonal(", M.type_name(), ", '", Name,
         "'): orthogonal_map has to be one of \"matrix_exp\", "
         "\"cayley\", \"householder\"; got \"",
         MapName, "\"");
  parametrize::register_parametrization(
      M, Name, make<Orthogonal>(Weight, Map, UseTrivialization),
      /*Unsafe=*/true);
  return M;
}

} // namespace nng::nn::utils::parametrizations
