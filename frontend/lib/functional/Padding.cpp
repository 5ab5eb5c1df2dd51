//===- Padding.cpp - nng::F pad --------------------------------------------===//
//
// F::pad with PyTorch's argument order ((before, after) pairs from the last
// axis backwards) on ONNX Pad (modes constant, reflect, edge = PyTorch's
// replicate). Circular padding, which Pad lacks at opset 17, is a
// concatenation of slices. Pad's derivative is in DerivativesTensor.cpp.
//
//===----------------------------------------------------------------------===//

#include "FunctionalInternal.h"
#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

namespace nng::F {

using nng::detail::describe;

Tensor pad(const Tensor &X, const std::vector<int64_t> &Pad,
           const std::string &Mode, double Value) {
  const char *Op = "pad";
  if (!X.defined())
    fail(ErrorKind::InvalidArgument, Op, ": the input is undefined");
  if (Pad.size() % 2 != 0 ||
      static_cast<int64_t>(Pad.size()) > 2 * X.dim())
    fail(ErrorKind::InvalidArgument, Op, ": padding ", Shape(Pad).toString(),
         " must have an even length of at most 2 * ", X.dim(),
         " values for input ", describe(X));
  if (Mode != "constant" && Mode != "reflect" && Mode != "replicate" &&
      Mode != "circular")
    fail(ErrorKind::InvalidArgument, Op,
         ": mode must be 'constant', 'reflect', 'replicate' or 'circular', "
         "got '",
         Mode, "'");
  int64_t R = X.dim();
  std::vector<int64_t> Begin(R, 0), End(R, 0);
  for (size_t I = 0; I < Pad.size() / 2; ++I) {
    int64_t D = R - 1 - static_cast<int64_t>(I);
    Begin[D] = Pad[2 * I];
    End[D] = Pad[2 * I + 1];
    int64_t N = X.size(D);
    if (Mode != "constant" && (Begin[D] < 0 || End[D] < 0))
      fail(ErrorKind::InvalidArgument, Op, ": negative padding ",
           Shape(Pad).toString(), " is only allowed in constant mode");
    if (Mode == "reflect" && (Begin[D] >= N || End[D] >= N))
      fail(ErrorKind::InvalidArgument, Op, ": reflect padding ",
           Shape(Pad).toString(), " must be smaller than dimension ", D,
           " of input ", describe(X));
    if ((Mode == "circular" && (Begin[D] > N || End[D] > N)) ||
        (Mode == "replicate" && N == 0 && Begin[D] + End[D] > 0))
      fail(ErrorKind::InvalidArgument, Op, ": ", Mode, " padding ",
           Shape(Pad).toString(), " does not fit dimension ", D,
           " of input ", describe(X));
    if (N + Begin[D] + End[D] < 0)
      fail(ErrorKind::ShapeMismatch, Op, ": padding ", Shape(Pad).toString(),
           " crops dimension ", D, " of input ", describe(X), " below zero");
  }
  if (Mode == "circular") {
    Tensor Y = X;
    for (int64_t D = 0; D < R; ++D) {
      if (!Begin[D] && !End[D])
        continue;
      int64_t N = Y.size(D);
      Y = cat({slice(Y, D, N - Begin[D], N), Y, slice(Y, D, 0, End[D])}, D);
    }
    return Y;
  }
  std::vector<int64_t> Pads(Begin);
  Pads.insert(Pads.end(), End.begin(), End.end());
  std::vector<Tensor> In = {X, nng::detail::i64Tensor(Pads)};
  if (Mode == "constant")
    In.push_back(nng::detail::scalarOf(X.dtype(), Value));
  return dispatch::call1(
      ir::OpKind::Pad, In,
      dispatch::attrs({{"mode", Mode == "replicate" ? "edge" : Mode}}));
}

} // namespace nng::F
