//===- DnnlKernel.cpp - The oneDNN kernel base: cache and fallback -------===//
//
// The engine and streams, memory-descriptor helpers, the per-node plan
// cache keyed by input dtypes and shapes, the fallback to the reference
// kernel, and the mapping of fused activations onto oneDNN eltwise
// post-ops.
//
//===----------------------------------------------------------------------===//

#include "DnnlKernel.h"
#include "nngraph/backends/cpu/CpuBackend.h"
#include "nngraph/ir/FusedActivation.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace nng::backends::cpu {

dnnl::engine &cpuEngine() {
  // Never destroyed: executables kept in statics (eager caches) may release
  // their primitives and memories after other statics are gone.
  static dnnl::engine *E = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *E;
}

dnnl::stream &cpuStream() {
  thread_local dnnl::stream S(cpuEngine());
  return S;
}

dnnl::memory::dims dimsOf(const Shape &S) {
  if (S.rank() == 0)
    return {1};
  return dnnl::memory::dims(S.begin(), S.end());
}

dnnl::memory::desc stridedDesc(const dnnl::memory::dims &Dims,
                               const dnnl::memory::dims &Strides) {
  return dnnl::memory::desc(Dims, dnnl::memory::data_type::f32, Strides);
}

DnnlWindow dnnlWindow(const reference::Window &W) {
  DnnlWindow D;
  D.Strides.assign(W.Strides.begin(), W.Strides.end());
  D.Dil.assign(W.Dilations.begin(), W.Dilations.end());
  for (auto &E : D.Dil)
    E -= 1;
  D.PadL.assign(W.PadBegin.begin(), W.PadBegin.end());
  D.PadR.assign(W.PadEnd.begin(), W.PadEnd.end());
  return D;
}

dnnl::memory::desc plainDesc(const dnnl::memory::dims &Dims) {
  return plainDesc(Dims, dnnl::memory::data_type::f32);
}

dnnl::memory::desc plainDesc(const dnnl::memory::dims &Dims,
                             dnnl::memory::data_type T) {
  dnnl::memory::dims St(Dims.size());
  int64_t Acc = 1;
  for (size_t D = Dims.size(); D-- > 0;) {
    St[D] = Acc;
    Acc *= Dims[D];
  }
  return dnnl::memory::desc(Dims, T, St);
}

std::optional<dnnl::memory::data_type> dnnlType(DType T) {
  using DT = dnnl::memory::data_type;
  switch (T) {
  case DType::F32:
    return DT::f32;
  case DType::U8:
    return DT::u8;
  case DType::I8:
    return DT::s8;
  case DType::I32:
    return DT::s32;
  default:
    return std::nullopt;
  }
}

dnnl::memory::dims padDims(dnnl::memory::dims D, size_t R) {
  if (D.size() < R)
    D.insert(D.begin(), R - D.size(), 1);
  return D;
}

bool allInputsFinite(const KernelContext &C) {
  for (size_t I = 0; I < C.Inputs.size(); ++I)
    if (C.hasInput(I) && !allFinite(dense(C.in(I))))
      return false;
  return true;
}

bool noNaN(const Tensor &X) {
  return allWithin(static_cast<const float *>(X.rawData()), X.numel(), INFINITY);
}
bool allFinite(const Tensor &X) {
  return allWithin(static_cast<const float *>(X.rawData()), X.numel(),
                   std::numeric_limits<float>::max());
}

Plan::~Plan() = default;

void Plan::execute(const dnnl::primitive &P,
                   const std::unordered_map<int, dnnl::memory> &Args) {
  dnnl::stream &S = cpuStream();
  P.execute(S, Args);
  S.wait();
}

void SimplePlan::addArg(int Arg, const dnnl::memory::desc &MD) {
  Args.emplace(Arg, dnnl::memory(MD, cpuEngine(), DNNL_MEMORY_NONE));
}

namespace {
std::atomic<int64_t> DnnlCalls{0}, FallbackCalls{0};
} // namespace

CpuCallCounts dnnlCallCounts() {
  return {DnnlCalls.load(std::memory_order_relaxed),
          FallbackCalls.load(std::memory_order_relaxed)};
}

DnnlKernel::DnnlKernel(const ir::Node &N) : N(N) {}
DnnlKernel::~DnnlKernel() = default;

Plan *DnnlKernel::lookup(KernelContext &C) {
  // The key is built in a reused buffer: a cache hit allocates nothing.
  std::vector<int64_t> &Key = KeyBuf;
  Key.clear();
  for (const Tensor &T : C.Inputs) {
    if (!T.defined()) {
      Key.push_back(-1);
      continue;
    }
    Key.push_back(static_cast<int64_t>(T.dtype()));
    Key.push_back(static_cast<int64_t>(T.rank()));
    Key.insert(Key.end(), T.shape().begin(), T.shape().end());
  }
  extraKey(C, Key);
  if (LastHit < Cache.size() && Cache[LastHit].Key == Key)
    return Cache[LastHit].P.get();
  for (size_t I = 0; I < Cache.size(); ++I)
    if (Cache[I].Key == Key) {
      LastHit = I;
      return Cache[I].P.get();
    }
  // A new signature: plan it, unless some operand is empty (the reference
  // kernels handle those) or a shape is not known.
  std::unique_ptr<Plan> P;
  bool Plannable = true;
  for (const Tensor &T : C.Inputs)
    Plannable = Plannable && (!T.defined() || T.numel() > 0);
  for (const ir::TensorType &T : C.OutTypes) {
    auto S = T.staticShape();
    Plannable = Plannable && S && S->numel() > 0;
  }
  if (Plannable) {
    try {
      P = makePlan(C);
    } catch (const dnnl::error &) {
      P.reset(); // Unimplemented in oneDNN: the reference kernel serves.
    }
  }
  if (Cache.size() == MaxEntries)
    Cache.erase(Cache.begin());
  Cache.push_back({Key, std::move(P)});
  LastHit = Cache.size() - 1;
  return Cache.back().P.get();
}

void DnnlKernel::operator()(KernelContext &C) {
  std::lock_guard<std::mutex> Lock(Mu);
  Plan *P = lookup(C);
  if (P && P->accepts(C)) {
    ++Served;
    DnnlCalls.fetch_add(1, std::memory_order_relaxed);
    P->run(C);
    return;
  }
  ++Fallbacks;
  FallbackCalls.fetch_add(1, std::memory_order_relaxed);
  reference::getKernel(N.op())(C);
}

NodeKernel asNodeKernel(std::shared_ptr<DnnlKernel> K) {
  return [K = std::move(K)](KernelContext &C) { (*K)(C); };
}

std::optional<PostOpEltwise> fusedActivationPostOp(const ir::Node &N) {
  const ir::FusedActivationInfo *A =
      ir::lookupFusedActivation(N.attrString("activation"));
  if (!A)
    return std::nullopt; // The reference kernel reports it.
  std::vector<float> Given;
  if (N.attrs().has("activation_params"))
    Given = N.attr("activation_params").floats();
  if (Given.size() > A->Params.size())
    return std::nullopt;
  return activationPostOp(*A, ir::fusedActivationParams(*A, Given));
}

std::optional<PostOpEltwise> activationPostOp(const ir::FusedActivationInfo &A,
                                              const std::vector<float> &P) {
  using Alg = dnnl::algorithm;
  switch (A.Op) {
  case ir::OpKind::Relu:
    return PostOpEltwise{Alg::eltwise_relu, 0, 0};
  case ir::OpKind::LeakyRelu:
    return PostOpEltwise{Alg::eltwise_relu, P[0], 0};
  case ir::OpKind::Sigmoid:
    return PostOpEltwise{Alg::eltwise_logistic, 0, 0};
  case ir::OpKind::Tanh:
    return PostOpEltwise{Alg::eltwise_tanh, 0, 0};
  case ir::OpKind::Clip:
    // min > max gives max everywhere in the reference; clip_v2 would not.
    if (!(P[0] <= P[1]))
      return std::nullopt;
    return PostOpEltwise{Alg::eltwise_clip_v2, P[0], P[1]};
  case ir::OpKind::HardSwish:
    return PostOpEltwise{Alg::eltwise_hardswish, 0, 0};
  case ir::OpKind::Elu:
    return PostOpEltwise{Alg::eltwise_elu, P[0], 0};
  case ir::OpKind::Gelu:
    return PostOpEltwise{A.GeluApproximate == "tanh" ? Alg::eltwise_gelu_tanh
                                                      : Alg::eltwise_gelu_erf,
                         0, 0};
  default:
    return std::nullopt; // HardSigmoid: no oneDNN eltwise.
  }
}

} // namespace nng::backends::cpu
