//===- DnnlReduce.cpp - Reductions and inference batch norm on oneDNN ----===//
//
// ReduceSum / ReduceMean / ReduceMax over any set of axes (ReduceSum's from
// its optional input, the others' from the attribute; none means all;
// keepdims only changes the output's shape) on the reduction primitive, and
// BatchNormalization in inference mode (training_mode 0, one output) with
// global statistics, scale and shift. ReduceSum with noop_with_empty_axes
// and no axes, NaN inputs to ReduceMax, and non-f32 operands fall back.
//
//===----------------------------------------------------------------------===//

#include "DnnlKernel.h"

namespace nng::backends::cpu {

namespace {

using dnnl::memory;

class ReduceKernel : public DnnlKernel {
public:
  ReduceKernel(const ir::Node &N, dnnl::algorithm Alg)
      : DnnlKernel(N), Alg(Alg) {}

protected:
  /// ReduceSum's axes come from an input: its values select the plan.
  void extraKey(const KernelContext &C,
                std::vector<int64_t> &Key) const override {
    if (N.op() == ir::OpKind::ReduceSum && C.hasInput(1)) {
      std::vector<int64_t> Axes = C.in(1).toIntVector();
      Key.push_back(-2);
      Key.insert(Key.end(), Axes.begin(), Axes.end());
    }
  }

  std::unique_ptr<Plan> makePlan(KernelContext &C) override {
    const Tensor &X = C.in(0);
    if (!isF32(X) || X.rank() == 0)
      return nullptr;
    std::vector<int64_t> Axes;
    if (N.op() == ir::OpKind::ReduceSum) {
      if (C.hasInput(1))
        Axes = reference::intsOf(C, C.in(1), "axes");
      if (Axes.empty() && C.attrInt("noop_with_empty_axes") != 0)
        return nullptr; // The identity: the reference copies.
    } else {
      Axes = C.attrInts("axes");
    }
    int64_t R = static_cast<int64_t>(X.rank());
    std::vector<bool> Reduced(R, Axes.empty());
    for (int64_t A : Axes) {
      if (A < -R || A >= R)
        return nullptr; // The reference kernel reports it.
      int64_t D = A < 0 ? A + R : A;
      if (Reduced[D])
        return nullptr;
      Reduced[D] = true;
    }
    memory::dims SD = dimsOf(X.shape()), DD = SD;
    bool Any = false;
    for (int64_t D = 0; D < R; ++D)
      if (Reduced[D] && SD[D] != 1) {
        DD[D] = 1;
        Any = true;
      }
    if (!Any)
      return nullptr; // Nothing to reduce: the reference copies.
    memory::desc Src = plainDesc(SD), Dst = plainDesc(DD);
    dnnl::reduction::desc D(Alg, Src, Dst, 0.f, 0.f);
    auto P = std::make_unique<SrcDstPlan>();
    P->CheckNaN = Alg == dnnl::algorithm::reduction_max;
    P->Prim = dnnl::reduction(dnnl::reduction::primitive_desc(D, cpuEngine()));
    P->addArg(DNNL_ARG_SRC, Src);
    P->addArg(DNNL_ARG_DST, Dst);
    return P;
  }

private:
  dnnl::algorithm Alg;
};

class BatchNormPlan : public SimplePlan {
public:
  void run(KernelContext &C) override {
    Tensor X = dense(C.in(0)), Scale = dense(C.in(1)), Shift = dense(C.in(2));
    Tensor Mean = dense(C.in(3)), Var = dense(C.in(4));
    Tensor &Y = C.allocOutput(0);
    bind(DNNL_ARG_SRC, X);
    bind(DNNL_ARG_SCALE, Scale);
    bind(DNNL_ARG_SHIFT, Shift);
    bind(DNNL_ARG_MEAN, Mean);
    bind(DNNL_ARG_VARIANCE, Var);
    bind(DNNL_ARG_DST, Y);
    execute();
  }
};

class BatchNormKernel : public DnnlKernel {
public:
  using DnnlKernel::DnnlKernel;

protected:
  std::unique_ptr<Plan> makePlan(KernelContext &C) override {
    const Tensor &X = C.in(0);
    if (!isF32(X) || X.rank() < 2 || X.rank() > 5)
      return nullptr;
    int64_t Ch = X.size(1);
    for (size_t I = 1; I < 5; ++I)
      if (!isF32(C.in(I)) || C.in(I).shape() != Shape{Ch})
        return nullptr;
    memory::desc MD = plainDesc(dimsOf(X.shape()));
    auto Flags = dnnl::normalization_flags::use_global_stats |
                 dnnl::normalization_flags::use_scale |
                 dnnl::normalization_flags::use_shift;
    dnnl::batch_normalization_forward::desc D(
        dnnl::prop_kind::forward_inference, MD, C.attrFloat("epsilon"), Flags);
    auto P = std::make_unique<BatchNormPlan>();
    P->Prim = dnnl::batch_normalization_forward(
        dnnl::batch_normalization_forward::primitive_desc(D, cpuEngine()));
    memory::desc CD = plainDesc({Ch});
    P->addArg(DNNL_ARG_SRC, MD);
    P->addArg(DNNL_ARG_DST, MD);
    P->addArg(DNNL_ARG_SCALE, CD);
    P->addArg(DNNL_ARG_SHIFT, CD);
    P->addArg(DNNL_ARG_MEAN, CD);
    P->addArg(DNNL_ARG_VARIANCE, CD);
    return P;
  }
};

} // namespace

std::shared_ptr<DnnlKernel> makeReduceKernel(const ir::Node &N) {
  dnnl::algorithm Alg = dnnlAlgorithmFor(N.op());
  if (Alg == dnnl::algorithm::undef)
    return nullptr;
  return std::make_shared<ReduceKernel>(N, Alg);
}

std::shared_ptr<DnnlKernel> makeBatchNormKernel(const ir::Node &N) {
  if (N.numOutputs() != 1 || N.attrInt("training_mode") != 0)
    return nullptr;
  return std::make_shared<BatchNormKernel>(N);
}

} // namespace nng::backends::cpu
