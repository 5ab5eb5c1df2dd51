//===- CpuDepthwiseFusionTest.cpp - Pointwise + depthwise in one step -----===//
//
// MobileNet's inverted residual on the cpu backend: a 1x1 expansion with
// its activation, then a 3x3 depthwise convolution (stride 1 or 2) with its
// activation, then a 1x1 projection. Where oneDNN has a vectorized kernel
// for the pair (asked of oneDNN: it depends on the ISA and the caches), the
// depthwise convolution is a post-op of the expansion; results must equal the reference's either way,
// NaN in the input included.
//
//===----------------------------------------------------------------------===//

#include "CpuTestUtils.h"

#if NNGRAPH_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#endif

#include <limits>

namespace nng {
namespace {

using namespace cputest;

#if NNGRAPH_HAVE_ONEDNN

/// x[N,16,H,W] -> conv 3x3 -> Act -> conv 1x1 (to 96) -> Act -> depthwise
/// 3x3 (Stride, padding 1) -> Act -> conv 1x1 (to 24). Act is Relu or a
/// ReLU6 Clip.
std::unique_ptr<ir::Graph> invertedResidual(ir::OpKind Act, int64_t Stride,
                                            int64_t H) {
  auto G = std::make_unique<ir::Graph>();
  G->setName("inverted_residual");
  ir::Value *X = G->addInput(
      "x", ir::TensorType(DType::F32, {ir::Dim::symbol("N"), ir::Dim(16),
                                       ir::Dim(H), ir::Dim(H)}));
  unsigned Seed = 1;
  auto W = [&](const std::string &N, Shape S) {
    return G->addInitializer(N, rnd(S, Seed++, -0.4, 0.4));
  };
  ir::Value *Lo = G->addInitializer("lo", Tensor::scalar(0.0f));
  ir::Value *Hi = G->addInitializer("hi", Tensor::scalar(6.0f));
  auto Activate = [&](ir::Value *V, const std::string &Out) {
    if (Act == ir::OpKind::Clip)
      return add(*G, ir::OpKind::Clip, {V, Lo, Hi}, Out);
    return add(*G, Act, {V}, Out);
  };
  ir::AttrMap Pad;
  Pad.set("pads", Ints{1, 1, 1, 1});
  ir::Value *Y0 = add(*G, ir::OpKind::Conv,
                      {X, W("w0", {16, 16, 3, 3}), W("b0", {16})}, "y0", Pad);
  ir::Value *A0 = Activate(Y0, "a0");
  ir::Value *Y1 = add(*G, ir::OpKind::Conv,
                      {A0, W("w1", {96, 16, 1, 1}), W("b1", {96})}, "y1");
  ir::Value *A1 = Activate(Y1, "a1");
  ir::AttrMap Dw = Pad;
  Dw.set("group", int64_t(96));
  Dw.set("strides", Ints{Stride, Stride});
  ir::Value *Y2 = add(*G, ir::OpKind::Conv,
                      {A1, W("w2", {96, 1, 3, 3}), W("b2", {96})}, "y2", Dw);
  ir::Value *A2 = Activate(Y2, "a2");
  ir::Value *Y3 = add(*G, ir::OpKind::Conv,
                      {A2, W("w3", {24, 96, 1, 1}), W("b3", {24})}, "y3");
  G->addOutput(Y3);
  ir::inferTypes(*G);
  return G;
}

/// True when oneDNN has a vectorized kernel for the 1x1 expansion (16 -> 96
/// channels, H x H, batch 2) with the 3x3 depthwise convolution as its
/// post-op, in any layout the backend tries: whether it offers one depends
/// on the ISA and, through its blocking heuristics, on the cache sizes
/// (measured: Zen 4 fuses 56x56, a 2 MiB-L2 Xeon only 112x112).
bool oneDnnFusesPair(int64_t H, int64_t Stride) {
  using dnnl::memory;
  using Tag = memory::format_tag;
  dnnl::engine E(dnnl::engine::kind::cpu, 0);
  for (Tag T : {Tag::any, Tag::nChw16c, Tag::nChw8c}) {
    dnnl::convolution_forward::desc D(
        dnnl::prop_kind::forward_inference,
        dnnl::algorithm::convolution_direct,
        memory::desc({2, 16, H, H}, memory::data_type::f32, T),
        memory::desc({96, 16, 1, 1}, memory::data_type::f32, Tag::any),
        memory::desc({96}, memory::data_type::f32, Tag::a),
        memory::desc({2, 96, H, H}, memory::data_type::f32, Tag::any),
        {1, 1}, {0, 0}, {0, 0}, {0, 0});
    dnnl::post_ops Ops;
    Ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_elu, 0.0f, 0.0f);
    Ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, 1.0f, 0.0f);
    Ops.append_dw(memory::data_type::f32, memory::data_type::f32,
                  memory::data_type::f32, 3, Stride, 1, 0, {1.0f});
    dnnl::primitive_attr A;
    A.set_post_ops(Ops);
    try {
      std::string Impl =
          dnnl::convolution_forward::primitive_desc(D, A, E).impl_info_str();
      if (Impl.rfind("ref", 0) != 0 &&
          (Impl.find("jit") != std::string::npos ||
           Impl.find("brg") != std::string::npos))
        return true;
    } catch (const dnnl::error &) {
    }
  }
  return false;
}

TEST(CpuDepthwiseFusion, MatchesReferenceAndFuses) {
  for (ir::OpKind Act : {ir::OpKind::Relu, ir::OpKind::Clip})
    for (int64_t Stride : {1, 2})
      for (int64_t H : {14, 15, 28, 56, 112}) {
        SCOPED_TRACE(std::string(ir::getOpSchema(Act).Name) + " stride " +
                     std::to_string(Stride) + " size " + std::to_string(H));
        std::unique_ptr<ir::Graph> G = invertedResidual(Act, Stride, H);
        auto Cpu = backends::getBackend("cpu").compile(*G);
        std::vector<Tensor> In{rnd({2, 16, H, H}, 20 + H, -3, 3)};
        Tensor Want = backends::runReference(*G, In).at(0);
        EXPECT_TRUE(closeTo(Cpu->run(In).at(0), Want));
        auto S = backends::cpuExecutableStats(*Cpu);
        ASSERT_TRUE(S && S->Compiled);
        EXPECT_TRUE(S->Fallbacks.empty());
        // The activations are fused (the first ReLU6 as the guarded loop
        // after its convolution). Where oneDNN has a kernel for the pair
        // (jit 1x1 on AVX2 and AVX-512, for the larger images), the
        // depthwise convolution joins the expansion's step.
        if (oneDnnFusesPair(H, Stride))
          EXPECT_EQ(S->FusedNodes, 4);
        else
          EXPECT_EQ(S->FusedNodes, 3);
      }
}

TEST(CpuDepthwiseFusion, NaNInTheInputKeepsOnnxSemantics) {
  for (ir::OpKind Act : {ir::OpKind::Relu, ir::OpKind::Clip}) {
    SCOPED_TRACE(ir::getOpSchema(Act).Name);
    std::unique_ptr<ir::Graph> G = invertedResidual(Act, 1, 56); // Fused.
    Tensor X = rnd({1, 16, 56, 56}, 30, -3, 3);
    X.data<float>()[400] = std::numeric_limits<float>::quiet_NaN();
    std::vector<Tensor> In{X};
    Tensor Want = backends::runReference(*G, In).at(0);
    auto Cpu = backends::getBackend("cpu").compile(*G);
    Tensor Got = Cpu->run(In).at(0);
    int64_t NaNs = 0;
    for (int64_t I = 0; I < Want.numel(); ++I) {
      double Gv = Got.getFlat(I), Wv = Want.getFlat(I);
      NaNs += std::isnan(Wv);
      ASSERT_EQ(std::isnan(Gv), std::isnan(Wv)) << "element " << I;
      if (!std::isnan(Wv))
        ASSERT_NEAR(Gv, Wv, 1e-4 * std::max(1.0, std::fabs(Wv)));
    }
    EXPECT_GT(NaNs, 0);
  }
}

#else

TEST(CpuDepthwiseFusion, NeedsOneDnn) { REQUIRE_ONEDNN(); }

#endif

} // namespace
} // namespace nng
