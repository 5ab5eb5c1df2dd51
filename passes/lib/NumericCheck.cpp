//===- NumericCheck.cpp - Numerical equivalence of two graphs -------------===//
//
// Both graphs run on the reference interpreter with the same seeded inputs;
// outputs are compared element by element in double precision, and the
// first element beyond tolerance is reported with its output and index.
//
//===----------------------------------------------------------------------===//

#include "nngraph/passes/NumericCheck.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/runtime/Error.h"

#include <cmath>
#include <sstream>

namespace nng::passes {
namespace {

std::string outputName(const ir::Graph &G, size_t I) {
  return I < G.outputs().size() ? "%" + G.outputs()[I]->name()
                                : "#" + std::to_string(I);
}

} // namespace

NumericCheckResult compareOnReference(const ir::Graph &Before,
                                      const ir::Graph &After,
                                      const NumericCheckOptions &Options) {
  NNG_CHECK(Before.inputs().size() == After.inputs().size(),
            "numeric check: the graphs have ", Before.inputs().size(), " and ",
            After.inputs().size(), " inputs; they must take the same inputs");
  NumericCheckResult R;
  int Trials = Options.Trials < 1 ? 1 : Options.Trials;
  for (int T = 0; T < Trials; ++T) {
    auto Inputs = ir::makeDeterministicInputs(Before, Options.Dims,
                                                    Options.Seed + T);
    auto A = backends::runReference(Before, Inputs);
    auto B = backends::runReference(After, Inputs);
    std::ostringstream Msg;
    if (A.size() != B.size()) {
      Msg << "output count changed from " << A.size() << " to " << B.size();
      return {false, Msg.str(), R.MaxAbsError, R.MaxRelError};
    }
    for (size_t I = 0; I < A.size(); ++I) {
      std::string Name = outputName(After, I);
      if (A[I].shape() != B[I].shape() || A[I].dtype() != B[I].dtype()) {
        Msg << "output " << Name << " changed type from "
            << dtypeName(A[I].dtype()) << A[I].shape().toString() << " to "
            << dtypeName(B[I].dtype()) << B[I].shape().toString();
        return {false, Msg.str(), R.MaxAbsError, R.MaxRelError};
      }
      int64_t N = A[I].numel();
      for (int64_t J = 0; J < N; ++J) {
        double X = A[I].getFlat(J), Y = B[I].getFlat(J);
        if (std::isnan(X) && std::isnan(Y))
          continue;
        if (X == Y)
          continue;
        double Abs = std::fabs(X - Y);
        double Rel = Abs / std::max(std::fabs(X), 1e-30);
        if (std::isnan(Abs))
          Abs = Rel = INFINITY;
        R.MaxAbsError = std::max(R.MaxAbsError, Abs);
        R.MaxRelError = std::max(R.MaxRelError, Rel);
        if (!(Abs <= Options.ATol + Options.RTol * std::fabs(X))) {
          Msg << "output " << Name << " differs at flat index " << J
              << " (trial " << T << ", seed " << Options.Seed + T
              << "): before " << X << ", after " << Y << "; abs error " << Abs
              << ", rel error " << Rel << " (rtol " << Options.RTol << ", atol "
              << Options.ATol << ")";
          return {false, Msg.str(), R.MaxAbsError, R.MaxRelError};
        }
      }
    }
  }
  std::ostringstream Msg;
  Msg << "outputs match over " << Trials << " trial(s): max abs error "
      << R.MaxAbsError << ", max rel error " << R.MaxRelError;
  R.Message = Msg.str();
  return R;
}

} // namespace nng::passes
