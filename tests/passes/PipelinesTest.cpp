//===- PipelinesTest.cpp - The -O0/-O1/-O2 presets ------------------------===//
//
// The presets list the documented passes, keep only registered ones, parse
// as pipelines, and reject unknown levels; a backend's own passes end its
// pipeline; every spelling of a level resolves to the same pipeline.
//
//===----------------------------------------------------------------------===//

#include "nngraph/passes/Pipelines.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/runtime/BuildConfig.h"
#if NNGRAPH_HAVE_ONEDNN
#include "nngraph/backends/cpu/KernelJit.h"
#endif
#include "nngraph/passes/PassManager.h"
#include "nngraph/passes/PassRegistry.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace nng;
using namespace nng::passes;

TEST(PipelinesTest, PresetContents) {
  EXPECT_TRUE(presetPassNames(0).empty());
  EXPECT_EQ(presetPipeline(0), "");
  EXPECT_EQ(presetPipeline(1), "canonicalize,cse,dce");
  // The reference backend adds form-fused-regions in every build.
  const auto O2 = presetPassNames(2, "reference");
  ASSERT_EQ(O2.size(), 19u);
  EXPECT_EQ(O2.front(), "shape-infer");
  // Q/DQ become int8 ops before canonicalize could fold a weight's DQ.
  EXPECT_EQ(O2[1], "fuse-qdq");
  EXPECT_EQ(O2.back(), "form-fused-regions");
  // Targets made constant first: chains of Reshapes then collapse.
  auto At = [&](const char *Name) {
    return std::find(O2.begin(), O2.end(), Name) - O2.begin();
  };
  EXPECT_LT(At("constant-reshape-targets"), At("fuse-reshapes"));
  // HardSwish recovered after the convolution's affine folded into it.
  EXPECT_LT(At("fold-conv-mul-add"), At("recover-hardswish"));
}

TEST(PipelinesTest, PresetsUseOnlyRegisteredPasses) {
  for (int L = 0; L <= MaxOptLevel; ++L) {
    PassManager PM;
    PM.addPipeline(presetPipeline(L));
    EXPECT_EQ(PM.size() + presetSkippedPasses(L).size(),
              presetPassNames(L).size());
    for (const std::string &Name : presetSkippedPasses(L))
      EXPECT_EQ(lookupPass(Name), nullptr);
  }
  EXPECT_NE(describePresets().find("-O1  canonicalize,cse,dce"),
            std::string::npos);
}

TEST(PipelinesTest, UnknownLevelIsRejected) {
  EXPECT_THROW(presetPassNames(3), Error);
  EXPECT_THROW(presetPipeline(-1), Error);
}

TEST(PipelinesTest, BackendsEndThePresetWithTheirOwnPasses) {
  const std::vector<std::string> &Generic = genericPresetPassNames(2);
  EXPECT_EQ(std::count(Generic.begin(), Generic.end(), "form-fused-regions"),
            0);
  for (const std::string &B : backends::backendNames()) {
    std::vector<std::string> Names = presetPassNames(2, B);
    ASSERT_GE(Names.size(), Generic.size()) << B;
    EXPECT_TRUE(std::equal(Generic.begin(), Generic.end(), Names.begin())) << B;
    std::vector<std::string> Own = backends::getBackend(B).pipelinePasses(2);
    EXPECT_TRUE(std::equal(Own.begin(), Own.end(),
                           Names.begin() + Generic.size(), Names.end()))
        << B;
    EXPECT_EQ(presetPassNames(1, B), genericPresetPassNames(1)) << B;
  }
#if NNGRAPH_HAVE_ONEDNN
  // Without the LLVM JIT the cpu backend forms no fused regions.
  std::vector<std::string> Cpu = presetPassNames(2, "cpu");
  EXPECT_EQ(Cpu.back() == "form-fused-regions",
            backends::cpu::kernelJitAvailable());
  EXPECT_EQ(defaultPipelineBackend(), "cpu");
#else
  EXPECT_EQ(defaultPipelineBackend(), "reference");
#endif
  EXPECT_EQ(presetPipeline(2), presetPipeline(2, defaultPipelineBackend()));
  EXPECT_THROW(presetPassNames(2, "no-such-backend"), Error);
}

TEST(PipelinesTest, EverySpellingOfALevelResolvesToItsPreset) {
  for (const char *Spec : {"2", "O2", "-O2"}) {
    EXPECT_EQ(parseOptLevel(Spec), 2) << Spec;
    EXPECT_EQ(resolvePipeline(Spec, "reference"),
              presetPipeline(2, "reference"))
        << Spec;
    EXPECT_EQ(resolvePipeline(Spec), presetPipeline(2)) << Spec;
  }
  EXPECT_EQ(parseOptLevel("O0"), 0);
  EXPECT_EQ(resolvePipeline("O0"), "");
  // Anything else is a pass list, left to the PassManager to check.
  for (const char *Spec : {"", "-O", "O", "dce", "canonicalize,dce", "O2x"})
    EXPECT_EQ(parseOptLevel(Spec), std::nullopt) << Spec;
  EXPECT_EQ(resolvePipeline("canonicalize,dce"), "canonicalize,dce");
  EXPECT_THROW(parseOptLevel("O7"), Error);
  EXPECT_THROW(resolvePipeline("-O3"), Error);
}
