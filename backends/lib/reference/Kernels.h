//===- Kernels.h - Reference kernel interface (internal) ---------*- C++ -*-===//
//
// A reference kernel gets a KernelContext: the node's schema and attributes,
// its input tensors (undefined for absent optional inputs), and the output
// types computed by the op's inference function from the concrete inputs.
// It fills Outputs. kernel<Op> functions are declared from Ops.def, so an op
// without a kernel fails to link.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/runtime/Tensor.h"

#include <sstream>
#include <vector>

namespace nng::backends::reference {

/// The kernels name the runtime's data tensor plainly.
using rt::Tensor;

/// What a kernel sees.
struct KernelContext {
  const ir::Node &N;
  std::vector<rt::Tensor> Inputs;      ///< Undefined when absent.
  std::vector<ir::TensorType> OutTypes; ///< Inferred from concrete inputs.
  std::vector<rt::Tensor> Outputs;     ///< Filled by the kernel.
  /// Where outputs should go when the caller planned their memory (the cpu
  /// backend's arena): allocOutput hands out Preset[I] (zero-filled) when
  /// its shape and dtype are the ones asked for. Empty: allocate.
  std::vector<rt::Tensor> Preset;

  bool hasInput(size_t I) const {
    return I < Inputs.size() && Inputs[I].defined();
  }
  const rt::Tensor &in(size_t I) const { return Inputs[I]; }
  /// Allocates output I with its inferred (static) shape and dtype.
  rt::Tensor &allocOutput(size_t I);
  /// Allocates output I with an explicit shape and dtype.
  rt::Tensor &allocOutput(size_t I, const Shape &S, DType T);
  /// The node's attributes (names checked against Ops.def, AttrName.h).
  int64_t attrInt(ir::IntAttrName A) const { return N.attrInt(A); }
  float attrFloat(ir::FloatAttrName A) const { return N.attrFloat(A); }
  const std::string &attrString(ir::StringAttrName A) const {
    return N.attrString(A);
  }
  std::vector<int64_t> attrInts(ir::IntsAttrName A) const {
    return N.attrInts(A);
  }
  /// Throws Error(InvalidArgument) naming the node.
  template <typename... Args> [[noreturn]] void fail(const Args &...A) const {
    std::ostringstream OS;
    (OS << ... << A);
    throwError(OS.str());
  }

private:
  [[noreturn]] void throwError(const std::string &Msg) const;
};

using KernelFn = void (*)(KernelContext &);

#define NNG_OP(Enum, Domain, Name, Since, Inputs, Outputs, Infer, Attrs, Doc, \
               Traits)                                                         \
  void kernel##Enum(KernelContext &);
#include "nngraph/ir/Ops.def"

/// The kernel of op K.
KernelFn getKernel(ir::OpKind K);

} // namespace nng::backends::reference
