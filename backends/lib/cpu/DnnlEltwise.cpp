//===- DnnlEltwise.cpp - Binary, unary and softmax ops on oneDNN ---------===//
//
// Add/Sub/Mul/Div with numpy broadcasting on the binary primitive (which
// broadcasts only its second source: the full-shape operand goes first,
// swapped for Add and Mul, else the reference serves), Relu, Sigmoid, Tanh,
// Exp, Sqrt and Abs on eltwise_forward over the flat tensor, and
// Softmax / LogSoftmax along one axis (opset-13 semantics) on softmax_v2.
// f32 only.
//
//===----------------------------------------------------------------------===//

#include "DnnlKernel.h"

namespace nng::backends::cpu {

namespace {

using dnnl::memory;

// --- binary ------------------------------------------------------------------

class BinaryPlan : public SimplePlan {
public:
  bool Swap = false;
  void run(KernelContext &C) override {
    Tensor A = dense(C.in(0)), B = dense(C.in(1));
    Tensor &Y = C.allocOutput(0);
    bind(DNNL_ARG_SRC_0, Swap ? B : A);
    bind(DNNL_ARG_SRC_1, Swap ? A : B);
    bind(DNNL_ARG_DST, Y);
    execute();
  }
};

class BinaryKernel : public DnnlKernel {
public:
  BinaryKernel(const ir::Node &N, dnnl::algorithm Alg, bool Commutes)
      : DnnlKernel(N), Alg(Alg), Commutes(Commutes) {}

protected:
  std::unique_ptr<Plan> makePlan(KernelContext &C) override {
    const Tensor &A = C.in(0), &B = C.in(1);
    if (!isF32(A) || !isF32(B))
      return nullptr;
    memory::dims YD = dimsOf(*C.OutTypes[0].staticShape());
    size_t R = YD.size();
    memory::dims AD = padDims(dimsOf(A.shape()), R);
    memory::dims BD = padDims(dimsOf(B.shape()), R);
    bool Swap = false;
    if (AD != YD) {
      if (BD != YD || !Commutes)
        return nullptr; // oneDNN broadcasts only the second source.
      std::swap(AD, BD);
      Swap = true;
    }
    memory::desc S0 = plainDesc(AD), S1 = plainDesc(BD), Dst = plainDesc(YD);
    dnnl::binary::desc D(Alg, S0, S1, Dst);
    auto P = std::make_unique<BinaryPlan>();
    P->Swap = Swap;
    P->Prim = dnnl::binary(dnnl::binary::primitive_desc(D, cpuEngine()));
    P->addArg(DNNL_ARG_SRC_0, S0);
    P->addArg(DNNL_ARG_SRC_1, S1);
    P->addArg(DNNL_ARG_DST, Dst);
    return P;
  }

private:
  dnnl::algorithm Alg;
  bool Commutes;
};

// --- unary and softmax -------------------------------------------------------

class EltwiseKernel : public DnnlKernel {
public:
  EltwiseKernel(const ir::Node &N, dnnl::algorithm Alg)
      : DnnlKernel(N), Alg(Alg) {}

protected:
  std::unique_ptr<Plan> makePlan(KernelContext &C) override {
    const Tensor &X = C.in(0);
    if (!isF32(X))
      return nullptr;
    memory::desc MD = plainDesc({X.numel()});
    dnnl::eltwise_forward::desc D(dnnl::prop_kind::forward_inference, Alg, MD,
                                  0.f, 0.f);
    auto P = std::make_unique<SrcDstPlan>();
    P->CheckNaN = Alg == dnnl::algorithm::eltwise_relu ||
                  Alg == dnnl::algorithm::eltwise_exp;
    P->Prim = dnnl::eltwise_forward(
        dnnl::eltwise_forward::primitive_desc(D, cpuEngine()));
    P->addArg(DNNL_ARG_SRC, MD);
    P->addArg(DNNL_ARG_DST, MD);
    return P;
  }

private:
  dnnl::algorithm Alg;
};

class SoftmaxKernel : public DnnlKernel {
public:
  using DnnlKernel::DnnlKernel;

protected:
  std::unique_ptr<Plan> makePlan(KernelContext &C) override {
    const Tensor &X = C.in(0);
    if (!isF32(X) || X.rank() == 0)
      return nullptr;
    int64_t Axis = reference::normAxis(C, C.attrInt("axis"),
                                       static_cast<int64_t>(X.rank()));
    memory::desc MD = plainDesc(dimsOf(X.shape()));
    dnnl::algorithm Alg = N.op() == ir::OpKind::LogSoftmax
                              ? dnnl::algorithm::softmax_log
                              : dnnl::algorithm::softmax_accurate;
    dnnl::softmax_v2_forward::desc D(dnnl::prop_kind::forward_inference, Alg,
                                     MD, MD, static_cast<int>(Axis));
    auto P = std::make_unique<SrcDstPlan>();
    P->CheckNaN = true;
    P->Prim = dnnl::softmax_v2_forward(
        dnnl::softmax_v2_forward::primitive_desc(D, cpuEngine()));
    P->addArg(DNNL_ARG_SRC, MD);
    P->addArg(DNNL_ARG_DST, MD);
    return P;
  }
};

} // namespace

std::shared_ptr<DnnlKernel> makeBinaryKernel(const ir::Node &N) {
  dnnl::algorithm Alg = dnnlAlgorithmFor(N.op());
  if (Alg == dnnl::algorithm::undef)
    return nullptr;
  return std::make_shared<BinaryKernel>(
      N, Alg, ir::hasTrait(N.op(), ir::OpTrait::Commutative));
}

std::shared_ptr<DnnlKernel> makeEltwiseKernel(const ir::Node &N) {
  dnnl::algorithm Alg = dnnlAlgorithmFor(N.op());
  if (Alg == dnnl::algorithm::undef)
    return nullptr;
  return std::make_shared<EltwiseKernel>(N, Alg);
}

std::shared_ptr<DnnlKernel> makeSoftmaxKernel(const ir::Node &N) {
  return std::make_shared<SoftmaxKernel>(N);
}

} // namespace nng::backends::cpu
