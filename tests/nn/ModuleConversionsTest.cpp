//===- ModuleConversionsTest.cpp - to(tensor), half() ..., InferenceMode --===//
//
// PyTorch's module.to(other_tensor), half(), bfloat16(), float() and
// double() (float_() and double_() in C++), and torch.inference_mode() as
// the InferenceMode guard: no gradient recorded inside, the previous modes
// restored after, nesting included.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Linear.h"
#include "nngraph/frontend/nn/Norm.h"

#include <gtest/gtest.h>

using namespace nng;

TEST(ModuleConversions, DtypeShorthandsAndToTensor) {
  nn::Linear Lin(3, 2);
  nn::BatchNorm1d Bn(3);
  Lin.double_();
  EXPECT_EQ(Lin.weight.dtype(), DType::F64);
  EXPECT_EQ(Lin.bias.dtype(), DType::F64);
  Lin.half();
  EXPECT_EQ(Lin.weight.dtype(), DType::F16);
  Lin.bfloat16();
  EXPECT_EQ(Lin.weight.dtype(), DType::BF16);
  Lin.float_();
  EXPECT_EQ(Lin.weight.dtype(), DType::F32);
  // to(tensor): the tensor's dtype; integral buffers keep theirs.
  Bn.to(zeros({1}, TensorOptions(DType::F64)));
  EXPECT_EQ(Bn.get_buffer("running_mean").dtype(), DType::F64);
  EXPECT_EQ(Bn.get_buffer("num_batches_tracked").dtype(), DType::I64);
  EXPECT_THROW(Lin.to(Tensor()), Error);
  // The module still runs in its new dtype.
  Lin.double_();
  EXPECT_EQ(Lin(randn({4, 3}).to(DType::F64)).dtype(), DType::F64);
}

TEST(ModuleConversions, InferenceModeRecordsNoGradientAndRestores) {
  Tensor W = randn({3}, TensorOptions().requires_grad());
  EXPECT_FALSE(autograd::isInferenceModeEnabled());
  {
    InferenceMode Guard;
    EXPECT_TRUE(autograd::isInferenceModeEnabled());
    EXPECT_FALSE(autograd::isGradEnabled());
    Tensor Y = W * 2.0;
    EXPECT_FALSE(Y.requires_grad());
    {
      InferenceMode Inner;
      EXPECT_TRUE(autograd::isInferenceModeEnabled());
    }
    EXPECT_TRUE(autograd::isInferenceModeEnabled());
  }
  EXPECT_FALSE(autograd::isInferenceModeEnabled());
  EXPECT_TRUE(autograd::isGradEnabled());
  EXPECT_TRUE((W * 2.0).requires_grad());
  {
    NoGradGuard NoGrad;
    {
      InferenceMode Guard;
    }
    EXPECT_FALSE(autograd::isGradEnabled()); // The outer no_grad stays.
  }
}

TEST(ModuleConversions, DefaultDtypeBuildsLayersInIt) {
  EXPECT_EQ(get_default_dtype(), DType::F32);
  {
    DefaultDTypeGuard F64(DType::F64); // torch.set_default_dtype(float64)
    nn::Linear Lin(3, 2);
    EXPECT_EQ(Lin.weight.dtype(), DType::F64);
    EXPECT_EQ(randn({2}).dtype(), DType::F64);
    EXPECT_EQ(Lin(randn({4, 3})).dtype(), DType::F64);
    nn::BatchNorm1d Bn(3);
    EXPECT_EQ(Bn.get_buffer("running_var").dtype(), DType::F64);
    EXPECT_EQ(Bn.get_buffer("num_batches_tracked").dtype(), DType::I64);
  }
  EXPECT_EQ(get_default_dtype(), DType::F32);
  EXPECT_EQ(nn::Linear(3, 2).weight.dtype(), DType::F32);
  EXPECT_THROW(set_default_dtype(DType::I32), Error);
  EXPECT_EQ(get_default_dtype(), DType::F32);
}
