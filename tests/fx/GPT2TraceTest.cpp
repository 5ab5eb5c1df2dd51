//===- GPT2TraceTest.cpp - The GPT-2 decoder traced, compiled, in ORT -----===//
//
// The zoo's GPT-2 with its key/value cache (zoo/GPT2.h, tiny config:
// vocabulary 128, width 32, 2 layers, 4 heads of 8) traced ONCE with
// fx::symbolic_trace: input_ids i64[N,T] and per layer past_key_L /
// past_value_L f32[N,4,P,8], grouped into forward's (input_ids, past) by
// an fx::ArgPacker. That one graph runs prefill (T = prompt length, from
// an empty cache P = 0) and decode (T = 1, P growing) at any batch size.
// Greedy decoding of 5 steps, feeding each step's presents back as the
// next step's past, gives eager's tokens and logits (within 1e-4) on the
// reference backend, on the cpu backend, and in ONNX Runtime
// (onnxruntime-node) running the graph's ONNX export (SKIPPED with the
// reason when node or onnxruntime-node is missing).
//
//===----------------------------------------------------------------------===//

#include "FxTestUtils.h"
#include "OrtTestUtils.h"

#include "nngraph/frontend/fx/GraphModule.h"
#include "nngraph/frontend/onnx/OnnxImport.h"
#include "nngraph/frontend/zoo/GPT2.h"

#include <gtest/gtest.h>

#include <functional>
#include <iostream>

using namespace nng;

namespace {

constexpr int64_t Layers = 2, Heads = 4, HeadDim = 8;
constexpr int Steps = 5;

/// The tiny GPT-2 with weights large enough that greedy choices are clear.
std::shared_ptr<zoo::GPT2LMHeadModel> model() {
  static std::shared_ptr<zoo::GPT2LMHeadModel> M = [] {
    manual_seed(41);
    auto Net = zoo::gpt2_tiny();
    NoGradGuard G;
    for (const auto &[Key, P] : Net->named_parameters())
      Tensor(P).copy_(randn(P.sizes()) * 0.3);
    Net->eval();
    return Net;
  }();
  return M;
}

/// The graph inputs: input_ids, then key and value of each layer.
std::vector<fx::InputSpec> specs() {
  std::vector<fx::InputSpec> S = {
      fx::InputSpec({"N", "T"}, DType::I64, "input_ids")};
  for (int64_t L = 0; L < Layers; ++L)
    for (const char *KV : {"key", "value"})
      S.push_back(
          fx::InputSpec({"N", Heads, "P", HeadDim}, DType::F32,
                        "past_" + std::string(KV) + "_" + std::to_string(L)));
  return S;
}

/// forward(input_ids, past): the inputs after the first are the list.
std::vector<nn::Value> pack(const std::vector<Tensor> &In) {
  return {In[0],
          nn::Value::list(std::vector<nn::Value>(In.begin() + 1, In.end()))};
}

/// The traced graph module, its outputs named logits, present_key_L, ...
fx::GraphModule &traced() {
  static fx::GraphModule GM = [] {
    fx::GraphModule R = fx::symbolic_trace(*model(), specs(), pack);
    ir::Graph &G = R.graph();
    G.setName("gpt2_tiny");
    std::vector<ir::Value *> Outs(G.outputs().begin(), G.outputs().end());
    G.rename(Outs.at(0), "logits");
    for (size_t I = 1; I < Outs.size(); ++I)
      G.rename(Outs[I], std::string(I % 2 ? "present_key_" : "present_value_") +
                            std::to_string((I - 1) / 2));
    return R;
  }();
  return GM;
}

/// One step: (input_ids, past...) -> (logits, presents...).
using StepFn =
    std::function<std::vector<rt::Tensor>(const std::vector<rt::Tensor> &)>;

struct Decoded {
  /// [N, Steps] token ids.
  Tensor Tokens;
  std::vector<rt::Tensor> Logits;
};

/// Greedy decoding: step 0 runs Prompt from an empty cache (P = 0), each
/// later step the previous token with the presents fed back as past.
Decoded greedy(const StepFn &Step, const Tensor &Prompt) {
  NoGradGuard G;
  int64_t N = Prompt.size(0);
  std::vector<rt::Tensor> In = {Prompt.data()};
  for (int64_t I = 0; I < 2 * Layers; ++I)
    In.push_back(zeros({N, Heads, 0, HeadDim}).data());
  Decoded D;
  std::vector<Tensor> Tokens;
  for (int S = 0; S < Steps; ++S) {
    std::vector<rt::Tensor> Out = Step(In);
    if (Out.empty()) // The step could not run (ORT missing: a skip).
      return D;
    EXPECT_EQ(Out.size(), size_t(1 + 2 * Layers));
    if (Out.size() != size_t(1 + 2 * Layers))
      return D;
    Tensor Logits(Out[0]);
    D.Logits.push_back(Out[0]);
    Tensor Next = argmax(select(Logits, 1, Logits.size(1) - 1), -1, true);
    Tokens.push_back(Next);
    In.assign(Out.begin(), Out.end());
    In[0] = Next.data();
  }
  D.Tokens = cat(Tokens, 1);
  return D;
}

StepFn eagerStep() {
  return [](const std::vector<rt::Tensor> &In) {
    std::vector<Tensor> Past(In.begin() + 1, In.end());
    auto [Logits, Presents] = (*model())(Tensor(In[0]), Past);
    std::vector<rt::Tensor> Out = {Logits.data()};
    for (const Tensor &P : Presents)
      Out.push_back(P.data());
    return Out;
  };
}

Tensor prompt() {
  manual_seed(9);
  return randint(0, 128, {2, 5});
}

/// Eager's decoding, computed once.
const Decoded &eagerDecoding() {
  static Decoded D = greedy(eagerStep(), prompt());
  return D;
}

/// Same tokens as eager, every step's logits within 1e-4; prints the error.
void expectSameAsEager(const Decoded &Got, const std::string &What) {
  const Decoded &Want = eagerDecoding();
  ASSERT_EQ(Got.Logits.size(), Want.Logits.size()) << What;
  EXPECT_TRUE(equal(Got.Tokens, Want.Tokens))
      << What << ": tokens " << Got.Tokens.toString() << ", eager "
      << Want.Tokens.toString();
  double Worst = 0;
  for (size_t S = 0; S < Got.Logits.size(); ++S) {
    std::string D =
        test::compareTensors(Got.Logits[S], Want.Logits[S], 1e-4, 0);
    EXPECT_EQ(D, "") << What << ", step " << S;
    Worst = std::max(Worst, test::maxAbsDiff(Got.Logits[S], Want.Logits[S]));
  }
  std::cout << "[ GPT2Trace ] " << What << ": " << Steps
            << " greedy steps, same tokens as eager: "
            << (equal(Got.Tokens, Want.Tokens) ? "yes" : "no")
            << "; max |logits - eager| " << Worst << "\n";
}

TEST(GPT2Trace, OneGraphWithSymbolicBatchCacheAndSequence) {
  const ir::Graph &G = traced().graph();
  ir::verifyOrThrow(G);
  ASSERT_EQ(G.inputs().size(), size_t(1 + 2 * Layers));
  EXPECT_EQ(G.inputs()[0]->type().toString(), "i64[N,T]");
  EXPECT_EQ(G.inputs()[1]->name(), "past_key_0");
  EXPECT_EQ(G.inputs()[4]->type().toString(), "f32[N,4,P,8]");
  ASSERT_EQ(G.outputs().size(), size_t(1 + 2 * Layers));
  EXPECT_EQ(G.outputs()[0]->type().toString(), "f32[N,T,128]");
  std::string Present = G.outputs()[1]->type().toString();
  EXPECT_EQ(Present.rfind("f32[N,4,", 0), 0u) << Present;
  // The positions and the key range come from the shapes (Range nodes),
  // not from the example extents.
  EXPECT_EQ(fxtest::countOps(G, ir::OpKind::Range), 2u);
  // The tied head is one initializer, under its first key.
  std::vector<std::string> Keys = model()->state_dict().keys();
  Keys.pop_back();
  EXPECT_EQ(fxtest::initializerNames(G), Keys);
}

TEST(GPT2Trace, GreedyDecodingOnReferenceAndCpuEqualsEager) {
  // The cached steps equal eager (checked in tests/zoo/GPT2Test.cpp too).
  ASSERT_EQ(eagerDecoding().Tokens.shape().dims(),
            (std::vector<int64_t>{2, Steps}));
  for (const char *Backend : {"reference", "cpu"}) {
    auto Exe = backends::getBackend(Backend).compile(traced().graph());
    Decoded D =
        greedy([&](const std::vector<rt::Tensor> &In) { return Exe->run(In); },
               prompt());
    expectSameAsEager(D, Backend);
  }
}

TEST(GPT2Trace, OnnxExportDecodesInOrt) {
  std::string Dir = test::freshTestDir("gpt2");
  std::string Model = Dir + "/gpt2_tiny.onnx";
  traced().save(Model);
  // The file keeps the dynamic dims and the names.
  std::unique_ptr<ir::Graph> Back = frontend::importOnnx(Model);
  ASSERT_EQ(Back->inputs().size(), size_t(1 + 2 * Layers));
  EXPECT_EQ(Back->inputs()[0]->type().toString(), "i64[N,T]");
  EXPECT_EQ(Back->inputs()[2]->type().toString(), "f32[N,4,P,8]");
  EXPECT_EQ(Back->outputs()[0]->name(), "logits");
  std::string Version;
  std::string Skip;
  Decoded D = greedy(
      [&](const std::vector<rt::Tensor> &In) {
        if (!Skip.empty())
          return std::vector<rt::Tensor>();
        test::ExternalRun R = test::runOrt(Model, In);
        Skip = R.SkipReason;
        Version = R.Version;
        std::vector<rt::Tensor> Out;
        for (const test::NamedTensor &T : R.Outputs)
          Out.push_back(T.T);
        return Out;
      },
      prompt());
  if (!Skip.empty())
    GTEST_SKIP() << Skip;
  expectSameAsEager(D, "ONNX Runtime (" + Version + ")");
}

} // namespace
