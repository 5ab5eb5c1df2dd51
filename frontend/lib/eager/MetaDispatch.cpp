//===- MetaDispatch.cpp - Ops on meta tensors: shapes without data --------===//
//
// A tensor on the meta device has a shape and a dtype but no memory (a
// model built under DefaultDeviceGuard(Device::meta()) or with a layer's
// device= argument). An op with a meta input computes only its output types,
// through the op table's shape inference, and returns meta tensors of those
// types, as PyTorch's meta kernels do. Small integer operands on the cpu
// (shapes, axes) take part as constants, so Reshape and friends infer
// exactly; an op whose output shape depends on values the meta device does
// not have is an error that says so.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/detail/EagerInternal.h"
#include "nngraph/ir/Graph.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/runtime/Error.h"

namespace nng::detail {

bool anyMeta(const std::vector<rt::Tensor> &Inputs) {
  for (const rt::Tensor &T : Inputs)
    if (T.defined() && T.device().isMeta())
      return true;
  return false;
}

std::vector<rt::Tensor> runMeta(ir::OpKind Op,
                                const std::vector<rt::Tensor> &Inputs,
                                const ir::AttrMap &Attrs,
                                unsigned NumOutputs) {
  ir::Graph G;
  std::vector<ir::Value *> Ins;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    const rt::Tensor &T = Inputs[I];
    std::string Name = "x" + std::to_string(I);
    if (!T.defined())
      Ins.push_back(nullptr);
    else if (!T.device().isMeta() && !isFloatingPoint(T.dtype()) &&
             T.numel() <= 1024)
      Ins.push_back(G.addInitializer(Name, T));
    else
      Ins.push_back(G.addInput(Name, ir::TensorType(T.dtype(), T.shape())));
  }
  std::vector<std::string> Outs;
  for (unsigned I = 0; I < NumOutputs; ++I)
    Outs.push_back("y" + std::to_string(I));
  ir::Node *N = G.addNode(Op, Ins, Outs, Attrs);
  N->setName("meta");
  std::string OpName(ir::getOpSchema(Op).Name);
  std::vector<ir::TensorType> Types;
  try {
    Types = ir::inferNodeTypes(*N);
  } catch (Error &E) {
    E.addContext("while computing the output shape of " + OpName +
                 " on meta tensors");
    throw;
  }
  std::vector<rt::Tensor> Result;
  for (size_t I = 0; I < Types.size() && I < NumOutputs; ++I) {
    const ir::TensorType &T = Types[I];
    if (!T.hasRank() || !T.isStatic())
      fail(ErrorKind::Unsupported, OpName, " on meta tensors: output ", I,
           " has type ", T.toString(),
           ": its shape depends on values, which a meta tensor does not "
           "have; run this op on real tensors (to_empty, or load the "
           "weights with assign=true first)");
    std::vector<int64_t> Dims;
    for (const ir::Dim &D : T.dims())
      Dims.push_back(D.value());
    Result.push_back(rt::Tensor::empty(Shape(Dims), T.dtype(), Device::meta()));
  }
  if (Result.size() != NumOutputs)
    fail(ErrorKind::Unsupported, OpName, " on meta tensors: shape inference "
         "gave ", Result.size(), " outputs, ", NumOutputs, " wanted");
  return Result;
}

} // namespace nng::detail
