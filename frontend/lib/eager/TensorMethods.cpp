//===- TensorMethods.cpp - Tensor methods forwarding to TensorOps.h -------===//
//
// The math and shape methods of nng::Tensor (t.view(...), t.sum(), ...),
// each a one-line call of the free function of the same name; relu,
// sigmoid and tanh (the activations F:: forwards to) dispatch their ops.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/detail/EagerInternal.h"
#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/Tensor.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

namespace nng {

Tensor Tensor::view(const SymIntList &S) const {
  return nng::view(*this, S);
}
Tensor Tensor::reshape(const SymIntList &S) const {
  return nng::reshape(*this, S);
}
Tensor Tensor::flatten(int64_t StartDim, int64_t EndDim) const {
  return nng::flatten(*this, StartDim, EndDim);
}
Tensor Tensor::transpose(int64_t D0, int64_t D1) const {
  return nng::transpose(*this, D0, D1);
}
Tensor Tensor::t() const {
  if (dim() > 2)
    fail(ErrorKind::InvalidArgument, "t() expects a tensor with <= 2 "
                                     "dimensions, but self is ",
         dim(), "-D with shape ", shape().toString());
  return dim() < 2 ? *this : nng::transpose(*this, 0, 1);
}
Tensor Tensor::permute(const std::vector<int64_t> &Dims) const {
  return nng::permute(*this, Dims);
}
Tensor Tensor::unsqueeze(int64_t D) const { return nng::unsqueeze(*this, D); }
Tensor Tensor::squeeze(std::optional<int64_t> D) const {
  return nng::squeeze(*this, D);
}
Tensor Tensor::expand(const SymIntList &Sizes) const {
  return nng::expand(*this, Sizes);
}
Tensor Tensor::slice(int64_t D, int64_t Start, int64_t End,
                     int64_t Step) const {
  return nng::slice(*this, D, Start, End, Step);
}
Tensor Tensor::select(int64_t D, int64_t Index) const {
  return nng::select(*this, D, Index);
}
Tensor Tensor::sum(std::vector<int64_t> Dims, bool KeepDim) const {
  return nng::sum(*this, std::move(Dims), KeepDim);
}
Tensor Tensor::mean(std::vector<int64_t> Dims, bool KeepDim) const {
  return nng::mean(*this, std::move(Dims), KeepDim);
}
Tensor Tensor::max() const { return nng::max(*this); }
Tensor Tensor::argmax(std::optional<int64_t> D, bool KeepDim) const {
  return nng::argmax(*this, D, KeepDim);
}
Tensor Tensor::matmul(const Tensor &O) const { return nng::matmul(*this, O); }
Tensor Tensor::pow(Scalar E) const { return nng::pow(*this, E); }
Tensor Tensor::sqrt() const { return nng::sqrt(*this); }
Tensor Tensor::exp() const { return nng::exp(*this); }
Tensor Tensor::log() const { return nng::log(*this); }
Tensor Tensor::abs() const { return nng::abs(*this); }
Tensor Tensor::neg() const { return nng::neg(*this); }
Tensor Tensor::relu() const {
  return dispatch::call1(ir::OpKind::Relu, {detail::floatInput("relu", *this)});
}
Tensor Tensor::sigmoid() const {
  return dispatch::call1(ir::OpKind::Sigmoid,
                         {detail::floatInput("sigmoid", *this)});
}
Tensor Tensor::tanh() const {
  return dispatch::call1(ir::OpKind::Tanh, {detail::floatInput("tanh", *this)});
}
Tensor Tensor::softmax(int64_t D) const { return nng::softmax(*this, D); }
Tensor Tensor::log_softmax(int64_t D) const {
  return nng::log_softmax(*this, D);
}

namespace detail {

const Tensor &floatInput(const char *Op, const Tensor &X) {
  if (!X.defined())
    fail(ErrorKind::InvalidArgument, Op, ": the input is undefined");
  if (!X.is_floating_point())
    fail(ErrorKind::InvalidArgument, Op, ": expected a floating-point input, "
                                         "got ",
         describe(X));
  return X;
}

} // namespace detail

} // namespace nng
