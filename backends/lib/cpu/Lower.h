//===- Lower.h - Lowering a graph into a cpu Program (internal) -*- C++ -*-===//
//
// compileProgram() specialises a verified graph to concrete input shapes
// (inference once, with values computable at compile time folded: the
// Shape/Gather/Concat arithmetic of exported models disappears) and lowers
// each node through the kernel table (KernelTable.def): a lowering either
// emits steps and returns true, or declines (false) and the node runs on its
// node kernel in a fallback step. A convolution's residual sum and
// activation come as FusedConv nodes (the epilogue rule, FusionRules.h,
// runs before); lowerings may still fuse the node's sole consumers (a
// product's bias, residual Add and activation, a depthwise convolution after
// a pointwise one, a QDQ residual join after an int8 convolution) and mark
// them done; a node that a later one may fuse is deferred until then.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Program.h"

#include <atomic>
#include <unordered_map>
#include <unordered_set>

namespace nng::backends::cpu {

/// A QDQ residual join after a QLinearConv, as the QDQ form of a ResNet
/// block ends: y_q = QLinearConv, a = DequantizeLinear(y_q), b =
/// DequantizeLinear(r_q), s = Add(a, b) (either order), t = Relu(s)
/// (optional), o_q = QuantizeLinear(t). Found before lowering by its
/// structure (planQLinearJoins); the convolution's lowering checks the rest
/// (LowerQLinearResidual.cpp).
struct QLinearJoin {
  const ir::Node *DqY = nullptr, *DqR = nullptr, *Add = nullptr;
  const ir::Node *Relu = nullptr; ///< Null: none.
  const ir::Node *Q = nullptr;
};

/// State shared by the lowerings of one compile.
struct LowerContext {
  const ir::Graph &G;
  ProgramBuilder B;
  std::unordered_map<const ir::Value *, int> SlotOf;
  /// Nodes already lowered as part of another node's step.
  std::unordered_set<const ir::Node *> Done;
  /// Each node's position in the graph (the order of lowering).
  std::unordered_map<const ir::Node *, size_t> Order;
  /// The static dtype and shape of the outputs of the node being lowered
  /// (and of nodes a lowering fuses: it adds theirs with typeOf()).
  std::unordered_map<const ir::Value *, std::pair<DType, Shape>> PendingTypes;
  /// False: compile the exact program (no clamp speculates on bounds).
  bool Speculate = true;
  /// Convolutions write oneDNN's channel-blocked layout (nChw16c) rather
  /// than the one it prefers: the graph has 3x3 convolutions that run as
  /// Winograd's algorithm (LowerConv.cpp), whose kernels take only that
  /// layout, so their neighbours keep it and no reorders come between.
  bool PreferBlocked = false;
  /// Magnitude bounds computed so far (ValueBounds.cpp); nullopt: none.
  std::unordered_map<const ir::Value *, std::optional<double>> Bounds;
  /// Clip nodes (or FusedConv nodes, for their activation) run by an own
  /// clamp loop that reports a NaN in its input.
  std::unordered_set<const ir::Node *> GuardedClamps;
  /// The residual joins a QLinearConv may fuse, by convolution.
  std::unordered_map<const ir::Node *, QLinearJoin> Joins;
  /// Nodes lowered only after another one, which may fuse them: a join's
  /// residual DequantizeLinear that comes before its convolution. Their
  /// readers count as alive in diesAt until then.
  std::unordered_map<const ir::Node *, const ir::Node *> Deferred;
  /// The results of If branches lowered in place (LowerControlFlow.cpp):
  /// they live on as the If's results, read after the branch, so they count
  /// as outputs (never fused away, never overwritten in place).
  std::unordered_set<const ir::Value *> BranchResults;

  /// What every Program of the executable shares (packed weights).
  ProgramShared &Shared;

  LowerContext(const ir::Graph &G, Program &P, ProgramShared &Shared)
      : G(G), B(P), Shared(Shared) {}

  Program &program() { return B.P; }
  ValueSlot &slot(int S) { return B.P.Slots[S]; }
  /// The slot of V (which must have been defined).
  int slotOf(const ir::Value *V) const { return SlotOf.at(V); }
  ValueSlot &slotOfValue(const ir::Value *V) { return slot(slotOf(V)); }
  /// The constant tensor of V, or null when V is computed at run time.
  /// Marks V's slot Baked: the lowering may have used its values.
  const Tensor *constantOf(const ir::Value *V) const;
  /// True when V is f32.
  bool isF32(const ir::Value *V) const;
  /// True when V is a graph output or the result of a branch lowered in
  /// place (read after the branch, by the If's readers).
  bool isOutput(const ir::Value *V) const {
    return G.isOutput(V) || BranchResults.count(V);
  }
  /// True when V exists and something reads it (a node or the caller).
  bool needed(const ir::Value *V) const {
    return V && (V->hasUses() || isOutput(V));
  }
  /// The only node that reads V, when V has exactly one use, is no graph
  /// output and that node is not lowered yet; else null.
  const ir::Node *soleConsumer(const ir::Value *V) const;
  /// The static shape of V: a defined slot's, or a pending output's.
  const Shape &shapeOf(const ir::Value *V) const;
  /// True when no node after Now (or deferred), other than Except, reads V,
  /// and no other slot shares V's buffer: V's bytes may be overwritten at
  /// Now.
  bool diesAt(const ir::Value *V, const ir::Node &Now,
              const ir::Node *Except) const;
  /// Defines V as a new arena buffer in layout MD (plain when empty).
  int defineBuffer(const ir::Value *V, const dnnl::memory::desc &MD = {});
  /// N.describe(), made once per executable (step descriptions, messages).
  const std::string &describe(const ir::Node &N) { return Shared.describe(N); }
};

/// Rows of the left operand up to which a product of run-time values is the
/// backend's own loop (LowerMatMul.cpp): a decoder's attention (one new
/// token against its cache, a new cache length every step) needs no
/// primitive per shape, and at so few rows the product is a pass over the
/// right operand either way.
constexpr int64_t OwnLoopRows = 8;
/// The extents of a product of A and B (padded to rank R) with equal batch
/// dims; B given as [.., N, K] when TransB. nullopt when a batch dim
/// broadcasts or the K's differ.
struct FewRowsDims {
  int64_t Batches = 1, M = 0, K = 0, N = 0;
};
std::optional<FewRowsDims> fewRowsDims(const Shape &A, const Shape &B,
                                       size_t R, bool TransB = false);

/// Makes value Y, a transpose left unmaterialized for a product that reads
/// it in place (ValueSlot::TransposeOf), a real buffer written by a copy
/// step, for a product that cannot; returns its slot (LowerCopy.cpp).
int materializeTranspose(LowerContext &C, const ir::Value *Y);

/// Lowers N; false when it declines (the node kernel serves it).
using LowerFn = bool (*)(LowerContext &, const ir::Node &);

/// Specialises N, computes it now when its inputs are known at compile
/// time, else lowers it through the kernel table or into a fallback step
/// (Lower.cpp). False when an output's shape is only known at run time.
bool lowerNode(LowerContext &C, const ir::Node &N);
/// An If whose condition is known at this compile (a shape test of an
/// exported model: `Equal(Size(Shape(x)), k)`) lowered as the nodes of the
/// branch it takes (LowerControlFlow.cpp). nullopt: N is no such If (it
/// runs on its node kernel); else what lowering the branch returned.
std::optional<bool> lowerChosenBranch(LowerContext &C, const ir::Node &N);
/// Numbers the nodes of G (C.Order), a node's regions before the node: a
/// branch lowered in place runs where its If is, after what it reads.
void numberNodes(LowerContext &C, const ir::Graph &G);

// The op-family lowerings (one file each).
bool lowerConv(LowerContext &C, const ir::Node &N);
/// ConvTranspose (1-d and 2-d, constant f32 weights) as a oneDNN
/// deconvolution with packed weights (LowerConv.cpp).
bool lowerConvTranspose(LowerContext &C, const ir::Node &N);
/// True when conv N may run as Winograd's algorithm (3x3, stride 1, no
/// dilation, one group, constant f32 weights with channels in multiples of
/// 16) and oneDNN has a Winograd kernel for this CPU.
bool winogradCandidate(const LowerContext &C, const ir::Node &N);
bool lowerPool(LowerContext &C, const ir::Node &N);
bool lowerBatchNorm(LowerContext &C, const ir::Node &N);
bool lowerBinary(LowerContext &C, const ir::Node &N);
bool lowerActivation(LowerContext &C, const ir::Node &N);
/// PRelu as the backend's own loop (LowerActivation.cpp).
bool lowerPRelu(LowerContext &C, const ir::Node &N);
/// HardSigmoid of f32 as the backend's own loop (LowerActivation.cpp):
/// oneDNN 2.6 has no such eltwise.
bool lowerHardSigmoid(LowerContext &C, const ir::Node &N);
bool lowerEltwise(LowerContext &C, const ir::Node &N);
bool lowerConcat(LowerContext &C, const ir::Node &N);
/// ReduceSum / ReduceMean of f32 as an own loop (LowerReduce.cpp).
bool lowerReduce(LowerContext &C, const ir::Node &N);
bool lowerMatMul(LowerContext &C, const ir::Node &N);
/// nng.Attention as the backend's own flash-attention loop
/// (LowerAttention.cpp).
bool lowerAttention(LowerContext &C, const ir::Node &N);
bool lowerAlias(LowerContext &C, const ir::Node &N);
bool lowerSoftmax(LowerContext &C, const ir::Node &N);
bool lowerLayerNorm(LowerContext &C, const ir::Node &N);
/// InstanceNormalization as the backend's own row loop (LowerNorm.cpp).
bool lowerInstanceNorm(LowerContext &C, const ir::Node &N);
bool lowerCopy(LowerContext &C, const ir::Node &N);
bool lowerFusedRegion(LowerContext &C, const ir::Node &N);
/// An f32 elementwise node the backend has no loop of its own for
/// (Sigmoid, Exp, Pow, Neg, ...) as a fused region holding it alone: one
/// JIT kernel instead of a fallback step's node kernel.
bool lowerElementwiseJit(LowerContext &C, const ir::Node &N);
bool lowerQuantize(LowerContext &C, const ir::Node &N);
bool lowerCast(LowerContext &C, const ir::Node &N);
bool lowerQLinearConv(LowerContext &C, const ir::Node &N);
bool lowerQLinearMatMul(LowerContext &C, const ir::Node &N);

// --- QDQ residual joins fused into QLinearConv (LowerQLinearResidual.cpp) ----

/// Finds the residual joins of C's graph (C.Joins) and defers the residual
/// DequantizeLinear nodes that come before their convolution (C.Deferred).
void planQLinearJoins(LowerContext &C);

/// A join checked for fusion into its convolution's oneDNN primitive: the
/// per-tensor constants of every step, and the residual r_q, whose bytes
/// the destination starts as.
struct QLinearTail {
  QLinearJoin J;
  const ir::Value *Residual = nullptr; ///< r_q.
  const ir::Value *Out = nullptr;      ///< o_q.
  float ScaleY = 1, ScaleR = 1, ScaleO = 1;
  int32_t ZpY = 0, ZpR = 0, ZpO = 0;
  int32_t LoY = 0, HiY = 255; ///< y_q's range (its dtype's).
  DType OutType = DType::U8;  ///< o_q's (and r_q's) dtype.
};
/// The join after QLinearConv Conv when it can be fused: y_q of dtype YType
/// and zero point ZpY, shape YS; nullopt otherwise.
std::optional<QLinearTail> qlinearTailOf(LowerContext &C, const ir::Node &Conv,
                                         DType YType, int32_t ZpY,
                                         const Shape &YS);
/// Appends the join's post-ops (after oneDNN's output scales) to Ops; the
/// primitive's destination zero point is then T.ZpO.
void appendTailPostOps(const QLinearTail &T, dnnl::post_ops &Ops);
/// Defines o_q as the primitive's destination in layout Dst, starting as
/// r_q: r_q's own bytes when it dies here in that layout, else a copy step.
/// Adds the division's operand to Args; returns the destination slot.
int defineTailDestination(LowerContext &C, const ir::Node &Conv,
                          const QLinearTail &T, const dnnl::memory::desc &Dst,
                          std::vector<PrimitiveArg> &Args);
/// Marks the join's nodes done (after the primitive's step).
void finishTail(LowerContext &C, const QLinearTail &T);

/// The lowering of op K, or null (KernelTable.def).
LowerFn lowerFnFor(ir::OpKind K);
/// Fallback wrapped by op K's own f32 loop, which serves what it can
/// (KernelTable.def); Fallback itself when K has none.
NodeKernel withOwnLoop(ir::OpKind K, NodeKernel Fallback);
/// Calls the own f32 loops of node kernels served since the process
/// started.
int64_t ownLoopCallCount();

/// The node kernel the fallback step runs (KernelTable.cpp): a region
/// node's runner (its regions compiled by the cpu backend), oneDNN on
/// plain layouts, the backend's node kernels, or the reference kernel.
NodeKernel nodeKernelFor(const ir::Node &N);
/// Regions the node kernels of nodes with regions compiled so far.
extern std::atomic<int64_t> RegionCompiles;

/// What compiling node N learns before lowering it, from its inputs' types
/// InTypes (null: an absent optional input) and values (Values[I] null:
/// known only at run time): its static
/// output types, and its outputs' values when it is computed now (Folded:
/// all inputs known, or Shape/Size; not for impure nodes or outputs over
/// 16 MiB). nullopt when an output's shape is only known at run time.
/// compileProgram and Program::reshape both take their shapes from here.
struct NodeSpecialization {
  std::vector<ir::TensorType> OutTypes;
  std::vector<Tensor> Folded; ///< Empty: lowered, not folded.
};
std::optional<NodeSpecialization>
specializeNode(const ir::Node &N,
               const std::vector<const ir::TensorType *> &InTypes,
               const std::vector<const Tensor *> &Values);

/// Compiles G for inputs of these dtypes and shapes; null when some value
/// keeps a shape only known at run time (data-dependent), so the caller
/// runs the graph node by node instead. Weights are packed in Shared (once
/// for every shape) and the program runs in Shared's arena. Speculate:
/// clamps after values with proven bounds may be oneDNN's
/// (ValueBounds.cpp); false compiles the exact program that redoes a run
/// whose speculation failed.
std::unique_ptr<Program> compileProgram(const ir::Graph &G,
                                        const std::vector<DType> &Types,
                                        const std::vector<Shape> &Shapes,
                                        ProgramShared &Shared,
                                        bool Speculate = true);

/// A constant to reorder once into a primitive's weights layout.
struct WeightToPack {
  Tensor T;
  dnnl::memory::desc UserMD; ///< T's own (plain or strided) layout.
  /// The argument it is bound to, and its layout there (empty: the
  /// primitive's weights_desc()).
  int Arg = DNNL_ARG_WEIGHTS;
  dnnl::memory::desc PackedMD = {};
};

/// Emits a step executing Prim, built from PD, with Args; it reads the
/// slots Reads and writes Out. PD's scratchpad (user mode) gets a buffer of
/// the arena; each of Ws is packed into its layout and bound to its
/// argument (repacked when it changes).
void emitPrimitive(LowerContext &C, const ir::Node &N, dnnl::primitive Prim,
                   const dnnl::primitive_desc_base &PD,
                   std::vector<PrimitiveArg> Args, const std::vector<int> &Reads,
                   int Out, std::vector<WeightToPack> Ws = {});

/// The same step without a primitive, for an own loop set as its
/// PrimitiveStep::Own (a primitive may take its place at a reshape, with
/// Args): each of Ws is packed into the layout it names (PackedMD), and it
/// counts as an own loop.
PrimitiveStep &emitOwnLoopStep(LowerContext &C, const ir::Node &N,
                               std::vector<PrimitiveArg> Args,
                               const std::vector<int> &Reads, int Out,
                               std::vector<WeightToPack> Ws);

/// Emits one of the backend's own loops: a step running Fn, reading the
/// slots Reads and writing Out, counted under the own-loop statistics.
/// With Fits the loop serves other shapes of its slots (Program::reshape):
/// Fn reads its extents from the slots at run time, or Adopt takes them.
void emitLoop(LowerContext &C, const std::vector<int> &Reads, int Out,
              std::string Desc, std::function<void(Program &)> Fn,
              LoopStep::FitsFn Fits = {}, LoopStep::AdoptFn Adopt = {});

/// An f32 description of D whose layout the primitive picks.
inline dnnl::memory::desc anyF32(const dnnl::memory::dims &D) {
  return dnnl::memory::desc(D, dnnl::memory::data_type::f32,
                            dnnl::memory::format_tag::any);
}

// --- Activations fused into convolutions and matmuls (LowerActivation.cpp) --

/// An activation computed by the backend's own loop.
struct Epilogue {
  enum Kind { None, Clamp, Leaky } K = None;
  float Lo = 0, Hi = 0, Alpha = 0;
  /// The loop reports a NaN in its input (Program::GuardTripped): the
  /// clamp GuardNode computes is guarded once the loop is emitted.
  bool Guard = false;
  const ir::Node *GuardNode = nullptr;
};

/// An activation fused into a primitive: a chain of eltwise post-ops whose
/// results on NaN and infinities are the reference's, or else an own loop
/// after the primitive. Own is the activation's own form wherever it has
/// one (Relu, Clip, LeakyRelu), beside a post-op chain too: the own packed
/// product fuses it, a few rows' product runs it after.
struct Activation {
  std::vector<PostOpEltwise> PostOps;
  Epilogue Own;
  bool Ok = false; ///< False: not fusable.

  /// True when the primitive cannot do it: the own loop runs after it.
  bool needsOwnLoop() const {
    return PostOps.empty() && Own.K != Epilogue::None;
  }
  /// Appends the post-op chain to Ops.
  void appendTo(dnnl::post_ops &Ops) const {
    for (const PostOpEltwise &P : PostOps)
      Ops.append_eltwise(1.0f, P.Alg, P.Alpha, P.Beta);
  }
};

/// What a depthwise convolution fused after a pointwise one fuses after it
/// (LowerConv.cpp): its activation. (A convolution's and a product's
/// epilogues are explicit in the graph: FusionRules.h.)
struct FusedTail {
  Activation Act;
  const ir::Value *Out = nullptr; ///< The last value fused.
};

/// The activation of a FusedConv/FusedGemm/FusedMatMul node.
Activation fusedNodeActivation(const ir::Node &N);
/// The activation node Act (Relu, Clip with constant bounds, LeakyRelu,
/// Tanh, Elu, HardSwish, Gelu) as a fused activation.
Activation standaloneActivation(LowerContext &C, const ir::Node &Act);
// --- Magnitude bounds and speculative clamps (ValueBounds.cpp) ----------------

/// A bound B on V: every element is finite with |x| <= B unless a guarded
/// clamp met a NaN in this run; nullopt when none is known.
std::optional<double> valueBound(LowerContext &C, const ir::Value *V);
/// The bound of convolution N's result before any activation or sum.
std::optional<double> convResultBound(LowerContext &C, const ir::Node &N);
/// Makes A, an activation after a value bounded by PreBound (nullopt: none),
/// oneDNN's clip post-op when it is a clamp to a finite range holding 0 and
/// the bound is known (the program speculates), else a guarded own loop
/// when its range is finite (ClampNode: the node it computes).
void speculateClamp(LowerContext &C, Activation &A,
                    std::optional<double> PreBound, const ir::Node &ClampNode);

/// The largest |x| of a convolution's input (weights W, bias Bias or null)
/// for which no partial result of the convolution, computed directly or by
/// Winograd's transforms, can reach infinity; nullopt when W or Bias holds
/// a NaN or an infinity. The program then depends on W and Bias.
std::optional<float> winogradInputLimit(LowerContext &C, const Tensor &W,
                                        const Tensor *Bias);
/// Activation A on values proven finite: its clamp (Relu, Clip) becomes
/// oneDNN's relu or clip post-op, exact there (they map only NaN wrongly).
Activation onFiniteValues(Activation A);
/// Emits a guard: a step checking that every element of each f32 slot
/// Checks[i].first is finite with |x| <= Checks[i].second, else reporting
/// (Program::GuardTripped) so the exact program redoes the run. Makes the
/// program speculative.
void emitGuard(LowerContext &C, const std::vector<std::pair<int, float>> &Checks,
               std::string Desc);

/// Emits oneDNN's eltwise P over slot Slot, in place (node N's activation
/// after a step that wrote Slot).
void emitEltwiseInPlace(LowerContext &C, const ir::Node &N, int Slot,
                        const PostOpEltwise &P);
/// Emits the own loop E over the f32 buffer slot Slot, in place.
void emitEpilogue(LowerContext &C, int Slot, const Epilogue &E,
                  std::string Desc);

// --- The backend's own loops (Loops*.cpp: elementwise, rows, products,
// --- copies, max pooling) ----------------------------------------------------

/// Elements per parallel chunk of an elementwise loop (PyTorch's grain).
constexpr int64_t ElementGrain = 1 << 15;

/// Compiles a loop function for AVX-512, AVX2 and baseline x86-64; the
/// loader picks one from the CPU at run time (GCC's target_clones).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NNG_VECTOR_CLONES                                                      \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define NNG_VECTOR_CLONES
#endif


/// Y = X < Lo ? Lo : (X > Hi ? Hi : X) over N floats (Y may be X): exactly
/// the reference's Relu/Clip, NaN stays NaN. Lo/Hi may be -inf/+inf.
/// Returns true when X held a NaN.
bool clampFloats(const float *X, float *Y, int64_t N, float Lo, float Hi);
/// Y = X < 0 ? X * Alpha : X (LeakyRelu; Y may be X).
void leakyReluFloats(const float *X, float *Y, int64_t N, float Alpha);
/// Y = max(0, min(1, Alpha * X + Beta)), as the reference computes it in
/// double (a NaN gives 1; Y may be X).
void hardSigmoidFloats(const float *X, float *Y, int64_t N, float Alpha,
                       float Beta);

/// Softmax (or LogSoftmax) of each of Rows rows of Len floats, with the
/// reference's NaN and infinity semantics (LoopsRows.cpp). Y must not
/// overlap X.
void softmaxRows(const float *X, float *Y, int64_t Rows, int64_t Len,
                 bool Log);
/// Layer normalization of each row: (x - mean) / sqrt(var + Eps) * Scale
/// + Bias (Bias may be null; Scale and Bias hold Len floats).
void layerNormRows(const float *X, float *Y, int64_t Rows, int64_t Len,
                   float Eps, const float *Scale, const float *Bias);
/// Instance normalization of each of Rows rows of Len floats, row r of
/// channel r % Channels: (x - mean) / sqrt(var + Eps) * Scale[c] + Bias[c]
/// with the statistics and the result computed in double, as the
/// reference's; a long row splits across the threads in blocks of a fixed
/// size, so sums are the same for every thread count. Y may be X.
void instanceNormRows(const float *X, float *Y, int64_t Rows, int64_t Len,
                      int64_t Channels, double Eps, const float *Scale,
                      const float *Bias);

/// A . B over K floats, in 16 running sums (vectorised; the order of the
/// additions differs from a plain loop's, as any blocked product's does;
/// LoopsProducts.cpp).
float dot(const float *__restrict A, const float *__restrict B, int64_t K);

/// Y[b] = A[b] x B[b] for Batches products of an [M, K] by a [K, N] matrix,
/// all row-major and dense, batch after batch: a row of Y is a sum of rows
/// of B (vectorized along N), the rows split across the threads.
void batchedFewRows(const float *A, const float *B, float *Y, int64_t Batches,
                    int64_t M, int64_t K, int64_t N);
/// The same product with B given transposed: Bt is [Batches, N, K] (a
/// decoder's keys as they lie in its cache), Y[b, m, n] = A[b, m, :] .
/// Bt[b, n, :].
void batchedFewRowsTransB(const float *A, const float *Bt, float *Y,
                          int64_t Batches, int64_t M, int64_t K, int64_t N);

/// Y = A x W (+ Bias) (+ Residual) for M <= OwnLoopRows rows of A ([M, K])
/// by constant weights W, [K, N] row-major or [N, K] when TransB, read
/// where they lie: so few rows make the product one pass over W, which a
/// packed copy would not speed up (LowerMatMul.cpp). Bias holds N floats
/// and Residual M x N (either may be null).
void linearFewRows(const float *A, const float *W, bool TransB,
                   const float *Bias, const float *Residual, float *Y,
                   int64_t M, int64_t K, int64_t N);
/// Epilogue E over N floats of X into Y (Y may be X) on the calling thread;
/// true when a clamp met a NaN (LoopsElementwise.cpp).
bool epilogueRange(const Epilogue &E, const float *X, float *Y, int64_t N);

/// True when this CPU runs packedGemm (AVX-512: x86-64-v4, in a GCC build;
/// LoopsPackedGemm.cpp); elsewhere products whose rows vary stay on oneDNN.
bool packedGemmServes();
/// W ([K, N], f32) packed for packedGemm, as a oneDNN description (a
/// reorder into it packs): panel p holds columns [64p, 64p + 64) of every
/// row, row after row; the last panel's columns past N are zeros.
dnnl::memory::desc panelDesc(int64_t K, int64_t N);
/// Y ([M, N]) = Act(A ([M, K], rows dense) x W + Bias + Residual) for any
/// M, W packed as panelDesc(K, N) says: the own product of linear layers
/// whose rows vary. Bias (N floats) and Residual ([M, N]) may be null;
/// Residual may be Y itself; Act is none, a clamp or a leaky Relu (its
/// Guard unused). In parallel over the panels (or the rows).
void packedGemm(const float *A, const float *Panels, float *Y, int64_t M,
                int64_t K, int64_t N, const float *Bias, const float *Residual,
                const Epilogue &Act);
/// The four arithmetic ops of binaryFloats.
enum class BinaryKind { Add, Sub, Mul, Div };
/// Y = A op B over Count floats, B a single float when Scalar (Y may be A
/// or B): the reference's f32 operation.
void binaryFloats(BinaryKind K, const float *A, const float *B, bool Scalar,
                  float *Y, int64_t Count);
/// PRelu, Y = X < 0 ? Slope * X : X, over the dense row-major X of shape
/// XS with the dense Slope of shape SlopeShape broadcast to it (numpy's
/// rules, checked by the caller): the reference's f32 operation, NaN and
/// infinities included (Y may be X).
void preluFloats(const float *X, const float *Slope, float *Y, const Shape &XS,
                 const Shape &SlopeShape);

/// Concat of dense row-major f32 inputs along an axis: for each of Outer
/// outer indices, Runs[i] floats of input i in turn.
void concatRuns(const std::vector<const float *> &Src,
                const std::vector<int64_t> &Runs, float *Dst, int64_t Outer);

/// A strided view of a tensor of Elem-byte elements (sizes, strides in
/// elements, offset of the first element in elements).
struct StridedView {
  std::vector<int64_t> Sizes, Strides;
  int64_t Offset = 0;
};
/// Slice's constant starts, ends, axes and steps.
struct SliceBounds {
  std::vector<int64_t> Starts, Ends, Axes, Steps;
};
/// The bounds of Slice N, when its operands are constants (LowerCopy.cpp).
std::optional<SliceBounds> sliceBounds(LowerContext &C, const ir::Node &N);
/// Copies the view V of Src into the dense row-major Dst.
void stridedCopy(const char *Src, char *Dst, const StridedView &V,
                 size_t Elem);

/// A 2-d max pool over Block interleaved channels (1: NCHW; 8 or 16: a
/// channel-blocked layout, CBlocks blocks per image).
struct MaxPoolGeometry {
  int64_t N, CBlocks, Block, H, W, OH, OW, KH, KW, SH, SW, PT, PL, DH, DW;
};
/// Max pooling with the reference's NaN semantics (a NaN in the window
/// wins).
void maxPool2d(const float *Src, float *Dst, const MaxPoolGeometry &G);

} // namespace nng::backends::cpu
