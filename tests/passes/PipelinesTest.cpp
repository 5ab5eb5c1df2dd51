//===- PipelinesTest.cpp - The -O0/-O1/-O2 presets ------------------------===//
//
// The presets list the documented passes, keep only registered ones, parse
// as pipelines, and reject unknown levels.
//
//===----------------------------------------------------------------------===//

#include "nngraph/passes/Pipelines.h"
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
  const auto &O2 = presetPassNames(2);
  ASSERT_EQ(O2.size(), 18u);
  EXPECT_EQ(O2.front(), "shape-infer");
  // Q/DQ become int8 ops before canonicalize could fold a weight's DQ.
  EXPECT_EQ(O2[1], "fuse-qdq");
  EXPECT_EQ(O2.back(), "form-fused-regions");
  // Targets made constant first: chains of Reshapes then collapse.
  auto At = [&](const char *Name) {
    return std::find(O2.begin(), O2.end(), Name) - O2.begin();
  };
  EXPECT_LT(At("constant-reshape-targets"), At("fuse-reshapes"));
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
