//===- CpuInt8TestUtils.h - Helpers of the cpu int8 tests ------*- C++ -*-===//
//
// Random int8 tensors, byte-exact comparison against the reference backend
// and random QLinearConv nodes, shared by CpuInt8Test.cpp and
// CpuInt8ResidualTest.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "CpuTestUtils.h"

#include <cstring>
#include <sstream>

#if NNGRAPH_HAVE_ONEDNN

namespace nng::int8test {

using namespace cputest;

/// Uniform integers in [Lo, Hi] of dtype T.
inline Tensor ints(Shape S, DType T, int Lo, int Hi, std::mt19937 &Gen) {
  std::uniform_int_distribution<int> U(Lo, Hi);
  Tensor R = Tensor::empty(S, T);
  for (int64_t I = 0; I < R.numel(); ++I)
    R.setFlat(I, U(Gen));
  return R;
}

/// The value range of the int8 dtype T.
inline std::pair<int, int> rangeOf(DType T) {
  return T == DType::U8 ? std::pair{0, 255} : std::pair{-128, 127};
}

/// True when A and B have the same dtype, shape and bytes.
inline ::testing::AssertionResult sameBytes(const Tensor &A, const Tensor &B) {
  if (A.dtype() != B.dtype() || A.shape() != B.shape())
    return ::testing::AssertionFailure()
           << A.toString() << " vs " << B.toString();
  Tensor CA = A.contiguous(), CB = B.contiguous();
  const auto *PA = static_cast<const unsigned char *>(CA.rawData());
  const auto *PB = static_cast<const unsigned char *>(CB.rawData());
  size_t Elem = dtypeSize(A.dtype());
  for (int64_t I = 0; I < A.numel(); ++I)
    if (std::memcmp(PA + I * Elem, PB + I * Elem, Elem) != 0)
      return ::testing::AssertionFailure()
             << "element " << I << ": cpu " << A.getFlat(I) << ", reference "
             << B.getFlat(I);
  return ::testing::AssertionSuccess();
}

/// Runs G on the compiled cpu backend and the reference; expects the same
/// bytes and returns the cpu executable's stats.
inline backends::CpuExecutableStats expectExact(const ir::Graph &G,
                                                const std::vector<Tensor> &In) {
  std::vector<Tensor> Want = backends::runReference(G, In);
  auto Cpu = backends::getBackend("cpu").compile(G);
  std::vector<Tensor> Got = Cpu->run(In);
  EXPECT_EQ(Got.size(), Want.size());
  for (size_t I = 0; I < Want.size() && I < Got.size(); ++I)
    EXPECT_TRUE(sameBytes(Got[I], Want[I])) << "output " << I;
  std::vector<Tensor> Again = Cpu->run(In);
  for (size_t I = 0; I < Got.size() && I < Again.size(); ++I)
    EXPECT_TRUE(sameBytes(Again[I], Got[I])) << "second run, output " << I;
  return *backends::cpuExecutableStats(*Cpu);
}

inline std::string fallbacksOf(const backends::CpuExecutableStats &S) {
  std::string R;
  for (const std::string &F : S.Fallbacks)
    R += F + "; ";
  return R;
}

/// A random QLinearConv configuration.
struct ConvCase {
  int64_t N = 1, C = 8, H = 9, W = 9, M = 16, Group = 1, K = 3;
  int64_t Stride = 1, Pad = 1, Dil = 1;
  DType X = DType::U8, Y = DType::U8;
  bool PerChannel = true, Bias = true;
  std::string describe() const {
    std::ostringstream OS;
    OS << "N" << N << " C" << C << " " << H << "x" << W << " M" << M << " g"
       << Group << " k" << K << " s" << Stride << " p" << Pad << " d" << Dil
       << " " << dtypeName(X) << "->" << dtypeName(Y)
       << (PerChannel ? " per-channel" : " per-tensor")
       << (Bias ? " bias" : "");
    return OS.str();
  }
};

/// x (input, or given) -> QLinearConv with random parameters; returns the
/// output value. XScale/XZp describe x's quantization.
inline ir::Value *addQConv(ir::Graph &G, ir::Value *X, const ConvCase &CC,
                           float XScale, const Tensor &XZp, std::mt19937 &Gen,
                           const std::string &Name, float YScale, Tensor YZp) {
  int64_t CPerG = CC.C / CC.Group;
  ir::Value *W = G.addInitializer(
      Name + ".w", ints({CC.M, CPerG, CC.K, CC.K}, DType::I8, -128, 127, Gen));
  Tensor WS =
      CC.PerChannel ? rnd({CC.M}, Gen(), 0.002, 0.02) : Tensor::scalar(0.01f);
  std::vector<ir::Value *> In = {
      X,
      G.addInitializer(Name + ".xs", Tensor::scalar(XScale)),
      G.addInitializer(Name + ".xz", XZp),
      W,
      G.addInitializer(Name + ".ws", WS),
      G.addInitializer(Name + ".wz", CC.PerChannel
                                         ? i8(std::vector<int8_t>(CC.M, 0))
                                         : i8({0}, {})),
      G.addInitializer(Name + ".ys", Tensor::scalar(YScale)),
      G.addInitializer(Name + ".yz", YZp)};
  if (CC.Bias)
    In.push_back(G.addInitializer(
        Name + ".b", ints({CC.M}, DType::I32, -20000, 20000, Gen)));
  ir::AttrMap A;
  A.set("group", CC.Group);
  A.set("strides", Ints{CC.Stride, CC.Stride});
  A.set("pads", Ints{CC.Pad, CC.Pad, CC.Pad, CC.Pad});
  A.set("dilations", Ints{CC.Dil, CC.Dil});
  return add(G, ir::OpKind::QLinearConv, In, Name, A);
}

/// A zero point of dtype T (one value) drawn from its range's middle.
inline Tensor zeroPoint(DType T, std::mt19937 &Gen) {
  return T == DType::U8 ? ints(Shape{}, T, 1, 254, Gen)
                        : ints(Shape{}, T, -100, 100, Gen);
}

} // namespace nng::int8test

#endif
