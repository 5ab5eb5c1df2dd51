//===- KernelsFused.cpp - nng.FusedConv, FusedGemm and FusedMatMul -------===//
//
// Reference kernels of the fused ops: the Conv or Gemm kernel runs on the
// same context (the fused ops share Conv's and Gemm's attribute names and
// defaults), FusedMatMul's product is the MatMul kernel's (on B with its
// last two axes swapped when transB), FusedMatMul's Bias and the residual
// Sum are added when given, each as a standalone Add, then the
// activation of the FusedActivation table is applied in place, in double,
// exactly as the standalone Add and activation kernels compute them on the
// rounded results. So a fused node gives the same bits as the nodes it
// replaces.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "nngraph/ir/ElementwiseFormulas.h"
#include "nngraph/ir/FusedActivation.h"

#include <cmath>
#include <functional>

namespace nng::backends::reference {

namespace {

namespace F = ir::formula;
/// The reference computes float activations in double.
constexpr ir::ScalarMath<double> D;

/// The activation of C's node as a function of double.
std::function<double(double)> activationFn(const KernelContext &C) {
  const std::string &Name = C.attrString("activation");
  const ir::FusedActivationInfo *A = ir::lookupFusedActivation(Name);
  if (!A)
    C.fail("unknown activation '", Name, "'; expected one of ",
           ir::fusedActivationNames());
  std::vector<float> Given;
  if (C.N.attrs().has("activation_params"))
    Given = C.N.attr("activation_params").floats();
  if (Given.size() > A->Params.size())
    C.fail("activation ", Name, " takes ", A->Params.size(),
           " parameter(s), got ", Given.size());
  std::vector<float> P = ir::fusedActivationParams(*A, Given);
  auto Param = [&](size_t I) { return static_cast<double>(P[I]); };
  switch (A->Op) {
  case ir::OpKind::Identity:
    return [](double X) { return X; };
  case ir::OpKind::Relu:
    return [](double X) { return F::relu(D, X); };
  case ir::OpKind::LeakyRelu:
    return [Alpha = Param(0)](double X) { return F::leakyRelu(D, X, Alpha); };
  case ir::OpKind::Sigmoid:
    return [](double X) { return F::sigmoid(D, X); };
  case ir::OpKind::Tanh:
    return [](double X) { return std::tanh(X); };
  case ir::OpKind::Clip:
    return [Lo = Param(0), Hi = Param(1)](double X) {
      return F::clip(D, X, Lo, Hi);
    };
  case ir::OpKind::HardSigmoid:
    return [Alpha = Param(0), Beta = Param(1)](double X) {
      return F::hardSigmoid(D, X, Alpha, Beta);
    };
  case ir::OpKind::HardSwish:
    return [](double X) { return F::hardSwish(D, X); };
  case ir::OpKind::Elu:
    return [Alpha = Param(0)](double X) { return F::elu(D, X, Alpha); };
  case ir::OpKind::Gelu:
    if (A->GeluApproximate == "tanh")
      return [](double X) { return F::geluTanh(D, X); };
    return [](double X) { return F::gelu(D, X); };
  default:
    C.fail("activation '", Name, "' has no reference implementation");
  }
}

/// Applies the node's activation to output 0 in place.
void applyActivation(KernelContext &C) {
  std::function<double(double)> F = activationFn(C);
  Tensor &Y = C.Outputs[0];
  if (!Y.isContiguous())
    Y = Y.contiguous();
  requireFloat(C, Y, "Y");
  visitDType(Y.dtype(), [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    if constexpr (IsFloatElem<T>) {
      T *PY = mutPtr<T>(Y);
      parallelFor(0, Y.numel(), ElemGrain, [&](int64_t B, int64_t E) {
        for (int64_t I = B; I < E; ++I)
          PY[I] = fromDouble<T>(F(toDouble(PY[I])));
      });
    }
  });
}

/// Adds input I (FusedConv's or FusedMatMul's residual Sum, FusedMatMul's
/// Bias) to output 0 in place, rounding as a standalone Add of the two does.
/// The Sum is of the result's shape; one whose dims the graph left unknown
/// may broadcast to it, as the Add the epilogue rule fused would have.
void addResidual(KernelContext &C, size_t I = 3, const char *What = "Sum") {
  Tensor &Y = C.Outputs[0];
  const Tensor &S = C.in(I);
  if (S.dtype() != Y.dtype())
    C.fail("the ", What, " is ", dtypeName(S.dtype()), ", the result ",
           dtypeName(Y.dtype()));
  if (!Y.isContiguous())
    Y = Y.contiguous();
  const Tensor R = S.shape() == Y.shape() && S.isContiguous()
                       ? S
                       : S.broadcastTo(Y.shape()).contiguous();
  visitDType(Y.dtype(), [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    if constexpr (IsFloatElem<T>) {
      T *PY = mutPtr<T>(Y);
      const T *PR = R.data<T>();
      parallelFor(0, Y.numel(), ElemGrain, [&](int64_t B, int64_t E) {
        for (int64_t I = B; I < E; ++I)
          PY[I] = fromDouble<T>(toDouble(PY[I]) + toDouble(PR[I]));
      });
    }
  });
}

} // namespace

void kernelFusedConv(KernelContext &C) {
  kernelConv(C);
  if (C.hasInput(3))
    addResidual(C);
  applyActivation(C);
}

void kernelFusedGemm(KernelContext &C) {
  requireFloat(C, C.in(0), "A");
  kernelGemm(C);
  applyActivation(C);
}

void kernelFusedMatMul(KernelContext &C) {
  requireFloat(C, C.in(0), "A");
  Tensor B = C.in(1);
  if (C.attrInt("transB") != 0) {
    if (B.rank() < 2)
      C.fail("transB needs B of rank >= 2, got ", B.shape().toString());
    std::vector<int64_t> Perm(B.rank());
    for (size_t I = 0; I < Perm.size(); ++I)
      Perm[I] = static_cast<int64_t>(I);
    std::swap(Perm[Perm.size() - 1], Perm[Perm.size() - 2]);
    B = B.permute(Perm);
  }
  KernelContext Product{C.N, {C.in(0), B}, {}, {}, {}};
  Product.Outputs.resize(1);
  kernelMatMul(Product);
  const Tensor &P = Product.Outputs[0];
  C.allocOutput(0, P.shape(), P.dtype()).copyFrom(P); // Into a Preset.
  if (C.hasInput(2))
    addResidual(C, 2, "Bias");
  if (C.hasInput(3))
    addResidual(C, 3, "Sum");
  applyActivation(C);
}

} // namespace nng::backends::reference
