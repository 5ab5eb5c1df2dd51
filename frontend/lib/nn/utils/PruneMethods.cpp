//===- PruneMethods.cpp - The masks of torch.nn.utils.prune ---------------===//
//
// The pruning methods' compute_mask, as PyTorch 1.13 computes them, plus
// PruningContainer and its mask combination (a new method acts on the
// entries or channels still unpruned) and the amount validation with
// PyTorch's messages. Masks are computed on the host in double over
// row-major copies (importance scores are read, never traced); ranking
// breaks ties by position (torch.topk leaves ties unspecified). Random
// methods draw from nng's default generator.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/utils/Prune.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

namespace nng::nn::utils::prune {

// --- Amounts -----------------------------------------------------------------

std::string Amount::toString() const {
  if (IsCount)
    return std::to_string(Count);
  if (std::isnan(Value))
    return "nan";
  if (std::isinf(Value))
    return Value > 0 ? "inf" : "-inf";
  char Buf[64];
  auto R = std::to_chars(Buf, Buf + sizeof(Buf), Value);
  std::string S(Buf, R.ptr);
  if (S.find_first_of(".e") == std::string::npos)
    S += ".0";
  return S;
}

int64_t Amount::of(int64_t Size) const {
  if (IsCount)
    return Count;
  // Python's round(): to nearest, halves to even (the default rounding
  // mode of nearbyint).
  return static_cast<int64_t>(
      std::nearbyint(Value * static_cast<double>(Size)));
}

namespace {

/// PyTorch's _validate_pruning_amount_init.
void validateAmountInit(const Amount &A, const std::string &Method) {
  bool Bad = A.is_count() ? A.count() < 0
                          : !(A.fraction() >= 0.0 && A.fraction() <= 1.0);
  if (Bad)
    fail(ErrorKind::InvalidArgument, Method, ": amount=", A.toString(),
         " should either be a float in the range [0, 1] or a non-negative "
         "integer");
}

/// PyTorch's _validate_pruning_amount, on the number of units to prune.
void validateAmount(int64_t ToPrune, int64_t Size, const std::string &Method,
                    const char *Units) {
  if (ToPrune > Size)
    fail(ErrorKind::InvalidArgument, Method, ": amount=", ToPrune,
         " should be smaller than the number of parameters to prune=", Size,
         " (", Units, " left to prune); pass at most ", Size, " or a fraction");
}

/// PyTorch's _validate_structured_pruning and _validate_pruning_dim;
/// returns dim in [0, rank).
int64_t structuredDim(const Tensor &T, int64_t Dim, const std::string &Method) {
  int64_t R = T.dim();
  if (R <= 1)
    fail(ErrorKind::InvalidArgument, Method,
         ": Structured pruning can only be applied to multidimensional "
         "tensors. Found tensor of shape ",
         T.shape().toString(), " with ", R,
         " dims; prune it with an unstructured method");
  if (Dim >= R || Dim < -R)
    fail(ErrorKind::InvalidArgument, Method, ": Invalid index ", Dim,
         " for tensor of size ", T.shape().toString(), "; dim must be in [", -R,
         ", ", R - 1, "]");
  return Dim < 0 ? Dim + R : Dim;
}

std::vector<double> valuesOf(const Tensor &T) {
  return T.data().contiguous().toDoubleVector();
}

Tensor tensorOf(const std::vector<double> &V, const Shape &S, DType Type) {
  rt::Tensor R = rt::Tensor::empty(S, Type);
  for (int64_t I = 0, N = static_cast<int64_t>(V.size()); I < N; ++I)
    R.setFlat(I, V[I]);
  return Tensor(std::move(R));
}

/// A row-major tensor seen as [Outer, C, Inner] around axis Dim.
struct Axis {
  int64_t Outer = 1, C = 1, Inner = 1;
  Axis(const Shape &S, int64_t Dim) {
    for (int64_t D = 0; D < static_cast<int64_t>(S.rank()); ++D) {
      if (D < Dim)
        Outer *= S[D];
      else if (D == Dim)
        C = S[D];
      else
        Inner *= S[D];
    }
  }
  int64_t at(int64_t O, int64_t Ch, int64_t I) const {
    return (O * C + Ch) * Inner + I;
  }
};

/// The positions of the K smallest keys (ties: the earlier position).
std::vector<int64_t> smallestK(const std::vector<double> &Key, int64_t K) {
  std::vector<int64_t> Idx(Key.size());
  std::iota(Idx.begin(), Idx.end(), 0);
  std::stable_sort(Idx.begin(), Idx.end(),
                   [&](int64_t A, int64_t B) { return Key[A] < Key[B]; });
  Idx.resize(K);
  return Idx;
}

/// The mask of a structured method: ones on the kept channels along Dim
/// (in T's dtype) times DefaultMask.
Tensor channelMask(const Tensor &T, int64_t Dim, const std::vector<bool> &Keep,
                   const Tensor &DefaultMask) {
  Axis A(T.shape(), Dim);
  std::vector<double> M = valuesOf(DefaultMask);
  for (int64_t O = 0; O < A.Outer; ++O)
    for (int64_t Ch = 0; Ch < A.C; ++Ch)
      if (!Keep[Ch])
        for (int64_t I = 0; I < A.Inner; ++I)
          M[A.at(O, Ch, I)] = 0.0;
  return tensorOf(M, T.shape(), T.dtype());
}

void checkSameShape(const Tensor &T, const Tensor &DefaultMask,
                    const std::string &Method) {
  if (T.shape() != DefaultMask.shape())
    fail(ErrorKind::ShapeMismatch, Method, ": the default mask has shape ",
         DefaultMask.shape().toString(), " but the tensor has shape ",
         T.shape().toString(), "; pass a mask of the tensor's shape");
}

/// An unstructured method's mask: DefaultMask with the K entries of the
/// smallest Scores() zeroed (K from Amount); Scores runs only when K > 0.
template <typename ScoresFn>
Tensor unstructuredMask(const Tensor &T, const Tensor &DefaultMask,
                        const Amount &A, const std::string &Method,
                        ScoresFn Scores) {
  checkSameShape(T, DefaultMask, Method);
  int64_t Size = T.numel();
  int64_t K = A.of(Size);
  validateAmount(K, Size, Method, "entries");
  std::vector<double> M = valuesOf(DefaultMask);
  if (K != 0)
    for (int64_t I : smallestK(Scores(), K))
      M[I] = 0;
  return tensorOf(M, DefaultMask.shape(), DefaultMask.dtype());
}

} // namespace

// --- BasePruningMethod -------------------------------------------------------

BasePruningMethod::~BasePruningMethod() = default;

Tensor BasePruningMethod::apply_mask(ModuleBase &M) const {
  if (TensorName.empty())
    fail(ErrorKind::InvalidArgument, name(), ": apply_mask(", M.type_name(),
         "): the method was never applied to a tensor; apply it first "
         "(prune::apply or a function such as prune::l1_unstructured)");
  Tensor Mask = M.get_buffer(TensorName + "_mask");
  Tensor Orig = M.get_parameter(TensorName + "_orig");
  return Mask.to(Orig.dtype()) * Orig;
}

Tensor BasePruningMethod::prune(const Tensor &T, const Tensor &DefaultMask,
                                const Tensor &ImportanceScores) const {
  Tensor Scores = ImportanceScores.defined() ? ImportanceScores : T;
  if (Scores.shape() != T.shape())
    fail(ErrorKind::ShapeMismatch, name(),
         ".prune: importance_scores should have the same shape as the "
         "tensor: ",
         Scores.shape().toString(), " vs ", T.shape().toString());
  Tensor Default = DefaultMask.defined() ? DefaultMask : ones_like(T);
  Tensor Mask;
  {
    NoGradGuard NoGrad;
    Mask = compute_mask(Scores.detach(), Default.detach());
  }
  return T * Mask;
}

// --- The methods -------------------------------------------------------------

Tensor Identity::compute_mask(const Tensor &T,
                              const Tensor &DefaultMask) const {
  return DefaultMask;
}

RandomUnstructured::RandomUnstructured(Amount A) : amount(A) {
  validateAmountInit(amount, name());
}

Tensor RandomUnstructured::compute_mask(const Tensor &T,
                                        const Tensor &DefaultMask) const {
  // prob = rand_like(t); the k largest are pruned.
  return unstructuredMask(T, DefaultMask, amount, name(), [&] {
    Generator &Gen = defaultGenerator();
    std::vector<double> NegProb(static_cast<size_t>(T.numel()));
    for (double &P : NegProb)
      P = -Gen.uniform();
    return NegProb;
  });
}

L1Unstructured::L1Unstructured(Amount A) : amount(A) {
  validateAmountInit(amount, name());
}

Tensor L1Unstructured::compute_mask(const Tensor &T,
                                    const Tensor &DefaultMask) const {
  return unstructuredMask(T, DefaultMask, amount, name(), [&] {
    std::vector<double> Abs = valuesOf(T);
    for (double &V : Abs)
      V = std::fabs(V);
    return Abs;
  });
}

RandomStructured::RandomStructured(Amount A, int64_t Dim)
    : amount(A), Dim(Dim) {
  validateAmountInit(amount, name());
}

Tensor RandomStructured::compute_mask(const Tensor &T,
                                      const Tensor &DefaultMask) const {
  checkSameShape(T, DefaultMask, name());
  int64_t D = structuredDim(T, Dim, name());
  int64_t Size = T.shape()[D];
  int64_t K = amount.of(Size);
  validateAmount(K, Size, name(), "channels");
  if (K == 0)
    return DefaultMask;
  // prob = rand(nchannels); channels above the k-th smallest are kept.
  Generator &Gen = defaultGenerator();
  std::vector<double> Prob(Size);
  for (double &P : Prob)
    P = Gen.uniform();
  std::vector<double> Sorted = Prob;
  std::nth_element(Sorted.begin(), Sorted.begin() + (K - 1), Sorted.end());
  double Threshold = Sorted[K - 1];
  std::vector<bool> Keep(Size);
  for (int64_t C = 0; C < Size; ++C)
    Keep[C] = Prob[C] > Threshold;
  return channelMask(T, D, Keep, DefaultMask);
}

LnStructured::LnStructured(Amount A, double N, int64_t Dim)
    : amount(A), n(N), Dim(Dim) {
  validateAmountInit(amount, name());
  if (std::isnan(n))
    fail(ErrorKind::InvalidArgument, name(),
         ": n=nan is not a norm order; pass a number (1, 2, inf, -inf, ...)");
}

Tensor LnStructured::compute_mask(const Tensor &T,
                                  const Tensor &DefaultMask) const {
  checkSameShape(T, DefaultMask, name());
  int64_t D = structuredDim(T, Dim, name());
  int64_t Size = T.shape()[D];
  int64_t K = amount.of(Size);
  validateAmount(K, Size, name(), "channels");
  if (K == 0)
    return DefaultMask;
  // The Ln norm of each channel (torch.norm(t, p=n, dim=all but dim)).
  Axis A(T.shape(), D);
  std::vector<double> V = valuesOf(T);
  std::vector<double> Norm(Size, 0.0);
  for (int64_t Ch = 0; Ch < Size; ++Ch) {
    double Acc = std::isinf(n) && n < 0 ? INFINITY : 0.0;
    for (int64_t O = 0; O < A.Outer; ++O)
      for (int64_t I = 0; I < A.Inner; ++I) {
        double X = std::fabs(V[A.at(O, Ch, I)]);
        if (std::isinf(n))
          Acc = n > 0 ? std::max(Acc, X) : std::min(Acc, X);
        else if (n == 0)
          Acc += X != 0;
        else if (n == 1)
          Acc += X;
        else if (n == 2)
          Acc += X * X;
        else
          Acc += std::pow(X, n);
      }
    if (!std::isinf(n) && n != 0 && n != 1)
      Acc = n == 2 ? std::sqrt(Acc) : std::pow(Acc, 1.0 / n);
    Norm[Ch] = Acc;
  }
  // Keep the Size - K channels of largest norm (topk, largest=True).
  std::vector<double> Neg(Size);
  for (int64_t Ch = 0; Ch < Size; ++Ch)
    Neg[Ch] = -Norm[Ch];
  std::vector<bool> Keep(Size, false);
  for (int64_t Ch : smallestK(Neg, Size - K))
    Keep[Ch] = true;
  return channelMask(T, D, Keep, DefaultMask);
}

CustomFromMask::CustomFromMask(Tensor Mask) : mask(std::move(Mask)) {
  if (!mask.defined())
    fail(ErrorKind::InvalidArgument,
         "CustomFromMask: the mask is undefined; pass a tensor of the "
         "pruned tensor's shape (0 = pruned)");
}

Tensor CustomFromMask::compute_mask(const Tensor &T,
                                    const Tensor &DefaultMask) const {
  if (DefaultMask.shape() != mask.shape())
    fail(ErrorKind::ShapeMismatch, name(), ": the mask has shape ",
         mask.shape().toString(), " but the tensor has shape ",
         DefaultMask.shape().toString(), "; pass a mask of the tensor's shape");
  return DefaultMask * mask.to(DefaultMask.dtype());
}

// --- PruningContainer --------------------------------------------------------

PruningContainer::PruningContainer(std::vector<MethodPtr> Ms) {
  for (MethodPtr &M : Ms) {
    if (Methods.empty() && M)
      set_tensor_name(M->tensor_name());
    add_pruning_method(std::move(M));
  }
}

void PruningContainer::add_pruning_method(MethodPtr Method) {
  if (!Method)
    fail(ErrorKind::InvalidArgument,
         "PruningContainer.add_pruning_method: the method is null");
  if (Method->tensor_name() != tensor_name())
    fail(ErrorKind::InvalidArgument,
         "PruningContainer: can only add pruning methods acting on the "
         "parameter named '",
         tensor_name(), "'; found ", Method->name(), " acting on '",
         Method->tensor_name(), "'");
  Methods.push_back(std::move(Method));
}

PruningType PruningContainer::pruning_type() const {
  if (Methods.empty())
    return PruningType::Global;
  return Methods.back()->pruning_type();
}

Tensor PruningContainer::compute_mask(const Tensor &T,
                                      const Tensor &DefaultMask) const {
  if (Methods.empty())
    fail(ErrorKind::InvalidArgument,
         "PruningContainer.compute_mask: the container holds no method");
  return combine_masks(*Methods.back(), T, DefaultMask);
}

Tensor combine_masks(const BasePruningMethod &Method, const Tensor &T,
                     const Tensor &Mask) {
  checkSameShape(T, Mask, Method.name());
  std::vector<double> TV = valuesOf(T);
  std::vector<double> New = valuesOf(Mask);
  switch (Method.pruning_type()) {
  case PruningType::Unstructured: {
    // The entries where the mask is 1, as a 1-D tensor.
    std::vector<int64_t> Slc;
    for (int64_t I = 0, N = static_cast<int64_t>(New.size()); I < N; ++I)
      if (New[I] == 1)
        Slc.push_back(I);
    std::vector<double> SubT, SubM;
    for (int64_t I : Slc) {
      SubT.push_back(TV[I]);
      SubM.push_back(New[I]);
    }
    Shape S1{static_cast<int64_t>(Slc.size())};
    Tensor Part = Method.compute_mask(tensorOf(SubT, S1, T.dtype()),
                                      tensorOf(SubM, S1, Mask.dtype()));
    std::vector<double> PV = valuesOf(Part);
    for (size_t K = 0; K < Slc.size(); ++K)
      New[Slc[K]] = PV[K];
    break;
  }
  case PruningType::Structured: {
    if (!Method.dim())
      fail(ErrorKind::InvalidArgument, Method.name(),
           ": a structured pruning method needs a dim");
    int64_t D = structuredDim(T, *Method.dim(), Method.name());
    // Channels along D not yet entirely pruned.
    Axis A(T.shape(), D);
    std::vector<int64_t> Kept;
    for (int64_t Ch = 0; Ch < A.C; ++Ch) {
      double Sum = 0;
      for (int64_t O = 0; O < A.Outer; ++O)
        for (int64_t I = 0; I < A.Inner; ++I)
          Sum += New[A.at(O, Ch, I)];
      if (Sum != 0)
        Kept.push_back(Ch);
    }
    std::vector<int64_t> Dims = T.shape().dims();
    Dims[D] = static_cast<int64_t>(Kept.size());
    Axis B(Shape(Dims), D);
    std::vector<double> SubT(B.Outer * B.C * B.Inner), SubM(SubT.size());
    for (int64_t O = 0; O < A.Outer; ++O)
      for (size_t K = 0; K < Kept.size(); ++K)
        for (int64_t I = 0; I < A.Inner; ++I) {
          SubT[B.at(O, K, I)] = TV[A.at(O, Kept[K], I)];
          SubM[B.at(O, K, I)] = New[A.at(O, Kept[K], I)];
        }
    Tensor Part =
        Method.compute_mask(tensorOf(SubT, Shape(Dims), T.dtype()),
                            tensorOf(SubM, Shape(Dims), Mask.dtype()));
    std::vector<double> PV = valuesOf(Part);
    for (int64_t O = 0; O < A.Outer; ++O)
      for (size_t K = 0; K < Kept.size(); ++K)
        for (int64_t I = 0; I < A.Inner; ++I)
          New[A.at(O, Kept[K], I)] = PV[B.at(O, K, I)];
    break;
  }
  case PruningType::Global:
    New = valuesOf(Method.compute_mask(T, Mask));
    break;
  }
  return tensorOf(New, T.shape(), T.dtype());
}

} // namespace nng::nn::utils::prune
