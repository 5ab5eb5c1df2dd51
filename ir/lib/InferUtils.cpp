//===- InferUtils.cpp - Helpers shared by the inference functions --------===//
//
// Symbolic broadcasting, axis normalization, dtype checks and symbolic dim
// products used by the Infer*.cpp files (see InferUtils.h).
//
//===----------------------------------------------------------------------===//

#include "InferUtils.h"

#include <algorithm>

namespace nng::ir::infer {

std::optional<Dim> broadcastDim(const Dim &A, const Dim &B) {
  if (A == B)
    return A;
  if (A.isStatic() && B.isStatic()) {
    if (A.value() == 1)
      return B;
    if (B.value() == 1)
      return A;
    return std::nullopt;
  }
  if (A.isStatic())
    return A.value() == 1 ? B : A;
  if (B.isStatic())
    return B.value() == 1 ? A : B;
  // Two different symbols, or a symbol and an unknown: either may be 1.
  return Dim::unknown();
}

TensorType broadcastTypes(const InferContext &C, const TensorType &A,
                          const TensorType &B) {
  if (!A.hasRank() || !B.hasRank())
    return TensorType(A.dtype());
  int64_t R = std::max(A.rank(), B.rank());
  std::vector<Dim> Out(R);
  for (int64_t I = 0; I < R; ++I) {
    int64_t IA = I - (R - A.rank()), IB = I - (R - B.rank());
    Dim DA = IA >= 0 ? A.dim(IA) : Dim(1);
    Dim DB = IB >= 0 ? B.dim(IB) : Dim(1);
    auto D = broadcastDim(DA, DB);
    if (!D)
      C.fail("cannot broadcast ", A.toString(), " with ", B.toString(),
             ": axis ", I, " of the result has extents ", DA.toString(),
             " and ", DB.toString());
    Out[I] = *D;
  }
  return TensorType(A.dtype(), std::move(Out));
}

TensorType broadcastInputs(const InferContext &C, size_t First) {
  TensorType R = C.inputType(First);
  for (size_t I = First + 1; I < C.numInputs(); ++I)
    if (C.hasInput(I))
      R = broadcastTypes(C, R, C.inputType(I));
  return R;
}

std::string operandName(const InferContext &C, size_t I) {
  const auto &Ins = C.schema().Inputs;
  if (Ins.empty())
    return "input " + std::to_string(I);
  if (I + 1 >= Ins.size() && Ins.back().Variadic)
    return Ins.back().Name + "[" + std::to_string(I - (Ins.size() - 1)) + "]";
  if (I < Ins.size())
    return Ins[I].Name;
  return "input " + std::to_string(I);
}

void checkSameDType(const InferContext &C, size_t I, size_t J) {
  const TensorType &A = C.inputType(I), &B = C.inputType(J);
  if (A.dtype() != B.dtype())
    C.fail("operands ", operandName(C, I), " (", A.toString(), ") and ",
           operandName(C, J), " (", B.toString(),
           ") must have the same dtype; insert a Cast");
}

void checkResidualSum(const InferContext &C, size_t I, const TensorType &Y) {
  if (!C.hasInput(I))
    return;
  checkSameDType(C, 0, I);
  const TensorType &S = C.inputType(I);
  if (!S.hasRank() || !Y.hasRank())
    return;
  bool Same = S.rank() == Y.rank();
  for (int64_t D = 0; Same && D < S.rank(); ++D)
    Same = dimsCompatible(S.dim(D), Y.dim(D));
  if (!Same)
    C.fail("the residual Sum ", S.toString(), " is not of the result's shape ",
           Y.toString());
}

void checkDType(const InferContext &C, size_t I, DType T,
                std::string_view Why) {
  const TensorType &A = C.inputType(I);
  if (A.dtype() != T)
    C.fail("operand ", operandName(C, I), " (", A.toString(), ") must be ",
           dtypeName(T), Why.empty() ? "" : " ", Why);
}

void checkIndexDType(const InferContext &C, size_t I) {
  const TensorType &A = C.inputType(I);
  if (A.dtype() != DType::I64 && A.dtype() != DType::I32)
    C.fail("operand ", operandName(C, I), " (", A.toString(),
           ") must be i64 or i32");
}

void checkFloatDType(const InferContext &C, size_t I) {
  const TensorType &A = C.inputType(I);
  if (!isFloatingPoint(A.dtype()))
    C.fail("operand ", operandName(C, I), " (", A.toString(),
           ") must be a floating-point type (f32, f64, f16, bf16)");
}

int64_t normalizeAxis(const InferContext &C, int64_t Axis, int64_t Rank,
                      std::string_view What) {
  if (Axis >= -Rank && Axis < Rank)
    return Axis < 0 ? Axis + Rank : Axis;
  if (Rank == 0)
    C.fail(What, " ", Axis, " is out of range: a scalar (rank 0) has no axes");
  C.fail(What, " ", Axis, " is out of range for rank ", Rank, " (valid: [",
         -Rank, ", ", Rank - 1, "])");
}

std::vector<int64_t> normalizeAxes(const InferContext &C,
                                   const std::vector<int64_t> &Axes,
                                   int64_t Rank, std::string_view What) {
  std::vector<int64_t> Out;
  for (int64_t A : Axes) {
    int64_t N = normalizeAxis(C, A, Rank, What);
    if (std::find(Out.begin(), Out.end(), N) != Out.end())
      C.fail(What, " ", intsToString(Axes), " name axis ", N, " twice");
    Out.push_back(N);
  }
  return Out;
}

std::optional<std::vector<int64_t>> inputInts(const InferContext &C, size_t I) {
  if (!C.hasInput(I))
    return std::nullopt;
  const Tensor *V = C.inputValue(I);
  if (!V)
    return std::nullopt;
  if (!isIntegral(V->dtype()))
    C.fail("operand ", operandName(C, I), " must be an integer tensor, got ",
           dtypeName(V->dtype()), V->shape().toString());
  return V->toIntVector();
}

std::optional<int64_t> staticLength(const TensorType &T) {
  if (T.hasRank() && T.rank() == 1 && T.dim(0).isStatic())
    return T.dim(0).value();
  if (T.hasRank() && T.rank() == 0)
    return 1;
  return std::nullopt;
}

TensorType unknownDims(DType T, int64_t Rank) {
  return TensorType(T, std::vector<Dim>(Rank, Dim::unknown()));
}

void requireMinRank(const InferContext &C, size_t Input, int64_t MinRank,
                    std::string_view Why) {
  const TensorType &T = C.inputType(Input);
  if (T.hasRank() && T.rank() < MinRank)
    C.fail("operand ", operandName(C, Input), " (", T.toString(),
           ") must have rank >= ", MinRank, Why.empty() ? "" : " ", Why);
}

void requireRank(const InferContext &C, size_t Input, int64_t Rank,
                 std::string_view Why) {
  const TensorType &T = C.inputType(Input);
  if (T.hasRank() && T.rank() != Rank)
    C.fail("operand ", operandName(C, Input), " (", T.toString(),
           ") must have rank ", Rank, Why.empty() ? "" : " ", Why);
}

AttrMap attrsFor(const InferContext &C, const OpSchema &Of) {
  AttrMap M;
  for (const AttrSchema &A : Of.Attrs)
    if (C.hasAttrByName(A.Name))
      M.setByName(A.Name, C.attrByName(A.Name));
  return M;
}

bool dimsCompatible(const Dim &A, const Dim &B) {
  return !A.isStatic() || !B.isStatic() || A.value() == B.value();
}

bool shapesCompatible(const TensorType &A, const TensorType &B) {
  if (!A.hasRank() || !B.hasRank())
    return true;
  if (A.rank() != B.rank())
    return false;
  for (int64_t D = 0; D < A.rank(); ++D)
    if (!dimsCompatible(A.dim(D), B.dim(D)))
      return false;
  return true;
}

void SymProduct::mul(const Dim &D) {
  if (D.isStatic()) {
    Coeff *= D.value();
  } else if (D.isSymbolic()) {
    Syms.insert(std::upper_bound(Syms.begin(), Syms.end(), D.symbol()),
                D.symbol());
  } else {
    Unknown = true;
  }
}

Dim SymProduct::toDim() const {
  if (Coeff == 0)
    return Dim(0);
  if (Unknown)
    return Dim::unknown();
  if (Syms.empty())
    return Dim(Coeff);
  if (Syms.size() == 1 && Coeff == 1)
    return Dim::symbol(Syms[0]);
  return Dim::unknown();
}

SymProduct productOf(const std::vector<Dim> &Dims, size_t Begin, size_t End) {
  SymProduct P;
  for (size_t I = Begin; I < End; ++I)
    P.mul(Dims[I]);
  return P;
}

} // namespace nng::ir::infer
