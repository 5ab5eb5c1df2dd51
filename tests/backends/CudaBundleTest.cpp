//===- CudaBundleTest.cpp - The CUDA device bundle's file format ----------===//
//
// The bundle the CUDA device check carries to a GPU (tests/cuda-device/
// CudaBundle.h): what serializeBundle writes, parseBundle reads back
// exactly; the argument struct holds the sizes then the strides as 8-byte
// fields; damaged files (a wrong magic or version, truncation, trailing
// bytes, an argument struct of the wrong size, expected bytes that do not
// fit) are refused with a message. And the kernel list the bundle is made
// of has unique labels and one domain size per dim. No GPU or NVRTC needed.
//
//===----------------------------------------------------------------------===//

#include "cuda-device/CudaBundle.h"
#include "CudaTestKernels.h"

#include <set>

#include <gtest/gtest.h>

namespace nng {
namespace {

using namespace cudabundle;

Bundle sampleBundle() {
  BundleKernel K;
  K.Label = "softmax_f16";
  K.Entry = "nng_softmax";
  K.Arch = "sm_90";
  K.IR = "kernel @softmax(...)\n";
  K.Cubin = std::string(1, '\x7f') + "ELF" + std::string(3, '\0');
  K.Sizes = {3, 5};
  K.MaxGrid = 4;
  BundleBuffer In{"x", ElemType::F16, false, 0, 0, std::string(30, '\1'), ""};
  BundleBuffer Out{"y",
                   ElemType::F16,
                   true,
                   2e-3,
                   1e-4,
                   std::string(30, '\x5a'),
                   std::string(30, '\2')};
  K.Buffers = {In, Out};
  K.Args = packArgs(K.Sizes, {5, 1, 5, 1});
  BundleKernel I;
  I.Label = "i32_each_op";
  I.Entry = "nng_i32_each_op";
  I.Arch = "sm_90";
  I.Cubin = "cubin";
  I.Sizes = {7};
  I.Buffers = {{"x", ElemType::I32, false, 0, 0, std::string(28, '\3'), ""},
               {"neg", ElemType::I32, true, 0, 0, std::string(28, '\x5a'),
                std::string(28, '\4')}};
  I.Args = packArgs(I.Sizes, {1, 1});
  return Bundle{{K, I}};
}

std::string parseError(const std::string &Bytes) {
  try {
    parseBundle(Bytes);
  } catch (const std::runtime_error &E) {
    return E.what();
  }
  return "(no error)";
}

TEST(CudaBundle, RoundTrips) {
  Bundle B = sampleBundle();
  std::string Bytes = serializeBundle(B);
  EXPECT_EQ(Bytes.substr(0, 8), "NNGCUDAB");
  Bundle Back = parseBundle(Bytes);
  EXPECT_TRUE(Back == B);
  EXPECT_EQ(serializeBundle(Back), Bytes);
  EXPECT_EQ(Back.Kernels[0].rows(), 3);
  EXPECT_EQ(Back.Kernels[1].rows(), 1);
  EXPECT_TRUE(parseBundle(serializeBundle(Bundle{})) == Bundle{});
}

TEST(CudaBundle, ArgsAreSizesThenStridesAsInt64) {
  std::string A = packArgs({2, 3}, {3, 1, 0, 1});
  ASSERT_EQ(A.size(), 48u);
  int64_t V[6];
  std::memcpy(V, A.data(), 48);
  EXPECT_EQ(V[0], 2);
  EXPECT_EQ(V[1], 3);
  EXPECT_EQ(V[2], 3);
  EXPECT_EQ(V[4], 0);
  EXPECT_EQ(V[5], 1);
}

TEST(CudaBundle, DamagedFilesAreRefused) {
  std::string Bytes = serializeBundle(sampleBundle());
  EXPECT_NE(parseError("NOTABUNDLE").find("magic"), std::string::npos);
  std::string V2 = Bytes;
  V2[8] = 2;
  EXPECT_NE(parseError(V2).find("version 2"), std::string::npos);
  for (size_t Cut : {size_t(12), size_t(40), Bytes.size() - 1})
    EXPECT_NE(parseError(Bytes.substr(0, Cut)).find("truncated"),
              std::string::npos)
        << Cut;
  EXPECT_NE(parseError(Bytes + "x").find("after its last kernel"),
            std::string::npos);
  Bundle B = sampleBundle();
  B.Kernels[0].Args.resize(40);
  EXPECT_NE(parseError(serializeBundle(B)).find("argument struct"),
            std::string::npos);
  B = sampleBundle();
  B.Kernels[0].Buffers[1].Expected.resize(28);
  EXPECT_NE(parseError(serializeBundle(B)).find("buffer y"), std::string::npos);
}

TEST(CudaBundle, TestKernelsHaveUniqueLabelsAndSizes) {
  std::set<std::string> Labels;
  for (const kerneltest::CudaTestKernel &C : kerneltest::cudaTestKernels()) {
    EXPECT_TRUE(Labels.insert(C.Label).second) << C.Label;
    EXPECT_EQ(C.Sizes.size(), static_cast<size_t>(C.K.Rank)) << C.Label;
    for (const kerneltest::InputRange &R : C.Ranges)
      EXPECT_GE(C.K.bufferNamed(R.Buffer), 0) << C.Label << " " << R.Buffer;
  }
}

} // namespace
} // namespace nng
