//===- DnnlKernel.h - oneDNN-served node kernels (internal) ----*- C++ -*-===//
//
// The CPU backend serves a node with a DnnlKernel: on each call it looks up
// a Plan for the concrete input shapes (a oneDNN primitive with its memory
// objects, built once per distinct input signature and cached), and either
// executes it or, when no primitive computes exactly what the reference
// kernel computes (dtype, attribute, shape, NaN inputs to a max), calls the
// reference kernel. Each op family lives in its own file (DnnlConv.cpp,
// DnnlMatMul.cpp, DnnlPool.cpp, DnnlEltwise.cpp, DnnlReduce.cpp) and exposes
// a factory that returns null when the node's attributes alone rule oneDNN
// out.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "../reference/Interpreter.h"
#include "../reference/KernelUtils.h"
#include "nngraph/backends/cpu/CpuBackend.h"
#include "nngraph/ir/FusedActivation.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace nng::backends::cpu {

using reference::KernelContext;
using reference::NodeKernel;
using reference::Window;

/// The process-wide CPU engine.
dnnl::engine &cpuEngine();
/// The calling thread's stream on cpuEngine().
dnnl::stream &cpuStream();

/// dnnl dims of a shape (rank 0 becomes {1}: oneDNN has no scalars).
dnnl::memory::dims dimsOf(const Shape &S);
/// A convolution's or pooling's window in oneDNN's terms: its strides,
/// dilations (oneDNN counts the gaps: ONNX's minus 1) and begin and end
/// padding.
struct DnnlWindow {
  dnnl::memory::dims Strides, Dil, PadL, PadR;
};
DnnlWindow dnnlWindow(const reference::Window &W);
/// A row-major f32 memory descriptor of Dims.
/// ConvTranspose N of an input of shape X into one of shape Y with weights
/// of ONNX's [C, M/G, k...] shape WS, in oneDNN's terms (DnnlConv.cpp): the
/// reference's window (oneDNN's end padding is the transposed window's,
/// output_padding counted in it) and the logical [G, M/G, C/G, k...]
/// weights described by strides over ONNX's storage (no group dim when G
/// is 1). nullopt when the attributes or shapes disagree (the reference
/// kernel reports them) or a padding is negative.
struct DeconvGeometry {
  dnnl::memory::dims PadL, PadR, Dil, Strides;
  dnnl::memory::desc Weights;
};
std::optional<DeconvGeometry> deconvGeometry(const ir::Node &N, const Shape &X,
                                             const Shape &Y, const Shape &WS);
dnnl::memory::desc plainDesc(const dnnl::memory::dims &Dims);
/// A f32 memory descriptor of Dims with explicit element strides.
dnnl::memory::desc stridedDesc(const dnnl::memory::dims &Dims,
                               const dnnl::memory::dims &Strides);
/// Dims with leading 1s up to rank R.
dnnl::memory::dims padDims(dnnl::memory::dims D, size_t R);
/// oneDNN's data type of T (f32, u8, s8, s32); nullopt for the others.
std::optional<dnnl::memory::data_type> dnnlType(DType T);
/// A row-major memory descriptor of Dims with data type T.
dnnl::memory::desc plainDesc(const dnnl::memory::dims &Dims,
                             dnnl::memory::data_type T);

/// True when T is present and f32 (the only dtype the primitives serve).
inline bool isF32(const Tensor &T) {
  return T.defined() && T.dtype() == DType::F32;
}
/// True when every one of N floats is finite with |x| <= Limit (Limit
/// +inf: none is NaN); a vectorized, parallel scan (LoopsElementwise.cpp). The
/// guards of speculative programs and the checks below use it.
bool allWithin(const float *X, int64_t N, float Limit);
/// True when every element of the f32 tensor X is a number (max-type
/// primitives ignore NaN where the reference propagates it).
bool noNaN(const Tensor &X);
/// True when every element of the f32 tensor X is finite (an activation
/// post-op may map the NaN that inf * 0 makes to a number).
bool allFinite(const Tensor &X);
/// True when every present input of C is finite (allFinite).
bool allInputsFinite(const KernelContext &C);
/// X contiguous (itself when it already is).
inline Tensor dense(const Tensor &X) {
  return X.isContiguous() ? X : X.contiguous();
}
/// The data pointer oneDNN wants (it takes non-const handles).
inline void *handle(const Tensor &X) { return const_cast<void *>(X.rawData()); }

/// One primitive ready to execute: built for one input signature.
class Plan {
public:
  virtual ~Plan();
  /// False when these input values need the reference kernel (NaN in a max).
  virtual bool accepts(const KernelContext &C) const { return true; }
  /// Computes the node's outputs into C.Outputs.
  virtual void run(KernelContext &C) = 0;

protected:
  /// Executes P on the thread's stream with Args and waits.
  static void execute(const dnnl::primitive &P,
                      const std::unordered_map<int, dnnl::memory> &Args);
};

/// A primitive plus its argument memories, whose handles are set per call.
class SimplePlan : public Plan {
public:
  dnnl::primitive Prim;
  std::unordered_map<int, dnnl::memory> Args;
  /// Adds argument Arg with descriptor MD (handle set at each run).
  void addArg(int Arg, const dnnl::memory::desc &MD);
  /// Sets argument Arg's handle to T's data.
  void bind(int Arg, const Tensor &T) {
    Args.at(Arg).set_data_handle(handle(T));
  }
  void execute() { Plan::execute(Prim, Args); }
};

/// A primitive with one source and one destination (eltwise, softmax,
/// reduction): binds input 0 and the allocated output 0 and executes.
/// With CheckNaN, inputs holding a NaN go to the reference kernel (oneDNN
/// maps NaN to numbers in relu/exp, and max-type ops may drop it).
class SrcDstPlan : public SimplePlan {
public:
  bool CheckNaN = false;
  bool accepts(const KernelContext &C) const override {
    return !CheckNaN || noNaN(dense(C.in(0)));
  }
  void run(KernelContext &C) override {
    Tensor X = dense(C.in(0));
    Tensor &Y = C.allocOutput(0);
    bind(DNNL_ARG_SRC, X);
    bind(DNNL_ARG_DST, Y);
    execute();
  }
};

/// A node served by oneDNN, falling back to the reference kernel.
class DnnlKernel {
public:
  explicit DnnlKernel(const ir::Node &N);
  virtual ~DnnlKernel();
  DnnlKernel(const DnnlKernel &) = delete;
  DnnlKernel &operator=(const DnnlKernel &) = delete;

  /// Runs the node (thread-safe: a kernel object serializes its calls).
  void operator()(KernelContext &C);
  /// Calls served by oneDNN and by the reference kernel (for tests).
  int64_t servedCalls() const { return Served; }
  int64_t fallbackCalls() const { return Fallbacks; }

protected:
  /// Builds the plan for C's inputs (f32, non-empty: checked before), or
  /// returns null when oneDNN cannot compute exactly the reference result.
  /// oneDNN errors (an unimplemented configuration) also mean fallback.
  virtual std::unique_ptr<Plan> makePlan(KernelContext &C) = 0;
  /// Appends input values the plan depends on to the cache key (ReduceSum's
  /// axes); shapes and dtypes are always part of it.
  virtual void extraKey(const KernelContext &C,
                        std::vector<int64_t> &Key) const {}

  const ir::Node &N;

private:
  struct Entry {
    std::vector<int64_t> Key;
    std::unique_ptr<Plan> P; ///< Null: falls back for this signature.
  };
  static constexpr size_t MaxEntries = 16;
  std::vector<Entry> Cache; ///< Oldest first.
  std::vector<int64_t> KeyBuf;
  size_t LastHit = 0;
  std::mutex Mu;
  int64_t Served = 0, Fallbacks = 0;
  Plan *lookup(KernelContext &C);
};

/// The counts behind cpuCallCounts().
CpuCallCounts dnnlCallCounts();

/// Wraps a kernel object as a NodeKernel.
NodeKernel asNodeKernel(std::shared_ptr<DnnlKernel> K);

/// A oneDNN post-op for a fused activation; nullopt when none matches the
/// reference formula exactly.
struct PostOpEltwise {
  dnnl::algorithm Alg;
  float Alpha = 0, Beta = 0;
};
std::optional<PostOpEltwise> fusedActivationPostOp(const ir::Node &N);
/// The post-op of activation A with its full parameter list P
/// (fusedActivationParams); nullopt when none matches the reference.
std::optional<PostOpEltwise> activationPostOp(const ir::FusedActivationInfo &A,
                                              const std::vector<float> &P);

// Factories of the op families: null when the node's attributes rule
// oneDNN out (the backend then runs the reference kernel).
std::shared_ptr<DnnlKernel> makeConvKernel(const ir::Node &N);
/// The oneDNN node kernel of N from the kernel table (KernelTable.def), or
/// null.
std::shared_ptr<DnnlKernel> dnnlKernelFor(const ir::Node &N);
/// The oneDNN algorithm of op K's binary, eltwise or reduction kernels
/// (KernelTable.def); undef when it has none.
dnnl::algorithm dnnlAlgorithmFor(ir::OpKind K);
std::shared_ptr<DnnlKernel> makeConvTransposeKernel(const ir::Node &N);
std::shared_ptr<DnnlKernel> makeConvGradWeightKernel(const ir::Node &N);
std::shared_ptr<DnnlKernel> makeMatMulKernel(const ir::Node &N);
std::shared_ptr<DnnlKernel> makeGemmKernel(const ir::Node &N);
std::shared_ptr<DnnlKernel> makePoolKernel(const ir::Node &N);
std::shared_ptr<DnnlKernel> makePoolGradKernel(const ir::Node &N);
std::shared_ptr<DnnlKernel> makeGlobalAveragePoolKernel(const ir::Node &N);
std::shared_ptr<DnnlKernel> makeBinaryKernel(const ir::Node &N);
std::shared_ptr<DnnlKernel> makeEltwiseKernel(const ir::Node &N);
std::shared_ptr<DnnlKernel> makeSoftmaxKernel(const ir::Node &N);
std::shared_ptr<DnnlKernel> makeReduceKernel(const ir::Node &N);
std::shared_ptr<DnnlKernel> makeBatchNormKernel(const ir::Node &N);

} // namespace nng::backends::cpu
