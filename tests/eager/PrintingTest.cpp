//===- PrintingTest.cpp - Tensors print like torch's repr -----------------===//
//
// Tensor::toString and operator<< against the text torch 1.13 prints for
// the same tensors (captured from Debian's python3-torch): 4-decimal and
// integer-valued float formats, scientific notation, nan/inf, padding to a
// common width, nested brackets with blank lines between 3-D blocks, line
// wrapping at 80 columns, summarization of tensors over 1000 elements,
// empty tensors, and the dtype / requires_grad / grad_fn suffixes.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/TensorOps.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

using namespace nng;

namespace {

TEST(Printing, FloatFormats) {
  EXPECT_EQ(tensor({1, 2.5}, std::vector<int64_t>{1, 2},
                   TensorOptions().requires_grad())
                .toString(),
            "tensor([[1.0000, 2.5000]], requires_grad=True)");
  EXPECT_EQ(tensor({1, 2, -3}).toString(), "tensor([ 1.,  2., -3.])");
  EXPECT_EQ(scalar_tensor(3).toString(), "tensor(3.)");
  EXPECT_EQ(scalar_tensor(0.25).toString(), "tensor(0.2500)");
  EXPECT_EQ(tensor({0.5, 1.25}, DType::F64).toString(),
            "tensor([0.5000, 1.2500], dtype=torch.float64)");
  EXPECT_EQ(tensor({-1.5, 2, 3.25, -4}, std::vector<int64_t>{2, 2}).toString(),
            "tensor([[-1.5000,  2.0000],\n        [ 3.2500, -4.0000]])");
}

TEST(Printing, ScientificAndSpecialValues) {
  EXPECT_EQ(tensor({1e-5, 1.0, 123.0}).toString(),
            "tensor([1.0000e-05, 1.0000e+00, 1.2300e+02])");
  EXPECT_EQ(tensor({1e9, 1.0}).toString(), "tensor([1.0000e+09, 1.0000e+00])");
  EXPECT_EQ(tensor({1.0, NAN, INFINITY}).toString(), "tensor([1., nan, inf])");
  EXPECT_EQ(tensor({1.5, NAN, -INFINITY}).toString(),
            "tensor([1.5000,    nan,   -inf])");
  EXPECT_EQ(zeros({2, 3}).toString(),
            "tensor([[0., 0., 0.],\n        [0., 0., 0.]])");
}

TEST(Printing, IntegerAndBool) {
  EXPECT_EQ(tensor({1, 22, -3}, DType::I64).toString(),
            "tensor([ 1, 22, -3])");
  EXPECT_EQ(tensor({1, 2}, DType::I32).toString(),
            "tensor([1, 2], dtype=torch.int32)");
  EXPECT_EQ(tensor({1, 0}, DType::Bool).toString(), "tensor([ True, False])");
}

TEST(Printing, EmptyTensors) {
  EXPECT_EQ(zeros({0}).toString(), "tensor([])");
  EXPECT_EQ(zeros({0, 3}).toString(), "tensor([], size=(0, 3))");
  EXPECT_EQ(zeros({0}, DType::I64).toString(),
            "tensor([], dtype=torch.int64)");
}

TEST(Printing, NestedAndWrapped) {
  EXPECT_EQ(reshape(arange(12, DType::F32), {2, 3, 2}).toString(),
            "tensor([[[ 0.,  1.],\n"
            "         [ 2.,  3.],\n"
            "         [ 4.,  5.]],\n"
            "\n"
            "        [[ 6.,  7.],\n"
            "         [ 8.,  9.],\n"
            "         [10., 11.]]])");
  EXPECT_EQ(
      (arange(30, DType::F32) / 7.0).toString(),
      "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, "
      "1.1429,\n"
      "        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, "
      "2.4286,\n"
      "        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, "
      "3.7143,\n"
      "        3.8571, 4.0000, 4.1429])");
}

TEST(Printing, SummarizesLargeTensors) {
  EXPECT_EQ(arange(2000).toString(),
            "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
  std::string S = reshape(arange(2000, DType::F32), {40, 50}).toString();
  const std::string Head =
      "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 4.7000e+01, "
      "4.8000e+01,\n"
      "         4.9000e+01],\n"
      "        [5.0000e+01, 5.1000e+01, 5.2000e+01,  ..., 9.7000e+01, "
      "9.8000e+01,\n";
  EXPECT_EQ(S.substr(0, Head.size()), Head);
  EXPECT_NE(S.find("        ...,\n        [1.8500e+03"), std::string::npos)
      << S;
  const std::string Tail = "\n         1.9990e+03]])";
  EXPECT_EQ(S.substr(S.size() - Tail.size()), Tail);
}

TEST(Printing, GradFnSuffixAndStream) {
  Tensor X = tensor({1, 2}, TensorOptions().requires_grad());
  Tensor Y = X + X;
  EXPECT_EQ(Y.toString(), "tensor([2., 4.], grad_fn=<AddBackward>)");
  std::ostringstream OS;
  OS << Y.detach();
  EXPECT_EQ(OS.str(), "tensor([2., 4.])");
}

} // namespace
