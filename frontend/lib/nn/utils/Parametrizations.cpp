//===- Parametrizations.cpp - weight_norm, spectral_norm -----------------===//
//
// The two parametrization modules and their registration, written after
// PyTorch's formulas (Parametrizations.h).
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/nn/utils/Parametrizations.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

namespace nng::nn::utils::parametrizations {

namespace {

/// x / max(||x||_2, Eps) over the whole (1-d) tensor (F.normalize, dim 0).
Tensor normalize(const Tensor &X, double Eps) {
  return X / clamp(sqrt(sum(X * X)), Eps, std::nullopt);
}

/// ||V|| over every dim but Dim, kept as size-1 dims (Dim -1: over all).
Tensor normExceptDim(const Tensor &V, int64_t Dim) {
  std::vector<int64_t> Dims;
  for (int64_t D = 0; D < V.dim(); ++D)
    if (D != Dim)
      Dims.push_back(D);
  if (Dim == -1 || Dims.empty())
    return sqrt(sum(V * V));
  return sqrt(sum(V * V, Dims, /*KeepDim=*/true));
}

} // namespace

WeightNorm::WeightNorm(int64_t dim) : dim(dim) { set_type_name("_WeightNorm"); }

Tensor WeightNorm::forward(const Tensor &weight_g, const Tensor &weight_v) {
  return weight_v * (weight_g / normExceptDim(weight_v, dim));
}

std::vector<Tensor> WeightNorm::right_inverse(const Tensor &weight) {
  return {normExceptDim(weight, dim), weight};
}

SpectralNorm::SpectralNorm(const Tensor &weight, int64_t n_power_iterations,
                           int64_t dim, double eps)
    : n_power_iterations(n_power_iterations),
      dim(dim < 0 ? dim + weight.dim() : dim), eps(eps) {
  set_type_name("_SpectralNorm");
  if (n_power_iterations <= 0)
    fail(ErrorKind::InvalidArgument,
         "spectral_norm: n_power_iterations must be positive, got ",
         n_power_iterations);
  if (this->dim < 0 || (weight.dim() > 0 && this->dim >= weight.dim()))
    fail(ErrorKind::InvalidArgument, "spectral_norm: dim ", dim,
         " is out of range for a weight of shape ", weight.shape().toString());
  if (weight.dim() > 1) {
    NoGradGuard NoGrad;
    Tensor W = matrixOf(weight.detach());
    _u = register_buffer("_u", normalize(randn({W.size(0)}, TensorOptions(W.dtype())), eps));
    _v = register_buffer("_v", normalize(randn({W.size(1)}, TensorOptions(W.dtype())), eps));
    powerMethod(W, 15);
  }
}

Tensor SpectralNorm::matrixOf(const Tensor &Weight) const {
  Tensor W = Weight;
  if (dim != 0) {
    std::vector<int64_t> Perm = {dim};
    for (int64_t D = 0; D < W.dim(); ++D)
      if (D != dim)
        Perm.push_back(D);
    W = permute(W, Perm);
  }
  return flatten(W, 1);
}

void SpectralNorm::powerMethod(const Tensor &WeightMat, int64_t Iterations) {
  NoGradGuard NoGrad;
  Tensor W = WeightMat.detach();
  for (int64_t I = 0; I < Iterations; ++I) {
    _u.copy_(normalize(matmul(W, _v), eps));
    _v.copy_(normalize(matmul(W.transpose(0, 1), _u), eps));
  }
}

Tensor SpectralNorm::forward(const Tensor &weight) {
  if (weight.dim() == 1)
    return normalize(weight, eps);
  Tensor W = matrixOf(weight);
  if (is_training())
    powerMethod(W, n_power_iterations);
  Tensor U = _u.clone(), V = _v.clone();
  Tensor Sigma = sum(U * matmul(W, V));
  return weight / Sigma;
}

ModuleBase &weight_norm(ModuleBase &M, const std::string &Name, int64_t Dim) {
  parametrize::register_parametrization(M, Name, make<WeightNorm>(Dim),
                                        /*Unsafe=*/true);
  return M;
}

ModuleBase &spectral_norm(ModuleBase &M, const std::string &Name,
                          int64_t NPowerIterations, double Eps,
                          std::optional<int64_t> Dim) {
  Tensor Weight;
  for (const auto &[N, T] : M.named_parameters("", false, false))
    if (N == Name)
      Weight = T;
  if (!Weight.defined())
    fail(ErrorKind::InvalidArgument, "spectral_norm: ", M.type_name(),
         " has no parameter '", Name, "'");
  int64_t D = Dim ? *Dim : (M.type_name().rfind("ConvTranspose", 0) == 0 ? 1 : 0);
  parametrize::register_parametrization(
      M, Name, make<SpectralNorm>(Weight, NPowerIterations, D, Eps));
  return M;
}

} // namespace nng::nn::utils::parametrizations
