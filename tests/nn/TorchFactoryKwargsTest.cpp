//===- TorchFactoryKwargsTest.cpp - device=/dtype= and meta vs PyTorch ----===//
//
// Layers built with dtype= (and device='meta') against PyTorch 1.13 built
// the same way: state_dict keys, dtypes (integral buffers keep theirs),
// shapes and printing; f64 layers' outputs and gradients; a model built on
// the meta device and loaded with assign=true computes what torch computes
// with the same weights.
//
//===----------------------------------------------------------------------===//

#include "TorchOracle.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Activation.h"
#include "nngraph/frontend/nn/Containers.h"
#include "nngraph/frontend/nn/Conv.h"
#include "nngraph/frontend/nn/Linear.h"
#include "nngraph/frontend/nn/Norm.h"
#include "nngraph/frontend/nn/RNN.h"
#include "nngraph/frontend/nn/Transformer.h"
#include "nngraph/frontend/nn/utils/SkipInit.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::test;

namespace {

/// Every state_dict entry of M has the dtype and shape torch reports.
void expectSameState(const std::string &What, const nn::ModuleBase &M,
                     const TorchReport &R) {
  ASSERT_EQ(R.Error, "") << What;
  EXPECT_EQ(compareKeys(M.state_dict().keys(), R.Keys), "") << What;
  for (const auto &[Key, T] : M.state_dict()) {
    ASSERT_TRUE(R.StateDTypes.count(Key)) << What << " " << Key;
    EXPECT_EQ(std::string(dtypeName(T.dtype())), R.StateDTypes.at(Key))
        << What << " " << Key;
    EXPECT_EQ(T.shape().dims(), R.StateShapes.at(Key)) << What << " " << Key;
  }
  EXPECT_EQ(M.to_string(), R.Repr) << What;
}

} // namespace

TEST(TorchFactoryKwargs, DTypeArgumentMatchesPyTorch) {
  TorchOracle O;
  size_t L = O.describe("Linear f64", "nn.Linear(4, 3, dtype=torch.float64)");
  size_t C = O.describe("Conv2d f64",
                        "nn.Conv2d(3, 8, 3, padding=1, dtype=torch.float64)");
  size_t B = O.describe("BatchNorm2d f64",
                        "nn.BatchNorm2d(8, dtype=torch.float64)");
  size_t R = O.describe("LSTM f64",
                        "nn.LSTM(3, 5, num_layers=2, dtype=torch.float64)");
  size_t T = O.describe("TransformerEncoderLayer f64",
                        "nn.TransformerEncoderLayer(8, 2, 16, "
                        "dtype=torch.float64)");
  NNG_RUN_TORCH_ORACLE(O);
  expectSameState("Linear", nn::Linear(4, 3, true, {.dtype = DType::F64}),
                  O.report(L));
  expectSameState("Conv2d",
                  nn::Conv2d({.in_channels = 3,
                              .out_channels = 8,
                              .kernel_size = 3,
                              .padding = 1,
                              .dtype = DType::F64}),
                  O.report(C));
  expectSameState("BatchNorm2d",
                  nn::BatchNorm2d({.num_features = 8, .dtype = DType::F64}),
                  O.report(B));
  expectSameState("LSTM",
                  nn::LSTM(3, 5, {.num_layers = 2, .dtype = DType::F64}),
                  O.report(R));
  expectSameState("TransformerEncoderLayer",
                  nn::TransformerEncoderLayer({.d_model = 8,
                                               .nhead = 2,
                                               .dim_feedforward = 16,
                                               .dtype = DType::F64}),
                  O.report(T));
}

TEST(TorchFactoryKwargs, MetaModulesDescribeLikePyTorch) {
  TorchOracle O;
  const char *Net = "nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), "
                    "nn.ReLU(), nn.Flatten(), nn.Linear(36, 2))";
  size_t M = O.describe("meta", "torch.nn.utils.skip_init(nn.Linear, 6, 2)");
  size_t S = O.describe("Sequential on meta", Net,
                        {"m = m.to(torch.device('meta'))"});
  NNG_RUN_TORCH_ORACLE(O);
  expectSameState("skip_init Linear", *nn::utils::skip_init<nn::Linear>(6, 2),
                  O.report(M));
  std::shared_ptr<nn::Sequential> Seq;
  {
    DefaultDeviceGuard Meta(Device::meta());
    Seq = nn::make<nn::Sequential>(
        nn::make<nn::Conv2d>(3, 4, 3), nn::make<nn::BatchNorm2d>(4),
        nn::make<nn::ReLU>(), nn::make<nn::Flatten>(), nn::make<nn::Linear>(36, 2));
  }
  expectSameState("Sequential on meta", *Seq, O.report(S));
}

TEST(TorchFactoryKwargs, F64LayerAndMetaLoadedModelComputeLikePyTorch) {
  TorchOracle O;
  // An f64 layer: outputs, gradients and two SGD steps in f64.
  auto L64 = nn::make<nn::Linear>(4, 3, true,
                                  nn::FactoryKwargs{.dtype = DType::F64});
  OracleCase C;
  C.Name = "Linear(4, 3, dtype=f64)";
  C.Module = L64;
  C.TorchModule = "nn.Linear(4, 3, dtype=torch.float64)";
  C.Inputs = {randn({2, 4}, DType::F64)};
  C.Forward = [L64](const std::vector<Tensor> &In) {
    return std::vector<Tensor>{(*L64)(In[0])};
  };
  C.Sgd = OracleSgd{};
  C.Steps = 2;
  C.Atol = C.Rtol = 1e-10;
  O.add(C);
  // A model built on the meta device, its weights loaded with assign.
  auto Src = nn::make<nn::Sequential>(nn::make<nn::Linear>(4, 8),
                                      nn::make<nn::ReLU>(),
                                      nn::make<nn::Linear>(8, 2));
  std::shared_ptr<nn::Sequential> Meta;
  {
    DefaultDeviceGuard G(Device::meta());
    Meta = nn::make<nn::Sequential>(nn::make<nn::Linear>(4, 8),
                                    nn::make<nn::ReLU>(),
                                    nn::make<nn::Linear>(8, 2));
  }
  nn::StateDict SD;
  for (const auto &[Key, T] : Src->state_dict())
    SD.insert(Key, T.clone()); // Fresh tensors, owned by Meta alone.
  Meta->load_state_dict(SD, /*Strict=*/true, /*Assign=*/true);
  OracleCase M;
  M.Name = "meta Sequential loaded with assign";
  M.Module = Meta;
  M.TorchModule = "nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))";
  M.Inputs = {randn({3, 4})};
  M.Forward = [Meta](const std::vector<Tensor> &In) {
    return std::vector<Tensor>{Meta->call({nn::Value(In[0])}).toTensor()};
  };
  M.Sgd = OracleSgd{};
  O.add(M);
  NNG_RUN_TORCH_ORACLE(O);
}
