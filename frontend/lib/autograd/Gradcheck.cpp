//===- Gradcheck.cpp - Analytical vs numerical Jacobians -------------------===//
//
// gradcheck: runs the function once with grad mode on, takes one
// autograd::grad per output element (retaining the graph) to build the
// analytical Jacobian row by row, then perturbs every element of every
// differentiable input by +-Eps (under NoGradGuard) for the numerical
// Jacobian column by column, and compares entry by entry.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/Gradcheck.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

#include <cmath>
#include <sstream>

namespace nng::autograd {

namespace {

/// "[1, 2]" for flat index I of shape S.
std::string multiIndex(const Shape &S, int64_t I) {
  std::vector<int64_t> Idx(S.rank());
  for (size_t D = S.rank(); D-- > 0;) {
    Idx[D] = S[D] ? I % S[D] : 0;
    I = S[D] ? I / S[D] : 0;
  }
  return Shape(Idx).toString();
}

std::vector<double> evaluate(const GradcheckFn &Fn,
                             const std::vector<Tensor> &Inputs) {
  NoGradGuard G;
  Tensor Y = Fn(Inputs);
  return Y.to(DType::F64).to_vector<double>();
}

} // namespace

GradcheckResult gradcheck(const GradcheckFn &Fn,
                          const std::vector<Tensor> &Inputs, double Eps,
                          double Atol, double Rtol) {
  // f64 leaf copies of the inputs.
  std::vector<Tensor> X;
  std::vector<size_t> Diff;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    const Tensor &T = Inputs[I];
    if (!T.defined()) {
      X.emplace_back();
      continue;
    }
    if (!T.is_floating_point()) {
      X.push_back(T);
      continue;
    }
    Tensor C(T.data().to(DType::F64).clone());
    if (T.requires_grad()) {
      C.requires_grad_(true);
      Diff.push_back(I);
    }
    X.push_back(C);
  }
  if (Diff.empty())
    fail(ErrorKind::InvalidArgument,
         "gradcheck: no input requires grad; mark the inputs to check with "
         "requires_grad");

  EnableGradGuard Grad;
  Tensor Y = Fn(X);
  if (!Y.defined() || !Y.is_floating_point())
    fail(ErrorKind::InvalidArgument,
         "gradcheck: the function must return a floating-point tensor");
  int64_t NOut = Y.numel();
  std::vector<Tensor> DiffInputs;
  for (size_t I : Diff)
    DiffInputs.push_back(X[I]);

  // Analytical Jacobian: Rows[input][out][element].
  std::vector<std::vector<std::vector<double>>> An(Diff.size());
  for (size_t K = 0; K < Diff.size(); ++K)
    An[K].assign(NOut, std::vector<double>(X[Diff[K]].numel(), 0.0));
  if (Y.requires_grad()) {
    for (int64_t O = 0; O < NOut; ++O) {
      Tensor Seed = zeros(Y.sizes(), Y.dtype());
      rt::Tensor SD = Seed.data();
      SD.setFlat(O, 1.0);
      std::vector<Tensor> G =
          grad({Y}, DiffInputs, {Seed}, /*RetainGraph=*/true,
               /*AllowUnused=*/true);
      for (size_t K = 0; K < Diff.size(); ++K)
        if (G[K].defined()) {
          if (G[K].shape() != DiffInputs[K].shape())
            fail(ErrorKind::Internal, "gradcheck: the gradient of input ",
                 Diff[K], " has shape ", G[K].shape().toString(),
                 " but the input has shape ",
                 DiffInputs[K].shape().toString());
          An[K][O] = G[K].to(DType::F64).to_vector<double>();
        }
    }
  }

  // Numerical Jacobian, one input element at a time.
  GradcheckResult R;
  for (size_t K = 0; K < Diff.size(); ++K) {
    size_t In = Diff[K];
    std::vector<Tensor> P = X;
    Tensor Probe(X[In].data().clone());
    P[In] = Probe;
    rt::Tensor D = Probe.data();
    for (int64_t E = 0, N = Probe.numel(); E < N; ++E) {
      double Orig = D.getFlat(E);
      D.setFlat(E, Orig + Eps);
      std::vector<double> Plus = evaluate(Fn, P);
      D.setFlat(E, Orig - Eps);
      std::vector<double> Minus = evaluate(Fn, P);
      D.setFlat(E, Orig);
      if (static_cast<int64_t>(Plus.size()) != NOut)
        fail(ErrorKind::InvalidArgument,
             "gradcheck: the output size changed under perturbation");
      for (int64_t O = 0; O < NOut; ++O) {
        double Num = (Plus[O] - Minus[O]) / (2 * Eps);
        double A = An[K][O][E];
        double Err = std::fabs(A - Num);
        if (std::isnan(A) != std::isnan(Num))
          Err = INFINITY;
        R.MaxAbsError = std::max(R.MaxAbsError, Err);
        if (R.Ok && !(Err <= Atol + Rtol * std::fabs(Num))) {
          std::ostringstream OS;
          OS << "gradcheck: Jacobian mismatch for input " << In << " (shape "
             << X[In].shape().toString() << ") element " << E << " "
             << multiIndex(X[In].shape(), E) << ", output element " << O
             << " " << multiIndex(Y.shape(), O) << ": analytical " << A
             << " vs numerical " << Num << " (|diff| " << Err << " > atol "
             << Atol << " + rtol " << Rtol << " * |numerical|)";
          R.Ok = false;
          R.Message = OS.str();
        }
      }
    }
  }
  return R;
}

} // namespace nng::autograd
