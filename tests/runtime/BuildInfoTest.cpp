//===- BuildInfoTest.cpp - Version and build configuration ---------------===//

#include "nngraph/runtime/BuildConfig.h"
#include "nngraph/runtime/BuildInfo.h"

#include <gtest/gtest.h>

TEST(BuildInfo, DescribesTheConfiguration) {
  std::string D = nng::buildDescription();
  EXPECT_EQ(D.rfind(std::string("nngraph ") + nng::nngraphVersion(), 0), 0u);
  EXPECT_NE(D.find(NNGRAPH_HAVE_ONEDNN ? "oneDNN: yes" : "oneDNN: no"),
            std::string::npos);
  EXPECT_NE(D.find(NNGRAPH_HAVE_CUDA ? "CUDA: yes" : "CUDA: no"),
            std::string::npos);
}
