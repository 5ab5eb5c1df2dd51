//===- Linalg.cpp - matmul, mm, bmm ----------------------------------------===//
//
// Matrix products on ONNX MatMul (numpy semantics: 1-D operands gain and
// lose an axis, batch axes broadcast). Shapes are checked here so a
// mismatch names the op, both operands and the inner dimensions.
// Mixed dtypes promote like the arithmetic ops.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/detail/EagerInternal.h"
#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

namespace nng {

using detail::describe;
using ir::OpKind;

namespace {

Tensor checkedMatMul(const char *Op, const Tensor &A, const Tensor &B) {
  if (!A.defined() || !B.defined())
    fail(ErrorKind::InvalidArgument, Op, ": an operand is undefined");
  if (A.dim() == 0 || B.dim() == 0)
    fail(ErrorKind::InvalidArgument, Op, ": both arguments need at least 1 "
                                         "dimension, got A ",
         describe(A), " and B ", describe(B));
  SymInt KA = A.size(-1);
  SymInt KB = B.dim() == 1 ? B.size(0) : B.size(-2);
  if (KA != KB)
    fail(ErrorKind::ShapeMismatch, Op, ": A ", describe(A), " and B ",
         describe(B), ": inner dimensions ", KA, " and ", KB, " differ");
  if (A.dim() > 2 && B.dim() > 2) {
    // Batch axes must broadcast.
    Shape BA(A.shape().begin(), A.shape().end() - 2);
    Shape BB(B.shape().begin(), B.shape().end() - 2);
    size_t R = std::max(BA.rank(), BB.rank());
    for (size_t I = 0; I < R; ++I) {
      int64_t X = I < BA.rank() ? BA[BA.rank() - 1 - I] : 1;
      int64_t Y = I < BB.rank() ? BB[BB.rank() - 1 - I] : 1;
      if (X != Y && X != 1 && Y != 1)
        fail(ErrorKind::ShapeMismatch, Op, ": A ", describe(A), " and B ",
             describe(B), ": batch dimensions ", BA.toString(), " and ",
             BB.toString(), " do not broadcast");
    }
  }
  DType T = promote_types(A.dtype(), B.dtype());
  if (T == DType::Bool)
    fail(ErrorKind::InvalidArgument, Op, ": bool operands are not supported");
  return dispatch::call1(OpKind::MatMul, {A.to(T), B.to(T)});
}

} // namespace

Tensor matmul(const Tensor &A, const Tensor &B) {
  return checkedMatMul("matmul", A, B);
}

Tensor mm(const Tensor &A, const Tensor &B) {
  if (A.defined() && B.defined() && (A.dim() != 2 || B.dim() != 2))
    fail(ErrorKind::InvalidArgument, "mm: A ", describe(A), " and B ",
         describe(B), ": both must be matrices");
  return checkedMatMul("mm", A, B);
}

Tensor bmm(const Tensor &A, const Tensor &B) {
  if (A.defined() && B.defined()) {
    if (A.dim() != 3 || B.dim() != 3)
      fail(ErrorKind::InvalidArgument, "bmm: A ", describe(A), " and B ",
           describe(B), ": both must be 3-D");
    if (A.size(0) != B.size(0))
      fail(ErrorKind::ShapeMismatch, "bmm: A ", describe(A), " and B ",
           describe(B), ": batch sizes ", A.size(0), " and ", B.size(0),
           " differ");
  }
  return checkedMatMul("bmm", A, B);
}

} // namespace nng
