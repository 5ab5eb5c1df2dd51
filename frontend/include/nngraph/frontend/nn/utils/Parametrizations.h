//===- Parametrizations.h - Built-in parametrizations -----------*- C++ -*-===//
//
// torch.nn.utils.parametrizations on Parametrize.h: spectral_norm as
// PyTorch 1.13's (buffers _u and _v of the _SpectralNorm module, one
// power-iteration step per training forward, keys
// parametrizations.weight.original / .0._u / .0._v), and weight_norm as
// PyTorch 2.1's (originals original0 = g, the norm of v over every dim but
// dim, and original1 = v; PyTorch 1.13 has only the hook-based
// torch.nn.utils.weight_norm, whose weight_g / weight_v hold the same
// values), and orthogonal as PyTorch 1.13's (_Orthogonal: the maps
// matrix_exp, cayley and householder, the buffer base of the dynamic
// trivialization, keys parametrizations.weight.original / .0.base).
//
//   parametrizations::spectral_norm(*Net->fc);
//   parametrizations::weight_norm(*Net->conv, "weight", /*dim=*/0);
//   parametrizations::orthogonal(*Net->proj); // an orthogonal weight
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

/// An orthogonal matrix (orthonormal columns when tall, rows when wide;
/// a batch of them for more than 2 dims) from an unconstrained original:
/// matrix_exp or cayley of the skew-symmetric matrix made from the
/// original's lower triangle (padded to square), or the product of the
/// Householder reflectors held below its diagonal (its diagonal's signs,
/// truncated toward zero, sign the columns). With use_trivialization the
/// result is multiplied by the buffer base (set by right_inverse to the
/// assigned matrix, orthogonalized by QR and completed to a square one by
/// random columns; the original then holds -I). Prints as _Orthogonal().
class Orthogonal : public Module<Orthogonal> {
public:
  enum class Map { MatrixExp, Cayley, Householder };

  Orthogonal(const Tensor &weight, Map orthogonal_map,
             bool use_trivialization = true);
  Tensor forward(const Tensor &X);
  /// The original for an orthogonal Q of the weight's shape (see the
  /// class comment); without trivialization only the householder map can
  /// invert (the others throw parametrize::NotImplemented).
  Tensor right_inverse(const Tensor &Q);

  Shape shape;
  Map orthogonal_map;
  bool use_trivialization;
  /// The trivialization's base ((..., n, n), n the larger dim); undefined
  /// until right_inverse, absent without trivialization.
  Tensor base;
};

/// Registers WeightNorm(Dim) on tensor Name of M; returns M.
ModuleBase &weight_norm(ModuleBase &M, const std::string &Name = "weight",
                        int64_t Dim = 0);
/// Registers SpectralNorm on tensor Name of M; Dim defaults to 1 for
/// ConvTranspose layers, else 0. Returns M.
ModuleBase &spectral_norm(ModuleBase &M, const std::string &Name = "weight",
                          int64_t NPowerIterations = 1, double Eps = 1e-12,
                          std::optional<int64_t> Dim = std::nullopt);

/// Registers Orthogonal on tensor Name of M (a matrix or batch of
/// matrices, f32 or f64). OrthogonalMap: "matrix_exp", "cayley" or
/// "householder"; default matrix_exp for a square matrix, else
/// householder. Registration makes the current value orthogonal (QR) as
/// PyTorch does (see Orthogonal). Returns M.
ModuleBase &orthogonal(ModuleBase &M, const std::string &Name = "weight",
                       std::optional<std::string> OrthogonalMap = std::nullopt,
                       bool UseTrivialization = true);

} // namespace nng::nn::utils::parametrizations
