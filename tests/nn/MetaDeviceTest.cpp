//===- MetaDeviceTest.cpp - The meta device, to_empty and skip_init -------===//
//
// Tensors on the meta device have shapes and dtypes but no memory: models
// built there (DefaultDeviceGuard, a layer's device= argument) allocate and
// draw nothing, run forward as shape computations, refuse data access with
// a message that says what to do, and become real through to_empty or a
// load_state_dict with assign. skip_init builds a module uninitialized.
//
//===----------------------------------------------------------------------===//

#include "ModuleTestUtils.h"
#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Conv.h"
#include "nngraph/frontend/nn/Linear.h"
#include "nngraph/frontend/nn/Norm.h"
#include "nngraph/frontend/nn/RNN.h"
#include "nngraph/frontend/nn/Transformer.h"
#include "nngraph/frontend/nn/utils/SkipInit.h"
#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/frontend/weights/Load.h"
#include "nngraph/frontend/zoo/Zoo.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <unistd.h>

using namespace nng;
using nng::nn::testing::errorText;

TEST(MetaDevice, FactoriesMakeShapesWithoutData) {
  Tensor M = zeros({2, 3}, Device::meta());
  EXPECT_TRUE(M.is_meta());
  EXPECT_EQ(M.device().toString(), "meta");
  EXPECT_EQ(M.shape(), Shape({2, 3}));
  EXPECT_EQ(M.toString(), "tensor(..., device='meta', size=(2, 3))");
  EXPECT_EQ(empty({4}, TensorOptions(DType::F64).device(Device::meta()))
                .toString(),
            "tensor(..., device='meta', size=(4,), dtype=torch.float64)");
  EXPECT_EQ(Device::parse("meta"), Device::meta());
  // Data access says what the tensor is and what to do.
  std::string E =
      errorText([] { (void)zeros({1, 1}, Device::meta()).item<float>(); });
  EXPECT_NE(E.find("f32[1, 1] on the meta device has a shape but no data"),
            std::string::npos)
      << E;
  EXPECT_NE(E.find("to_empty"), std::string::npos) << E;
  // A 64 GiB tensor costs nothing.
  Tensor Big = empty({1 << 17, 1 << 17}, Device::meta());
  EXPECT_EQ(Big.numel(), int64_t(1) << 34);
}

TEST(MetaDevice, RandomCreatorsDrawNothing) {
  Tensor Before = get_rng_state();
  Tensor R = randn({1000}, Device::meta());
  Tensor U = rand({10, 10}, Device::meta());
  Tensor P = randperm(100, TensorOptions(DType::I64).device(Device::meta()));
  EXPECT_TRUE(R.is_meta() && U.is_meta() && P.is_meta());
  EXPECT_TRUE(equal(get_rng_state(), Before));
}

TEST(MetaDevice, OpsComputeShapesOnly) {
  Tensor X = randn({2, 5}, Device::meta());
  Tensor W = randn({3, 5}, Device::meta());
  Tensor Y = (matmul(X, W.t()) + 1.0).relu();
  EXPECT_TRUE(Y.is_meta());
  EXPECT_EQ(Y.shape(), Shape({2, 3}));
  // Shape operands on the cpu take part as constants.
  Tensor R = X.reshape({5, 2}).sum({0});
  EXPECT_TRUE(R.is_meta());
  EXPECT_EQ(R.shape(), Shape({2}));
  // A meta operand with a cpu one: the result is meta.
  EXPECT_TRUE((X * ones({2, 5})).is_meta());
  // Autograd records through meta ops (shapes of the gradients).
  Tensor A = randn({4, 3}, TensorOptions().device(Device::meta()).requires_grad());
  Tensor L = (A * A).sum();
  L.backward(ones({}, Device::meta()));
  ASSERT_TRUE(A.grad().defined());
  EXPECT_TRUE(A.grad().is_meta());
  EXPECT_EQ(A.grad().shape(), Shape({4, 3}));
  // In-place writes into a meta tensor only check shapes.
  Tensor B = zeros({3}, Device::meta());
  B.fill_(2.0);
  B.copy_(ones({3}));
  EXPECT_TRUE(B.is_meta());
  EXPECT_THROW(B.copy_(ones({4})), Error);
}

TEST(MetaDevice, ValueDependentShapesAreAnError) {
  Tensor X = randn({6}, Device::meta());
  std::string E =
      errorText([&] { dispatch::call1(ir::OpKind::NonZero, {X}); });
  EXPECT_NE(E.find("NonZero on meta tensors"), std::string::npos) << E;
  EXPECT_NE(E.find("depends on values"), std::string::npos) << E;
}

TEST(MetaDevice, TensorToMeta) {
  Tensor C = randn({2, 2}, TensorOptions().requires_grad());
  Tensor M = C.to(Device::meta());
  EXPECT_TRUE(M.is_meta());
  EXPECT_TRUE(M.requires_grad());
  EXPECT_EQ(M.shape(), C.shape());
  std::string E = errorText([&] { (void)M.to(Device::cpu()); });
  EXPECT_NE(E.find("a meta tensor has no data to copy"), std::string::npos)
      << E;
  EXPECT_TRUE(equal(C.cpu(), C));
}

TEST(MetaDevice, DefaultDeviceGuardBuildsWithoutMemory) {
  EXPECT_EQ(get_default_device(), Device::cpu());
  std::shared_ptr<nn::Linear> Big;
  auto Start = std::chrono::steady_clock::now();
  {
    DefaultDeviceGuard Meta(Device::meta());
    EXPECT_EQ(get_default_device(), Device::meta());
    // 4 Gi parameters (16 GiB as f32): only possible without memory.
    Big = nn::make<nn::Linear>(1 << 16, 1 << 16);
  }
  double Secs = std::chrono::duration<double>(
                    std::chrono::steady_clock::now() - Start)
                    .count();
  EXPECT_LT(Secs, 5.0); // Nothing was allocated or drawn.
  EXPECT_EQ(get_default_device(), Device::cpu());
  EXPECT_TRUE(Big->weight.is_meta());
  EXPECT_TRUE(Big->weight.requires_grad());
  EXPECT_EQ(Big->num_parameters(), (int64_t(1) << 32) + (1 << 16));
  EXPECT_EQ(Big->to_string(),
            "Linear(in_features=65536, out_features=65536, bias=True)");
  EXPECT_EQ(Big->weight.toString(),
            "tensor(..., device='meta', size=(65536, 65536), "
            "requires_grad=True)");
  // Forward on meta input: shapes only.
  Tensor Y = (*Big)(empty({8, 1 << 16}, Device::meta()));
  EXPECT_TRUE(Y.is_meta());
  EXPECT_EQ(Y.shape(), Shape({8, 1 << 16}));
  EXPECT_THROW(set_default_device(Device::cuda()), Error);
}

TEST(MetaDevice, ZooModelRunsAsShapes) {
  std::shared_ptr<nn::ModuleBase> Net;
  {
    DefaultDeviceGuard Meta(Device::meta());
    Net = zoo::create("resnet18");
  }
  for (const auto &[Name, T] : Net->state_dict())
    EXPECT_TRUE(T.is_meta()) << Name;
  Net->eval();
  Tensor Out = Net->call({nn::Value(empty({2, 3, 224, 224}, Device::meta()))})
                   .toTensor();
  EXPECT_TRUE(Out.is_meta());
  EXPECT_EQ(Out.shape(), Shape({2, 1000}));
  // Training mode: the running-statistics updates are no-ops.
  Net->train();
  Out = Net->call({nn::Value(empty({2, 3, 64, 64}, Device::meta()))})
            .toTensor();
  EXPECT_EQ(Out.shape(), Shape({2, 1000}));
}

TEST(MetaDevice, LayerDeviceArgument) {
  nn::Linear L(4, 3, true, {.device = Device::meta()});
  EXPECT_TRUE(L.weight.is_meta() && L.bias.is_meta());
  nn::Conv2d C({.in_channels = 3,
                .out_channels = 8,
                .kernel_size = 3,
                .device = Device::meta()});
  EXPECT_TRUE(C.weight.is_meta());
  nn::BatchNorm2d B(8, 1e-5, 0.1, true, true, {.device = Device::meta()});
  EXPECT_TRUE(B.running_mean.is_meta());
  EXPECT_TRUE(B.num_batches_tracked.is_meta());
  EXPECT_EQ(B.num_batches_tracked.dtype(), DType::I64);
  // The argument is scoped to the constructor.
  EXPECT_FALSE(zeros({1}).is_meta());
  std::string E = errorText(
      [] { nn::Linear Bad(4, 3, true, {.device = Device::cuda()}); });
  EXPECT_NE(E.find("cpu or the meta device"), std::string::npos) << E;
  E = errorText([] { nn::Linear Bad(4, 3, true, {.dtype = DType::I32}); });
  EXPECT_NE(E.find("floating-point dtype"), std::string::npos) << E;
}

TEST(MetaDevice, LayerDTypeArgument) {
  nn::Linear L(4, 3, true, {.dtype = DType::F64});
  EXPECT_EQ(L.weight.dtype(), DType::F64);
  EXPECT_EQ(L.bias.dtype(), DType::F64);
  EXPECT_EQ(get_default_dtype(), DType::F32);
  nn::BatchNorm1d B({.num_features = 4, .dtype = DType::F64});
  EXPECT_EQ(B.running_var.dtype(), DType::F64);
  EXPECT_EQ(B.num_batches_tracked.dtype(), DType::I64);
  nn::LSTM R(3, 5, {.num_layers = 2, .dtype = DType::F64});
  for (const auto &[Name, P] : R.named_parameters())
    EXPECT_EQ(P.dtype(), DType::F64) << Name;
  // Children built inside a layer take its arguments.
  nn::TransformerEncoderLayer T({.d_model = 8,
                                 .nhead = 2,
                                 .dim_feedforward = 16,
                                 .dtype = DType::F64});
  for (const auto &[Name, P] : T.named_parameters())
    EXPECT_EQ(P.dtype(), DType::F64) << Name;
  Tensor Y = T(randn({5, 1, 8}, DType::F64));
  EXPECT_EQ(Y.dtype(), DType::F64);
}

TEST(MetaDevice, ToEmptyAllocatesKeepingHandles) {
  nn::Linear L(4, 3, true, {.device = Device::meta()});
  Tensor Handle = L.weight;
  L.to_empty(Device::cpu());
  EXPECT_FALSE(L.weight.is_meta());
  EXPECT_TRUE(Handle.is_same(L.weight));
  EXPECT_TRUE(equal(L.weight, zeros({3, 4})));
  EXPECT_TRUE(L.weight.requires_grad());
  // Initialize, then it trains like any module.
  L.reset_parameters();
  Tensor Out = L(randn({2, 4}));
  Out.sum().backward();
  EXPECT_TRUE(L.weight.grad().defined());
  // And back: to(meta) drops the data, to(cpu) from meta is refused.
  L.to(Device::meta());
  EXPECT_TRUE(L.weight.is_meta());
  std::string E = errorText([&] { L.to(Device::cpu()); });
  EXPECT_NE(E.find("parameter 'weight' is on the meta device"),
            std::string::npos)
      << E;
  EXPECT_NE(E.find("to_empty"), std::string::npos) << E;
}

TEST(MetaDevice, LoadWithAssignMakesAMetaModuleReal) {
  nn::Linear Src(4, 3);
  nn::StateDict SD = Src.state_dict();
  nn::Linear L(4, 3, true, {.device = Device::meta()});
  // Copying into memory that does not exist: refused, nothing changes.
  std::string E = errorText([&] { L.load_state_dict(SD); });
  EXPECT_NE(E.find("meta device"), std::string::npos) << E;
  EXPECT_NE(E.find("assign=true"), std::string::npos) << E;
  EXPECT_TRUE(L.weight.is_meta());
  L.load_state_dict(SD, /*Strict=*/true, /*Assign=*/true);
  EXPECT_FALSE(L.weight.is_meta());
  EXPECT_TRUE(L.weight.requires_grad());
  Tensor X = randn({2, 4});
  EXPECT_TRUE(equal(L(X), Src(X)));
  // The loaded tensors are the parameters: no second copy.
  EXPECT_EQ(L.weight.data().storage(), SD.at("weight").data().storage());
}

TEST(MetaDevice, SkipInitAllocatesWithoutInitializing) {
  Tensor Before = get_rng_state();
  auto L = nn::utils::skip_init<nn::Linear>(5, 7);
  EXPECT_TRUE(equal(get_rng_state(), Before)); // Nothing drawn.
  EXPECT_FALSE(L->weight.is_meta());
  EXPECT_EQ(L->weight.shape(), Shape({7, 5}));
  EXPECT_TRUE(equal(L->weight, zeros({7, 5})));
  auto C = nn::utils::skip_init<nn::Conv2d>(3, 4, 3);
  EXPECT_EQ(C->weight.shape(), Shape({4, 3, 3, 3}));
  EXPECT_EQ(get_default_device(), Device::cpu());
}

TEST(MetaDevice, DocsExampleLoadsAMappedCheckpointWithoutCopying) {
  // docs/modules.md, "Building big models", with a real checkpoint file.
  std::string Path = (std::filesystem::temp_directory_path() /
                      ("nngraph-meta-" + std::to_string(::getpid()) +
                       ".safetensors"))
                         .string();
  auto Reference = zoo::create("resnet18");
  Reference->eval();
  weights::writeSafetensors(Path, weights::fromStateDict(Reference->state_dict()));

  std::shared_ptr<nn::ModuleBase> model;
  {
    DefaultDeviceGuard meta(Device::meta());
    model = zoo::create("resnet18"); // instant, no memory
  }
  model->eval();
  Tensor out =
      model->call({nn::Value(empty({8, 3, 224, 224}, Device::meta()))});
  EXPECT_TRUE(out.is_meta());
  EXPECT_EQ(out.shape(), Shape({8, 1000}));
  nn::StateDict sd =
      weights::toStateDict(weights::readStateDict(Path));
  model->load_state_dict(sd, /*strict=*/true, /*assign=*/true);

  for (const auto &[Key, T] : model->state_dict()) {
    EXPECT_FALSE(T.is_meta()) << Key;
    // The parameters are the mapped file's tensors: no copy was made.
    EXPECT_EQ(T.data().storage(), sd.at(Key).data().storage()) << Key;
  }
  Tensor X = randn({1, 3, 64, 64});
  EXPECT_TRUE(allclose(model->call({nn::Value(X)}).toTensor(),
                       Reference->call({nn::Value(X)}).toTensor(), 1e-5,
                       1e-6));
  std::filesystem::remove(Path);
}
