//===- Init.cpp - nn::init, PyTorch's parameter initializers --------------===//
//
// The initializers of torch.nn.init with PyTorch 1.13's formulas. Each
// fills its tensor in place under a NoGradGuard (so parameters that require
// grad can be initialized with grad mode on) from the global generator.
// Values that need more than one draw per element (trunc_normal_,
// orthogonal_, dirac_, sparse_) are computed in double here and copied in
// once; orthogonal_ does a Householder QR in double and applies PyTorch's
// sign convention, which makes Q the unique factor with diag(R) > 0.
// A tensor on the meta device has nothing to fill: initializers check
// their arguments and return it, drawing nothing (as on PyTorch's meta
// device).
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/nn/Init.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numbers>
#include <vector>

namespace nng::nn::init {

namespace {

/// Refuses an undefined tensor, naming the initializer.
void checkDefined(const Tensor &T, const char *Fn) {
  if (!T.defined())
    fail(ErrorKind::InvalidArgument, "nn::init::", Fn,
         ": the tensor is undefined (an absent parameter, e.g. bias=false?)");
}

/// Random initializers need a floating-point tensor.
void checkFloating(const Tensor &T, const char *Fn) {
  checkDefined(T, Fn);
  if (!T.is_floating_point())
    fail(ErrorKind::InvalidArgument, "nn::init::", Fn,
         ": needs a floating-point tensor, got ", dtypeName(T.dtype()),
         " of shape ", T.shape().toString());
}

/// Writes Values (row-major, one per element) into T.
void writeValues(Tensor &T, const std::vector<double> &Values) {
  rt::Tensor C = rt::Tensor::empty(T.shape(), T.dtype());
  for (int64_t I = 0, N = static_cast<int64_t>(Values.size()); I < N; ++I)
    C.setFlat(I, Values[I]);
  NoGradGuard NoGrad;
  T.copy_(Tensor(C));
}

/// The inverse error function in double: an initial rational
/// approximation (Giles 2010) refined by two Newton steps on erf.
double erfinv(double Y) {
  if (Y <= -1.0)
    return -INFINITY;
  if (Y >= 1.0)
    return INFINITY;
  double W = -std::log((1.0 - Y) * (1.0 + Y));
  double X;
  if (W < 5.0) {
    W -= 2.5;
    double P = 2.81022636e-08;
    P = 3.43273939e-07 + P * W;
    P = -3.5233877e-06 + P * W;
    P = -4.39150654e-06 + P * W;
    P = 0.00021858087 + P * W;
    P = -0.00125372503 + P * W;
    P = -0.00417768164 + P * W;
    P = 0.246640727 + P * W;
    P = 1.50140941 + P * W;
    X = P * Y;
  } else {
    W = std::sqrt(W) - 3.0;
    double P = -0.000200214257;
    P = 0.000100950558 + P * W;
    P = 0.00134934322 + P * W;
    P = -0.00367342844 + P * W;
    P = 0.00573950773 + P * W;
    P = -0.0076224613 + P * W;
    P = 0.00943887047 + P * W;
    P = 1.00167406 + P * W;
    P = 2.83297682 + P * W;
    X = P * Y;
  }
  const double TwoOverSqrtPi = 2.0 / std::sqrt(std::numbers::pi);
  for (int Step = 0; Step < 2; ++Step) {
    double Deriv = TwoOverSqrtPi * std::exp(-X * X);
    if (Deriv == 0.0)
      break;
    X -= (std::erf(X) - Y) / Deriv;
  }
  return X;
}

double normCdf(double X) { return (1.0 + std::erf(X / std::sqrt(2.0))) / 2.0; }

/// Householder QR of the row-major M x N matrix A (M >= N): returns the
/// reduced Q (M x N, row-major) with each column k multiplied by
/// sign(R[k][k]), which is torch.linalg.qr's Q times diag(R).sign().
std::vector<double> orthonormalFactor(std::vector<double> A, int64_t M,
                                      int64_t N) {
  std::vector<std::vector<double>> Reflectors(N);
  std::vector<double> RDiag(N, 0.0);
  for (int64_t K = 0; K < N; ++K) {
    double Norm = 0;
    for (int64_t I = K; I < M; ++I)
      Norm += A[I * N + K] * A[I * N + K];
    Norm = std::sqrt(Norm);
    std::vector<double> &V = Reflectors[K];
    V.assign(M - K, 0.0);
    if (Norm == 0.0) {
      RDiag[K] = 0.0;
      continue;
    }
    // LAPACK's choice: R[k][k] = -sign(a_kk) * ||x|| avoids cancellation.
    double Alpha = A[K * N + K] >= 0 ? -Norm : Norm;
    for (int64_t I = K; I < M; ++I)
      V[I - K] = A[I * N + K];
    V[0] -= Alpha;
    double VNorm = 0;
    for (double E : V)
      VNorm += E * E;
    VNorm = std::sqrt(VNorm);
    if (VNorm == 0.0) {
      V.assign(M - K, 0.0);
      RDiag[K] = Alpha;
      continue;
    }
    for (double &E : V)
      E /= VNorm;
    // A[k:, k:] -= 2 v (v^T A[k:, k:]).
    for (int64_t J = K; J < N; ++J) {
      double Dot = 0;
      for (int64_t I = K; I < M; ++I)
        Dot += V[I - K] * A[I * N + J];
      for (int64_t I = K; I < M; ++I)
        A[I * N + J] -= 2.0 * V[I - K] * Dot;
    }
    RDiag[K] = A[K * N + K];
  }
  // Q = H_0 ... H_{N-1} I[:, :N], applied right to left.
  std::vector<double> Q(M * N, 0.0);
  for (int64_t K = 0; K < N; ++K)
    Q[K * N + K] = 1.0;
  for (int64_t K = N - 1; K >= 0; --K) {
    const std::vector<double> &V = Reflectors[K];
    for (int64_t J = 0; J < N; ++J) {
      double Dot = 0;
      for (int64_t I = K; I < M; ++I)
        Dot += V[I - K] * Q[I * N + J];
      if (Dot == 0.0)
        continue;
      for (int64_t I = K; I < M; ++I)
        Q[I * N + J] -= 2.0 * V[I - K] * Dot;
    }
  }
  for (int64_t K = 0; K < N; ++K) {
    double Sign = RDiag[K] > 0 ? 1.0 : (RDiag[K] < 0 ? -1.0 : 0.0);
    for (int64_t I = 0; I < M; ++I)
      Q[I * N + K] *= Sign;
  }
  return Q;
}

} // namespace

double calculate_gain(const std::string &Nonlinearity,
                      std::optional<double> Param) {
  static const char *const LinearFns[] = {
      "linear",           "conv1d",           "conv2d",          "conv3d",
      "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"};
  for (const char *L : LinearFns)
    if (Nonlinearity == L)
      return 1.0;
  if (Nonlinearity == "sigmoid")
    return 1.0;
  if (Nonlinearity == "tanh")
    return 5.0 / 3;
  if (Nonlinearity == "relu")
    return std::sqrt(2.0);
  if (Nonlinearity == "leaky_relu") {
    double Slope = Param.value_or(0.01);
    if (!std::isfinite(Slope))
      fail(ErrorKind::InvalidArgument,
           "nn::init::calculate_gain: negative_slope ", Slope,
           " not a valid number");
    return std::sqrt(2.0 / (1 + Slope * Slope));
  }
  if (Nonlinearity == "selu")
    return 3.0 / 4;
  fail(ErrorKind::InvalidArgument,
       "nn::init::calculate_gain: unsupported "
       "nonlinearity '",
       Nonlinearity,
       "' (expected linear, conv1d, conv2d, conv3d, conv_transpose1d, "
       "conv_transpose2d, conv_transpose3d, sigmoid, tanh, relu, leaky_relu "
       "or selu)");
}

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor &T) {
  checkDefined(T, "calculate_fan_in_and_fan_out");
  if (T.dim() < 2)
    fail(ErrorKind::InvalidArgument,
         "nn::init: fan in and fan out can not be computed for a tensor with "
         "fewer than 2 dimensions (shape ",
         T.shape().toString(), ")");
  int64_t Receptive = 1;
  for (int64_t D = 2; D < T.dim(); ++D)
    Receptive *= T.size(D);
  return {T.size(1) * Receptive, T.size(0) * Receptive};
}

int64_t calculate_correct_fan(const Tensor &T, const std::string &Mode) {
  std::string Lower = Mode;
  std::transform(Lower.begin(), Lower.end(), Lower.begin(),
                 [](unsigned char C) { return std::tolower(C); });
  if (Lower != "fan_in" && Lower != "fan_out")
    fail(ErrorKind::InvalidArgument, "nn::init: mode '", Mode,
         "' not supported, please use one of fan_in, fan_out");
  auto [FanIn, FanOut] = calculate_fan_in_and_fan_out(T);
  return Lower == "fan_in" ? FanIn : FanOut;
}

Tensor uniform_(Tensor T, double A, double B) {
  checkFloating(T, "uniform_");
  NoGradGuard NoGrad;
  T.uniform_(A, B);
  return T;
}

Tensor normal_(Tensor T, double Mean, double Std) {
  checkFloating(T, "normal_");
  if (Std < 0)
    fail(ErrorKind::InvalidArgument,
         "nn::init::normal_: std must be >= 0, got ", Std);
  NoGradGuard NoGrad;
  T.normal_(Mean, Std);
  return T;
}

Tensor trunc_normal_(Tensor T, double Mean, double Std, double A, double B) {
  checkFloating(T, "trunc_normal_");
  if (!(A < B))
    fail(ErrorKind::InvalidArgument,
         "nn::init::trunc_normal_: the bounds must "
         "satisfy a < b, got a=",
         A, ", b=", B);
  if (!(Std > 0))
    fail(ErrorKind::InvalidArgument,
         "nn::init::trunc_normal_: std must be > 0, got ", Std);
  if (T.is_meta())
    return T; // Nothing to fill, nothing drawn.
  // PyTorch: draw u ~ U(2l-1, 2u-1), take erfinv, scale by std*sqrt(2),
  // shift by mean, clamp to [a, b].
  double L = normCdf((A - Mean) / Std);
  double U = normCdf((B - Mean) / Std);
  Generator &Gen = defaultGenerator();
  std::vector<double> Values(T.numel());
  for (double &V : Values) {
    double X = (2 * L - 1) + ((2 * U - 1) - (2 * L - 1)) * Gen.uniform();
    X = erfinv(X) * Std * std::sqrt(2.0) + Mean;
    V = std::clamp(X, A, B);
  }
  writeValues(T, Values);
  return T;
}

Tensor constant_(Tensor T, double Val) {
  checkDefined(T, "constant_");
  NoGradGuard NoGrad;
  T.fill_(Val);
  return T;
}

Tensor ones_(Tensor T) {
  checkDefined(T, "ones_");
  return constant_(std::move(T), 1.0);
}

Tensor zeros_(Tensor T) {
  checkDefined(T, "zeros_");
  return constant_(std::move(T), 0.0);
}

Tensor eye_(Tensor T) {
  checkDefined(T, "eye_");
  if (T.dim() != 2)
    fail(ErrorKind::InvalidArgument,
         "nn::init::eye_: only tensors with 2 "
         "dimensions are supported, got shape ",
         T.shape().toString());
  if (T.is_meta())
    return T;
  int64_t Rows = T.size(0), Cols = T.size(1);
  std::vector<double> Values(T.numel(), 0.0);
  for (int64_t I = 0; I < std::min(Rows, Cols); ++I)
    Values[I * Cols + I] = 1.0;
  writeValues(T, Values);
  return T;
}

Tensor dirac_(Tensor T, int64_t Groups) {
  checkDefined(T, "dirac_");
  int64_t Dims = T.dim();
  if (Dims < 3 || Dims > 5)
    fail(ErrorKind::InvalidArgument,
         "nn::init::dirac_: only tensors with 3, 4, "
         "or 5 dimensions are supported, got shape ",
         T.shape().toString());
  if (Groups <= 0 || T.size(0) % Groups != 0)
    fail(ErrorKind::InvalidArgument, "nn::init::dirac_: dim 0 (", T.size(0),
         ") must be divisible by groups (", Groups, ")");
  if (T.is_meta())
    return T;
  std::vector<int64_t> Sizes = T.sizes();
  int64_t OutPerGroup = Sizes[0] / Groups;
  int64_t MinDim = std::min(OutPerGroup, Sizes[1]);
  std::vector<double> Values(T.numel(), 0.0);
  for (int64_t G = 0; G < Groups; ++G)
    for (int64_t D = 0; D < MinDim; ++D) {
      std::vector<int64_t> Index = {G * OutPerGroup + D, D};
      for (int64_t A = 2; A < Dims; ++A)
        Index.push_back(Sizes[A] / 2);
      int64_t Flat = 0;
      for (int64_t A = 0; A < Dims; ++A)
        Flat = Flat * Sizes[A] + Index[A];
      Values[Flat] = 1.0;
    }
  writeValues(T, Values);
  return T;
}

Tensor xavier_uniform_(Tensor T, double Gain) {
  checkFloating(T, "xavier_uniform_");
  auto [FanIn, FanOut] = calculate_fan_in_and_fan_out(T);
  double Std = Gain * std::sqrt(2.0 / static_cast<double>(FanIn + FanOut));
  double A = std::sqrt(3.0) * Std;
  return uniform_(std::move(T), -A, A);
}

Tensor xavier_normal_(Tensor T, double Gain) {
  checkFloating(T, "xavier_normal_");
  auto [FanIn, FanOut] = calculate_fan_in_and_fan_out(T);
  double Std = Gain * std::sqrt(2.0 / static_cast<double>(FanIn + FanOut));
  return normal_(std::move(T), 0.0, Std);
}

Tensor kaiming_uniform_(Tensor T, double A, const std::string &Mode,
                        const std::string &Nonlinearity) {
  checkFloating(T, "kaiming_uniform_");
  if (T.numel() == 0)
    return T; // PyTorch: "Initializing zero-element tensors is a no-op".
  int64_t Fan = calculate_correct_fan(T, Mode);
  double Gain = calculate_gain(Nonlinearity, A);
  double Std = Gain / std::sqrt(static_cast<double>(Fan));
  double Bound = std::sqrt(3.0) * Std;
  return uniform_(std::move(T), -Bound, Bound);
}

Tensor kaiming_normal_(Tensor T, double A, const std::string &Mode,
                       const std::string &Nonlinearity) {
  checkFloating(T, "kaiming_normal_");
  if (T.numel() == 0)
    return T;
  int64_t Fan = calculate_correct_fan(T, Mode);
  double Gain = calculate_gain(Nonlinearity, A);
  double Std = Gain / std::sqrt(static_cast<double>(Fan));
  return normal_(std::move(T), 0.0, Std);
}

Tensor orthogonal_(Tensor T, double Gain) {
  checkFloating(T, "orthogonal_");
  if (T.dim() < 2)
    fail(ErrorKind::InvalidArgument,
         "nn::init::orthogonal_: only tensors with "
         "2 or more dimensions are supported, got shape ",
         T.shape().toString());
  if (T.numel() == 0 || T.is_meta())
    return T;
  int64_t Rows = T.size(0);
  int64_t Cols = T.numel() / Rows;
  Generator &Gen = defaultGenerator();
  std::vector<double> Flat(Rows * Cols);
  for (double &V : Flat)
    V = Gen.normal();
  // QR wants a tall matrix: factor the transpose of a wide one.
  bool Wide = Rows < Cols;
  int64_t M = Wide ? Cols : Rows, N = Wide ? Rows : Cols;
  std::vector<double> A(M * N);
  for (int64_t I = 0; I < Rows; ++I)
    for (int64_t J = 0; J < Cols; ++J)
      (Wide ? A[J * N + I] : A[I * N + J]) = Flat[I * Cols + J];
  std::vector<double> Q = orthonormalFactor(std::move(A), M, N);
  std::vector<double> Values(Rows * Cols);
  for (int64_t I = 0; I < Rows; ++I)
    for (int64_t J = 0; J < Cols; ++J)
      Values[I * Cols + J] = Gain * (Wide ? Q[J * N + I] : Q[I * N + J]);
  writeValues(T, Values);
  return T;
}

Tensor sparse_(Tensor T, double Sparsity, double Std) {
  checkFloating(T, "sparse_");
  if (T.dim() != 2)
    fail(ErrorKind::InvalidArgument,
         "nn::init::sparse_: only tensors with 2 "
         "dimensions are supported, got shape ",
         T.shape().toString());
  if (Sparsity < 0 || Sparsity > 1)
    fail(ErrorKind::InvalidArgument,
         "nn::init::sparse_: sparsity must be in [0, 1], got ", Sparsity);
  if (T.is_meta())
    return T;
  int64_t Rows = T.size(0), Cols = T.size(1);
  int64_t NumZeros = static_cast<int64_t>(std::ceil(Sparsity * Rows));
  Generator &Gen = defaultGenerator();
  std::vector<double> Values(Rows * Cols);
  for (double &V : Values)
    V = Std * Gen.normal();
  std::vector<int64_t> Perm(Rows);
  for (int64_t C = 0; C < Cols; ++C) {
    for (int64_t I = 0; I < Rows; ++I)
      Perm[I] = I;
    for (int64_t I = Rows - 1; I > 0; --I)
      std::swap(Perm[I], Perm[Gen.integer(0, I + 1)]);
    for (int64_t Z = 0; Z < NumZeros; ++Z)
      Values[Perm[Z] * Cols + C] = 0.0;
  }
  writeValues(T, Values);
  return T;
}

} // namespace nng::nn::init
