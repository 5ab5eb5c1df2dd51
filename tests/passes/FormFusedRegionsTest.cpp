//===- FormFusedRegionsTest.cpp - Fused regions: formed, run, compiled ----===//
//
// form-fused-regions on hand-written and random graphs: every region's
// result on the reference backend equals the unfused graph's, and the cpu
// backend's JIT kernel of each region matches the unfused graph on the
// reference backend within f32 tolerance (NaN where it has NaN). Random
// graphs draw elementwise chains with broadcast operands (scalars, rows,
// columns, full tensors), constants, and a Softmax, LogSoftmax or
// LayerNormalization with prologue and epilogue, over a fixed seed.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/Backend.h"
#include "nngraph/backends/cpu/KernelJit.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/ir/FusedRegion.h"
#include "nngraph/ir/Parser.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/passes/PassRegistry.h"
#include "nngraph/runtime/BuildConfig.h"
#if NNGRAPH_HAVE_ONEDNN
#include "nngraph/backends/cpu/CpuBackend.h"
#endif

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <tuple>

using namespace nng;

namespace {

using rt::Tensor;

Tensor randomTensor(const Shape &S, std::mt19937 &Gen, bool Specials) {
  std::uniform_real_distribution<double> U(-2, 2);
  Tensor T = Tensor::empty(S, DType::F32);
  for (int64_t I = 0; I < T.numel(); ++I)
    T.setFlat(I, U(Gen));
  if (Specials && T.numel() > 3) {
    T.setFlat(1, std::numeric_limits<double>::quiet_NaN());
    T.setFlat(T.numel() - 2, std::numeric_limits<double>::infinity());
  }
  return T;
}

int64_t countOp(const ir::Graph &G, ir::OpKind K) {
  int64_t N = 0;
  for (const auto &Node : G.nodes())
    N += Node->op() == K;
  return N;
}

/// Got matches Want: NaN where Want is NaN, equal infinities, else within
/// 1e-4 relative (1e-5 absolute).
void expectClose(const Tensor &Got, const Tensor &Want, const std::string &What) {
  ASSERT_EQ(Got.shape(), Want.shape()) << What;
  for (int64_t I = 0; I < Want.numel(); ++I) {
    double G = Got.getFlat(I), W = Want.getFlat(I);
    if (std::isnan(W)) {
      ASSERT_TRUE(std::isnan(G)) << What << " element " << I << ": " << G;
      continue;
    }
    if (std::isinf(W)) {
      ASSERT_EQ(G, W) << What << " element " << I;
      continue;
    }
    ASSERT_NEAR(G, W, 1e-5 + 1e-4 * std::fabs(W))
        << What << " element " << I;
  }
}

bool runPass(ir::Graph &G) {
  return passes::createPass("form-fused-regions")->run(G);
}

/// Checks G after the pass against G before it, on the reference backend
/// and (with oneDNN and LLVM) on the cpu backend, whose regions must all be
/// JIT kernels.
void checkRegions(const ir::Graph &Before, const ir::Graph &After,
                  const std::vector<Tensor> &In, const std::string &What) {
  std::vector<Tensor> Want = backends::runReference(Before, In);
  std::vector<Tensor> Ref = backends::runReference(After, In);
  ASSERT_EQ(Want.size(), Ref.size());
  for (size_t I = 0; I < Want.size(); ++I)
    expectClose(Ref[I], Want[I], What + " (reference) output " + std::to_string(I));
#if NNGRAPH_HAVE_ONEDNN
  auto Exe = backends::getBackend("cpu").compile(After);
  std::vector<Tensor> Got = Exe->run(In);
  for (size_t I = 0; I < Want.size(); ++I)
    expectClose(Got[I], Want[I], What + " (cpu) output " + std::to_string(I));
  if (backends::cpu::kernelJitAvailable()) {
    auto S = backends::cpuExecutableStats(*Exe);
    ASSERT_TRUE(S);
    EXPECT_EQ(S->JitKernels, countOp(After, ir::OpKind::FusedRegion)) << What;
    EXPECT_TRUE(S->Fallbacks.empty()) << What << ": " << S->Fallbacks.front();
  }
#endif
}

TEST(FormFusedRegions, ChainAndRowRegion) {
  auto G = ir::parseGraph(R"(graph "g" {
    input %x: f32[N,4,16]
    input %r: f32[N,4,16]
    init %b: f32[16] = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6]
    init %g: f32[16] = [1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 1.0, 0.9, 0.8, 0.7, 0.6, 0.5]
    init %two: f32[] = [2.0]
    %a = Add(%x, %b)
    %e = Erf(%a)
    %m = Mul(%e, %two)
    %s = Add(%m, %r)
    %l = LayerNormalization(%s, %g, %b) {axis = -1, epsilon = 1e-5}
    %o = Relu(%l)
    %p = Div(%x, %two)
    %q = Softmax(%p) {axis = -1}
    output %o, %q, %a
  })");
  auto Before = G->clone();
  ASSERT_TRUE(runPass(*G));
  EXPECT_EQ(countOp(*G, ir::OpKind::FusedRegion), 2);
  EXPECT_EQ(countOp(*G, ir::OpKind::LayerNormalization), 0);
  EXPECT_EQ(G->numNodes(), 2u);
  std::mt19937 Gen(7);
  for (int64_t N : {1, 3}) {
    std::vector<Tensor> In{randomTensor({N, 4, 16}, Gen, false),
                           randomTensor({N, 4, 16}, Gen, N == 3)};
    checkRegions(*Before, *G, In, "batch " + std::to_string(N));
  }
}

TEST(FormFusedRegions, TransposedInputsAreReadInPlace) {
  // A Transpose of an input starts a region (its loads are permuted): the
  // attention glue of a transformer (heads swapped with the sequence, then
  // scaled; the output projection swapped back, plus the residual, then
  // LayerNorm), and a transpose of every axis.
  auto G = ir::parseGraph(R"(graph "g" {
    input %q: f32[5,N,4,8]
    input %o: f32[5,N,16]
    input %x: f32[N,5,16]
    input %z: f32[3,N,7]
    init %g: f32[16] = [1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 1.0, 0.9, 0.8, 0.7, 0.6, 0.5]
    init %c: f32[] = [2.828427]
    %qt = Transpose(%q) {perm = [1, 2, 0, 3]}
    %qs = Div(%qt, %c)
    %ot = Transpose(%o) {perm = [1, 0, 2]}
    %r = Add(%x, %ot)
    %l = LayerNormalization(%r, %g) {axis = -1, epsilon = 1e-5}
    %zt = Transpose(%z) {perm = [2, 1, 0]}
    %zs = Sigmoid(%zt)
    output %qs, %l, %zs
  })");
  auto Before = G->clone();
  ASSERT_TRUE(runPass(*G));
  EXPECT_EQ(countOp(*G, ir::OpKind::FusedRegion), 3);
  EXPECT_EQ(countOp(*G, ir::OpKind::Transpose), 0);
  std::mt19937 Gen(11);
  for (int64_t N : {1, 2}) {
    std::vector<Tensor> In{randomTensor({5, N, 4, 8}, Gen, false),
                           randomTensor({5, N, 16}, Gen, N == 2),
                           randomTensor({N, 5, 16}, Gen, false),
                           randomTensor({3, N, 7}, Gen, false)};
    checkRegions(*Before, *G, In, "batch " + std::to_string(N));
  }
}

TEST(FormFusedRegions, InferenceAtNewShapesEqualsTheBodys) {
  // A region's types at other input shapes come from simple rules
  // (broadcast, Transpose, row reductions) without an instance of the body:
  // they must be what inferring the body gives, and a broadcast the body
  // rejects must still be an error.
  auto G = ir::parseGraph(R"(graph "g" {
    input %o: f32[5,N,16]
    input %x: f32[N,5,16]
    input %y: f32[N,1,16]
    init %g: f32[16] = [1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 1.0, 0.9, 0.8, 0.7, 0.6, 0.5]
    %ot = Transpose(%o) {perm = [1, 0, 2]}
    %r = Add(%x, %ot)
    %s = Mul(%r, %y)
    %l = LayerNormalization(%s, %g) {axis = -1, epsilon = 1e-5}
    output %l, %s
  })");
  ASSERT_TRUE(runPass(*G));
  ASSERT_EQ(countOp(*G, ir::OpKind::FusedRegion), 1);
  const ir::Node *R = nullptr;
  for (const auto &N : G->nodes())
    if (N->op() == ir::OpKind::FusedRegion)
      R = N.get();
  ASSERT_NE(R, nullptr);
  // The region's operand types for graph inputs of these shapes (its other
  // operands, initializers, keep theirs).
  auto Infer = [&](const Shape &O, const Shape &X, const Shape &Y,
                   bool CheckBody, const std::string &What) {
    std::vector<ir::TensorType> Types;
    for (const ir::Value *V : R->inputs())
      Types.push_back(V->name() == "o"   ? ir::TensorType(DType::F32, O)
                      : V->name() == "x" ? ir::TensorType(DType::F32, X)
                      : V->name() == "y" ? ir::TensorType(DType::F32, Y)
                                         : V->type());
    std::vector<const ir::TensorType *> In;
    for (const ir::TensorType &T : Types)
      In.push_back(&T);
    std::vector<const rt::Tensor *> Values(In.size(), nullptr);
    ir::InferContext IC(R->schema(), R->attrs(), In, Values, R->numOutputs(),
                        "");
    R->schema().Infer(IC);
    if (!CheckBody)
      return;
    auto Body = ir::instantiateRegionBody(R->attrString("body"), In, "");
    ASSERT_EQ(IC.outputTypes().size(), Body->outputs().size()) << What;
    for (size_t I = 0; I < Body->outputs().size(); ++I)
      EXPECT_EQ(IC.outputTypes()[I], Body->outputs()[I]->type())
          << What << " output " << I;
  };
  for (auto [S, N, Y] : {std::tuple{5, 1, 1}, std::tuple{7, 3, 1},
                         std::tuple{1, 9, 9}, std::tuple{2, 2, 2}})
    Infer(Shape({S, N, 16}), Shape({N, S, 16}),
          Shape({N, Y == 9 ? S : 1, 16}), true,
          "S=" + std::to_string(S) + " N=" + std::to_string(N));
  // %x of 4 rows against %o's 5: the body's own error.
  EXPECT_THROW(Infer(Shape({5, 2, 16}), Shape({2, 4, 16}), Shape({2, 1, 16}),
                     false, "mismatch"),
               Error);
}

TEST(FormFusedRegions, RegionsPrintParseAndInline) {
  auto G = ir::parseGraph(R"(graph "g" {
    input %x: f32[2,8]
    input %y: f32[8]
    %a = Add(%x, %y)
    %t = Tanh(%a)
    output %t
  })");
  ASSERT_TRUE(runPass(*G));
  ASSERT_EQ(G->numNodes(), 1u);
  const ir::Node &R = *G->nodes()[0];
  // The body is one line of the text format, and parses back.
  EXPECT_EQ(R.attrString("body").find('\n'), std::string::npos);
  auto Body = ir::parseRegionBody(R.attrString("body"), "test");
  EXPECT_EQ(Body->numNodes(), 2u);
  EXPECT_EQ(R.output(0)->name(), "t");
  ir::inlineFusedRegion(*G, G->nodes()[0].get());
  ASSERT_EQ(G->numNodes(), 2u);
  EXPECT_EQ(G->nodes()[1]->op(), ir::OpKind::Tanh);
  EXPECT_EQ(G->outputs()[0]->name(), "t");
}

TEST(FormFusedRegions, LeavesQuantizedProductTailsAndReadersInBetween) {
  // The integer product's rescale (Cast, Mul, Add, Relu) is the cpu
  // lowering's (FusionRules.h: loweringTakesIntoProduct); the softmax-like
  // group has a reader of %e (ReduceSum) between Exp and Div.
  auto G = ir::parseGraph(R"(graph "g" {
    input %x: u8[4,8]
    input %w: u8[8,8]
    input %c: f32[8]
    input %k: f32[]
    input %y: f32[4,8]
    %m = MatMulInteger(%x, %w)
    %f = Cast(%m) {to = 1}
    %s0 = Mul(%f, %k)
    %a = Add(%s0, %c)
    %r = Relu(%a)
    %e = Exp(%y)
    %s = ReduceSum(%e) {keepdims = 1}
    %d = Div(%e, %s)
    output %r, %d
  })");
  EXPECT_FALSE(runPass(*G));
  EXPECT_EQ(countOp(*G, ir::OpKind::FusedRegion), 0);
}

TEST(FormFusedRegions, TakesWhatFollowsARunTimeProduct) {
  // A MatMul of two run-time values is no linear layer: cpu-fuse-epilogues
  // leaves its Add and Relu, and a region takes them.
  auto G = ir::parseGraph(R"(graph "g" {
    input %x: f32[4,8]
    input %w: f32[8,8]
    input %c: f32[8]
    %m = MatMul(%x, %w)
    %a = Add(%m, %c)
    %r = Relu(%a)
    output %r
  })");
  EXPECT_TRUE(runPass(*G));
  EXPECT_EQ(countOp(*G, ir::OpKind::FusedRegion), 1);
  EXPECT_EQ(countOp(*G, ir::OpKind::MatMul), 1);
}

TEST(FormFusedRegions, RegionsBetweenConvolutionsKeepTheirLayout) {
  // PaddleOCR's detector: a convolution, a region of scalar affine and
  // HardSwish (and a residual Add of two convolutions' results), then
  // convolutions. Where oneDNN picked a layout other than the plain one for
  // the convolutions, the regions run in it: no reorder around them. A
  // region with a Softmax (over rows of the plain layout) keeps its
  // reorders.
  auto G = ir::parseGraph(R"(graph "g" {
    input %x: f32[N,32,12,12]
    init %zero: f32[] = [0]
    init %step: f32[] = [1]
    init %w.count: f32[] = [9216]
    init %w.shape: i64[4] = [32, 32, 3, 3]
    init %w.scale: f32[] = [0.05]
    init %s: f32[1] = [1.25]
    init %b: f32[1] = [-0.5]
    %w.r = Range(%zero, %w.count, %step)
    %w.s = Sin(%w.r)
    %w.m = Mul(%w.s, %w.scale)
    %w = Reshape(%w.m, %w.shape)
    %c1 = Conv(%x, %w) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}
    %h = HardSwish(%c1)
    %m = Mul(%h, %s)
    %a = Add(%m, %b)
    %c2 = Conv(%a, %w) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}
    %c3 = Conv(%a, %w) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}
    %r = Add(%c2, %c3)
    %e = Mul(%r, %s)
    %y = Conv(%e, %w) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}
    %c4 = Conv(%e, %w) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}
    %m4 = Mul(%c4, %s)
    %q = Softmax(%m4) {axis = -1}
    %y4 = Conv(%q, %w) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}
    output %y, %y4
  })");
  ASSERT_TRUE(G);
  auto Before = G->clone();
  ASSERT_TRUE(runPass(*G));
  ASSERT_EQ(countOp(*G, ir::OpKind::FusedRegion), 3);
  std::mt19937 Gen(11);
  std::vector<Tensor> In{randomTensor({2, 32, 12, 12}, Gen, true)};
  checkRegions(*Before, *G, In, "convolutions and regions");
#if NNGRAPH_HAVE_ONEDNN
  if (!backends::cpu::kernelJitAvailable())
    GTEST_SKIP() << "SKIPPED: built without the LLVM JIT, no region kernels";
  auto Exe = backends::getBackend("cpu").compile(*G);
  Exe->run(In);
  std::optional<std::string> Sched = backends::cpuSchedule(*Exe);
  ASSERT_TRUE(Sched);
  // The first convolution's result, in the layout oneDNN chose.
  size_t Conv = Sched->find("node %c1 = Conv");
  ASSERT_NE(Conv, std::string::npos) << *Sched;
  size_t Line = Sched->find('\n', Conv);
  bool Plain = Sched->substr(Conv, Line - Conv).ends_with("]");
  size_t InLayout = 0;
  for (size_t At = 0; (At = Sched->find("in its operands' layout", At)) !=
                      std::string::npos;
       ++At)
    ++InLayout;
  if (Plain) {
    EXPECT_EQ(InLayout, 0u) << *Sched;
    return;
  }
  EXPECT_EQ(InLayout, 2u) << *Sched;
  EXPECT_EQ(Sched->find("reorder of %a"), std::string::npos) << *Sched;
  EXPECT_EQ(Sched->find("reorder of %e"), std::string::npos) << *Sched;
#endif
}

/// A random graph over x[N,R,C] (N symbolic) with broadcast operands.
std::unique_ptr<ir::Graph> randomGraph(std::mt19937 &Gen, int Case) {
  auto G = std::make_unique<ir::Graph>();
  G->setName("random" + std::to_string(Case));
  int64_t R = 1 + Gen() % 5, C = 1 + Gen() % 37;
  ir::Value *X = G->addInput(
      "x", ir::TensorType(DType::F32, {ir::Dim::symbol("N"), ir::Dim(R),
                                       ir::Dim(C)}));
  std::vector<Shape> OperandShapes = {Shape{}, Shape{C}, Shape{R, 1},
                                      Shape{1, R, C}, Shape{R, C}};
  int Inputs = 0, Inits = 0;
  auto Operand = [&]() -> ir::Value * {
    Shape S = OperandShapes[Gen() % OperandShapes.size()];
    if (Gen() % 2) {
      std::vector<ir::Dim> D;
      for (int64_t E : S)
        D.push_back(ir::Dim(E));
      return G->addInput("in" + std::to_string(Inputs++),
                         ir::TensorType(DType::F32, D));
    }
    std::uniform_real_distribution<double> U(0.5, 1.5);
    Tensor T = Tensor::empty(S, DType::F32);
    for (int64_t I = 0; I < T.numel(); ++I)
      T.setFlat(I, U(Gen));
    return G->addInitializer("k" + std::to_string(Inits++), T);
  };
  const ir::OpKind Binary[] = {ir::OpKind::Add, ir::OpKind::Sub,
                               ir::OpKind::Mul, ir::OpKind::Div,
                               ir::OpKind::Max, ir::OpKind::Min};
  const ir::OpKind Unary[] = {ir::OpKind::Relu,    ir::OpKind::Tanh,
                              ir::OpKind::Sigmoid, ir::OpKind::Exp,
                              ir::OpKind::Abs,     ir::OpKind::Neg,
                              ir::OpKind::Erf,     ir::OpKind::HardSwish};
  ir::Value *V = X;
  int Steps = 2 + Gen() % 6;
  bool Reduced = false;
  std::vector<ir::Value *> Outs;
  for (int S = 0; S < Steps; ++S) {
    std::string Name = "v" + std::to_string(S);
    int Kind = Gen() % 10;
    if (Kind < 5) {
      ir::Value *B = Operand();
      V = G->addNode(Binary[Gen() % 6],
                     Gen() % 2 ? std::vector<ir::Value *>{V, B}
                               : std::vector<ir::Value *>{B, V},
                     {Name})
              ->output();
    } else if (Kind < 9 || Reduced) {
      ir::OpKind U = Unary[Gen() % 8];
      if (U == ir::OpKind::Exp) // Keep magnitudes moderate.
        V = G->addNode(ir::OpKind::Tanh, {V}, {Name + "t"})->output();
      V = G->addNode(U, {V}, {Name})->output();
    } else {
      Reduced = true;
      int Which = Gen() % 3;
      if (Which == 2) {
        Tensor Scale = Tensor::empty(Shape{C}, DType::F32);
        for (int64_t I = 0; I < C; ++I)
          Scale.setFlat(I, 0.5 + 0.01 * I);
        ir::AttrMap A;
        A.set("epsilon", ir::Attribute(1e-5f));
        V = G->addNode(ir::OpKind::LayerNormalization,
                       {V, G->addInitializer("scale", Scale)}, {Name},
                       std::move(A))
                ->output();
      } else {
        V = G->addNode(Which ? ir::OpKind::Softmax : ir::OpKind::LogSoftmax,
                       {V}, {Name})
                ->output();
      }
    }
    if (Gen() % 4 == 0)
      Outs.push_back(V); // An intermediate read outside the region.
  }
  if (Outs.empty() || Outs.back() != V)
    Outs.push_back(V);
  for (ir::Value *O : Outs)
    G->addOutput(O);
  ir::inferTypes(*G);
  return G;
}

TEST(FormFusedRegions, CompositeOpsComputeTheSharedFormulas) {
  // Relu, LeakyRelu, Clip, HardSigmoid, HardSwish, both GELUs, Reciprocal
  // and Sigmoid after an Add, each in a region: the kernel IR emits the
  // formulas of ElementwiseFormulas.h that the reference computes, so on
  // NaN, infinities and signed zeros the compares and selects give the
  // reference's bits (HardSigmoid of NaN is 1, as std::min says).
  auto G = ir::parseGraph(R"(graph "g" {
    input %x: f32[N,16]
    init %zero: f32[] = [0]
    init %lo: f32[] = [-1]
    init %hi: f32[] = [2]
    %a = Add(%x, %zero)
    %relu = Relu(%a)
    %leaky = LeakyRelu(%a) {alpha = 0.1}
    %clip = Clip(%a, %lo, %hi)
    %clipLo = Clip(%a, %lo)
    %hsig = HardSigmoid(%a) {alpha = 0.25, beta = 0.5}
    %hswish = HardSwish(%a)
    %gelu = nng.Gelu(%a)
    %geluTanh = nng.Gelu(%a) {approximate = "tanh"}
    %recip = Reciprocal(%a)
    %sig = Sigmoid(%a)
    output %relu, %leaky, %clip, %clipLo, %hsig, %hswish, %gelu, %geluTanh, %recip, %sig
  })");
  ASSERT_TRUE(G);
  auto Before = G->clone();
  ASSERT_TRUE(runPass(*G));
  ASSERT_GE(countOp(*G, ir::OpKind::FusedRegion), 1);
  std::mt19937 Gen(5);
  Tensor X = randomTensor({2, 16}, Gen, false);
  const float Special[] = {std::nanf(""), -std::nanf(""), INFINITY, -INFINITY,
                           0.f,           -0.f,           -1e-30f,  1e-30f,
                           -1.f,          2.f,            1e30f,    -1e30f,
                           -2.f,          6.f,            -3.f,     3.f};
  for (int64_t I = 0; I < 16; ++I)
    X.setFlat(I, Special[I]);
  checkRegions(*Before, *G, {X}, "composite ops");
#if NNGRAPH_HAVE_ONEDNN
  // The formulas of only compares and selects are exact: the same bits.
  std::vector<Tensor> Want = backends::runReference(*Before, {X});
  std::vector<Tensor> Got = backends::getBackend("cpu").compile(*G)->run({X});
  for (size_t O = 0; O < 5; ++O)
    for (int64_t I = 0; I < Want[O].numel(); ++I) {
      float W = static_cast<const float *>(Want[O].rawData())[I];
      float V = static_cast<const float *>(Got[O].rawData())[I];
      if (std::isnan(W)) {
        EXPECT_TRUE(std::isnan(V)) << "output " << O << " element " << I;
        continue;
      }
      EXPECT_EQ(std::signbit(V), std::signbit(W))
          << "output " << O << " element " << I;
      EXPECT_EQ(V, W) << "output " << O << " element " << I;
    }
#else
  GTEST_SKIP() << "SKIPPED: built without oneDNN, no cpu backend to compare "
                  "bit for bit (the reference checks ran)";
#endif
}

TEST(FormFusedRegions, RandomGraphsMatchUnfused) {
  std::mt19937 Gen(20261125);
  int Formed = 0;
  for (int Case = 0; Case < 60; ++Case) {
    std::unique_ptr<ir::Graph> G = randomGraph(Gen, Case);
    std::string Text = "case " + std::to_string(Case);
    auto Before = G->clone();
    bool Changed = runPass(*G);
    Formed += Changed;
    int64_t N = 1 + Gen() % 3;
    std::vector<Tensor> In;
    for (const ir::Value *V : G->inputs()) {
      Shape S;
      for (const ir::Dim &D : V->type().dims())
        S.push_back(D.isSymbolic() ? N : D.value());
      In.push_back(randomTensor(S, Gen, Case % 5 == 0));
    }
    SCOPED_TRACE(Text);
    checkRegions(*Before, *G, In, Text);
    if (HasFatalFailure())
      return;
  }
  EXPECT_GT(Formed, 30);
}

} // namespace
