//===- TorchModelTest.cpp - Whole models against PyTorch -------------------===//
//
// Two small models written once in C++ (nn::Module code) and once in
// Python, compared through TorchOracle.h: a residual CNN (conv-bn-relu
// stem, basic blocks with a skip connection and a strided 1x1 downsample
// in a Sequential, adaptive average pooling, flatten, linear) and a
// transformer encoder model (embedding with padding_idx, two
// TransformerEncoderLayers in a ModuleList, mean pooling, linear head).
// Each runs in eval mode, in train mode (the CNN's BatchNorm running
// statistics after the forward must match), and through SGD steps with
// momentum, Nesterov and weight decay (the parameters after the steps must
// match torch.optim.SGD's). state_dict keys, gradients of every parameter
// and print(model) must agree too. SKIPPED when no Python imports torch.
//
//===----------------------------------------------------------------------===//

#include "TorchOracle.h"

#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Activation.h"
#include "nngraph/frontend/nn/Containers.h"
#include "nngraph/frontend/nn/Conv.h"
#include "nngraph/frontend/nn/Embedding.h"
#include "nngraph/frontend/nn/Linear.h"
#include "nngraph/frontend/nn/Norm.h"
#include "nngraph/frontend/nn/Pooling.h"
#include "nngraph/frontend/nn/Transformer.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace nng;
using namespace nng::test;

namespace {

/// torchvision's BasicBlock: conv-bn-relu-conv-bn plus the (downsampled)
/// input, then relu.
struct BasicBlock : nn::Module<BasicBlock> {
  std::shared_ptr<nn::Conv2d> conv1;
  std::shared_ptr<nn::BatchNorm2d> bn1;
  std::shared_ptr<nn::ReLU> relu;
  std::shared_ptr<nn::Conv2d> conv2;
  std::shared_ptr<nn::BatchNorm2d> bn2;
  std::shared_ptr<nn::Sequential> downsample;
  BasicBlock(int64_t In, int64_t Out, int64_t Stride) {
    conv1 = register_module(
        "conv1", nn::make<nn::Conv2d>(In, Out, 3, Stride, 1, 1, 1, false));
    bn1 = register_module("bn1", nn::make<nn::BatchNorm2d>(Out));
    relu = register_module("relu", nn::make<nn::ReLU>());
    conv2 = register_module(
        "conv2", nn::make<nn::Conv2d>(Out, Out, 3, 1, 1, 1, 1, false));
    bn2 = register_module("bn2", nn::make<nn::BatchNorm2d>(Out));
    if (Stride != 1 || In != Out)
      downsample = register_module(
          "downsample",
          nn::make<nn::Sequential>(
              nn::make<nn::Conv2d>(In, Out, 1, Stride, 0, 1, 1, false),
              nn::make<nn::BatchNorm2d>(Out)));
  }
  Tensor forward(const Tensor &X) {
    Tensor Y = (*relu)((*bn1)((*conv1)(X)));
    Y = (*bn2)((*conv2)(Y));
    Tensor Identity = downsample ? Tensor((*downsample)(X)) : X;
    return (*relu)(Y + Identity);
  }
};

struct ResNetSmall : nn::Module<ResNetSmall> {
  std::shared_ptr<nn::Conv2d> conv1 =
      register_module("conv1", nn::make<nn::Conv2d>(3, 8, 3, 1, 1, 1, 1, false));
  std::shared_ptr<nn::BatchNorm2d> bn1 =
      register_module("bn1", nn::make<nn::BatchNorm2d>(8));
  std::shared_ptr<nn::ReLU> relu = register_module("relu", nn::make<nn::ReLU>());
  std::shared_ptr<nn::MaxPool2d> maxpool =
      register_module("maxpool", nn::make<nn::MaxPool2d>(3, 2, 1));
  std::shared_ptr<nn::Sequential> layer1 = register_module(
      "layer1", nn::make<nn::Sequential>(nn::make<BasicBlock>(8, 8, 1),
                                         nn::make<BasicBlock>(8, 8, 1)));
  std::shared_ptr<nn::Sequential> layer2 = register_module(
      "layer2", nn::make<nn::Sequential>(nn::make<BasicBlock>(8, 16, 2)));
  std::shared_ptr<nn::AdaptiveAvgPool2d> avgpool =
      register_module("avgpool", nn::make<nn::AdaptiveAvgPool2d>(
                                     nn::IntOrTuple{1, 1}));
  std::shared_ptr<nn::Flatten> flatten =
      register_module("flatten", nn::make<nn::Flatten>());
  std::shared_ptr<nn::Linear> fc =
      register_module("fc", nn::make<nn::Linear>(16, 10));
  Tensor forward(const Tensor &X) {
    Tensor Y = (*maxpool)((*relu)((*bn1)((*conv1)(X))));
    Y = (*layer2)((*layer1)(Y));
    return (*fc)((*flatten)((*avgpool)(Y)));
  }
};

/// Embedding (padding_idx 0) scaled by sqrt(d), two encoder layers, mean
/// over the sequence, a linear head.
struct TinyTransformer : nn::Module<TinyTransformer> {
  std::shared_ptr<nn::Embedding> embed;
  std::shared_ptr<nn::ModuleList> layers;
  std::shared_ptr<nn::Linear> head;
  TinyTransformer(double Dropout, bool NormFirst) {
    embed = register_module("embed", nn::make<nn::Embedding>(50, 16, 0));
    layers = register_module("layers", nn::make<nn::ModuleList>());
    for (const char *Act : {"relu", "gelu"})
      layers->append(nn::make<nn::TransformerEncoderLayer>(
          16, 4, 32, Dropout, Act, 1e-5, /*batch_first=*/true, NormFirst));
    head = register_module("head", nn::make<nn::Linear>(16, 5));
  }
  Tensor forward(const Tensor &Tokens, const Tensor &Padding) {
    Tensor X = (*embed)(Tokens) * std::sqrt(16.0);
    for (size_t I = 0; I < layers->size(); ++I)
      X = (*layers->at<nn::TransformerEncoderLayer>(static_cast<int64_t>(I)))(
          X, Tensor(), Padding);
    return (*head)(X.mean({1}));
  }
};

const char *Prelude = R"py(
class BasicBlock(nn.Module):
    def __init__(self, i, o, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(i, o, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(o)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(o, o, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(o)
        self.downsample = None
        if stride != 1 or i != o:
            self.downsample = nn.Sequential(
                nn.Conv2d(i, o, 1, stride, 0, bias=False), nn.BatchNorm2d(o))
    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        identity = self.downsample(x) if self.downsample is not None else x
        return self.relu(y + identity)

class ResNetSmall(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = nn.Sequential(BasicBlock(8, 8, 1), BasicBlock(8, 8, 1))
        self.layer2 = nn.Sequential(BasicBlock(8, 16, 2))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(16, 10)
    def forward(self, x):
        y = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        y = self.layer2(self.layer1(y))
        return self.fc(self.flatten(self.avgpool(y)))

class TinyTransformer(nn.Module):
    def __init__(self, dropout, norm_first):
        super().__init__()
        self.embed = nn.Embedding(50, 16, padding_idx=0)
        self.layers = nn.ModuleList([
            nn.TransformerEncoderLayer(16, 4, 32, dropout, act,
                                       batch_first=True, norm_first=norm_first)
            for act in ("relu", "gelu")])
        self.head = nn.Linear(16, 5)
    def forward(self, tokens, padding):
        x = self.embed(tokens) * math.sqrt(16.0)
        for layer in self.layers:
            x = layer(x, src_key_padding_mask=padding)
        return self.head(x.mean(1))
)py";

/// Random BatchNorm statistics and affine parameters everywhere in M.
void randomizeNorms(nn::ModuleBase &M) {
  NoGradGuard G;
  for (auto [Name, T] : M.named_buffers()) {
    if (Name.ends_with("running_mean"))
      T.copy_(randn(T.sizes()) * 0.2);
    else if (Name.ends_with("running_var"))
      T.copy_(rand(T.sizes()) + 0.5);
  }
  for (auto [Name, T] : M.named_parameters())
    if (Name.find("bn") != std::string::npos ||
        Name.find("downsample.1") != std::string::npos)
      T.copy_(randn(T.sizes()) * 0.2 + (Name.ends_with("weight") ? 1.0 : 0.0));
}

OracleCase resnetCase(const std::string &Name, bool Train,
                      std::optional<OracleSgd> Sgd = std::nullopt,
                      int Steps = 1) {
  auto M = nn::make<ResNetSmall>();
  randomizeNorms(*M);
  OracleCase C;
  C.Name = "ResNetSmall " + Name;
  C.Module = M;
  C.TorchModule = "ResNetSmall()";
  C.Inputs = {randn({4, 3, 16, 16})};
  C.Train = Train;
  C.Sgd = Sgd;
  C.Steps = Steps;
  C.Forward = [M](const std::vector<Tensor> &X) {
    return std::vector<Tensor>{(*M)(X[0])};
  };
  return C;
}

OracleCase transformerCase(const std::string &Name, bool Train, bool NormFirst,
                           std::optional<OracleSgd> Sgd = std::nullopt,
                           int Steps = 1) {
  // Train mode runs with dropout 0, eval mode with PyTorch's default 0.1.
  double P = Train ? 0.0 : 0.1;
  auto M = nn::make<TinyTransformer>(P, NormFirst);
  OracleCase C;
  C.Name = "TinyTransformer " + Name;
  C.Module = M;
  C.TorchModule = std::string("TinyTransformer(") + (Train ? "0.0" : "0.1") +
                  ", " + (NormFirst ? "True" : "False") + ")";
  // Batch 3, sequence 6; entry 2 is padded (token 0) after 4 tokens.
  Tensor Tokens = randint(1, 50, {3, 6});
  std::vector<double> Pad(18, 0.0);
  for (int J = 4; J < 6; ++J)
    Pad[2 * 6 + J] = 1.0;
  {
    NoGradGuard G;
    Tokens = where(tensor(Pad, std::vector<int64_t>{3, 6}) > 0.5,
                   zeros_like(Tokens), Tokens);
  }
  C.Inputs = {Tokens, tensor(Pad, std::vector<int64_t>{3, 6}) > 0.5};
  C.Train = Train;
  C.Sgd = Sgd;
  C.Steps = Steps;
  C.Forward = [M](const std::vector<Tensor> &X) {
    return std::vector<Tensor>{(*M)(X[0], X[1])};
  };
  return C;
}

} // namespace

TEST(TorchModel, ResidualCNNForwardBackward) {
  manual_seed(41);
  TorchOracle O(Prelude);
  O.add(resnetCase("eval", false));
  O.add(resnetCase("train (batch statistics, running stats updated)", true));
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(TorchModel, ResidualCNNSGDSteps) {
  manual_seed(42);
  TorchOracle O(Prelude);
  O.add(resnetCase("SGD lr=0.1", true, OracleSgd{0.1}));
  O.add(resnetCase("SGD momentum=0.9 weight_decay=1e-4 x3", true,
                   OracleSgd{0.05, 0.9, 0, 1e-4}, 3));
  O.add(resnetCase("SGD nesterov x2", true, OracleSgd{0.05, 0.9, 0, 0, true},
                   2));
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(TorchModel, TransformerEncoderModelForwardBackward) {
  manual_seed(43);
  TorchOracle O(Prelude);
  for (bool NormFirst : {false, true}) {
    std::string Tag = NormFirst ? " norm_first" : "";
    O.add(transformerCase("eval" + Tag, false, NormFirst));
    O.add(transformerCase("train, dropout 0" + Tag, true, NormFirst));
  }
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(TorchModel, TransformerEncoderModelSGDSteps) {
  manual_seed(44);
  TorchOracle O(Prelude);
  O.add(transformerCase("SGD momentum=0.9 x3", true, false,
                        OracleSgd{0.05, 0.9, 0.1, 1e-3}, 3));
  NNG_RUN_TORCH_ORACLE(O);
}
