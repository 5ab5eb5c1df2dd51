//===- Parametrizations.h - weight_norm, spectral_norm --------*- C++ -*-===//
//
// torch.nn.utils.parametrizations on Parametrize.h: spectral_norm as
// PyTorch 1.13's (buffers _u and _v of the _SpectralNorm module, one
// power-iteration step per training forward, keys
// parametrizations.weight.original / .0._u / .0._v), and weight_norm as
// PyTorch 2.1's (originals original0 = g, the norm of v over every dim but
// dim, and original1 = v; PyTorch 1.13 has only the hook-based
// torch.nn.utils.weight_norm, whose weight_g / weight_v hold the same
// values). orthogonal is not available (it needs matrix_exp or
// householder_product, which nngraph lacks).
//
//   parametrizations::spectral_norm(*Net->fc);
//   parametrizations::weight_norm(*Net->conv, "weight", /*dim=*/0);
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/nn/utils/Parametrize.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nng::nn::utils::parametrizations {

/// weight = g * v / ||v|| (the norm over every dim but Dim; Dim -1: over
/// all). Prints as _WeightNorm().
class WeightNorm : public Module<WeightNorm> {
public:
  explicit WeightNorm(int64_t dim = 0);
  Tensor forward(const Tensor &weight_g, const Tensor &weight_v);
  /// (g, v) for a weight: its norm except dim, and the weight itself.
  std::vector<Tensor> right_inverse(const Tensor &weight);

  int64_t dim;
};

/// weight / sigma, sigma the largest singular value of the weight as a
/// matrix (dim first), estimated by power iteration on the buffers _u, _v
/// (one step per forward in training; 15 when built). A 1-d weight is
/// normalized instead. Prints as _SpectralNorm().
class SpectralNorm : public Module<SpectralNorm> {
public:
  SpectralNorm(const Tensor &weight, int64_t n_power_iterations = 1,
               int64_t dim = 0, double eps = 1e-12);
  Tensor forward(const Tensor &weight);
  Tensor right_inverse(const Tensor &value) { return value; }

  int64_t n_power_iterations, dim;
  double eps;
  Tensor _u, _v;

private:
  Tensor matrixOf(const Tensor &Weight) const;
  void powerMethod(const Tensor &WeightMat, int64_t Iterations);
};

/// Registers WeightNorm(Dim) on tensor Name of M; returns M.
ModuleBase &weight_norm(ModuleBase &M, const std::string &Name = "weight",
                        int64_t Dim = 0);
/// Registers SpectralNorm on tensor Name of M; Dim defaults to 1 for
/// ConvTranspose layers, else 0. Returns M.
ModuleBase &spectral_norm(ModuleBase &M, const std::string &Name = "weight",
                          int64_t NPowerIterations = 1, double Eps = 1e-12,
                          std::optional<int64_t> Dim = std::nullopt);

} // namespace nng::nn::utils::parametrizations
