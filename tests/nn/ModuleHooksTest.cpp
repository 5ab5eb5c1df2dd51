//===- ModuleHooksTest.cpp - Forward and backward module hooks -----------===//
//
// Forward pre-hooks (replacing inputs), forward hooks (replacing the
// output), their order with global hooks and prepend, RemovableHandle,
// full backward hooks (grad_input / grad_output values for several inputs
// and tuple outputs, replacing grad_input, inputs that need no gradient),
// backward pre-hooks, and a comparison of the backward hook semantics with
// PyTorch's.
//
//===----------------------------------------------------------------------===//

#include "ModuleTestUtils.h"

#include "nngraph/frontend/Autograd.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace nng;
using namespace nng::nn;
using namespace nng::nn::testing;

namespace {

std::vector<double> vals(const Tensor &T) { return T.to_vector<double>(); }

/// (A * w + B, A * B), w = [1, 2, 3].
struct TwoIn : Module<TwoIn> {
  Tensor w = register_parameter("w", tensor({1.0, 2.0, 3.0}));
  std::tuple<Tensor, Tensor> forward(const Tensor &A, const Tensor &B) {
    return {A * w + B, A * B};
  }
};

struct Twice : Module<Twice> {
  Tensor forward(const Tensor &X) { return X * 2.0; }
};

} // namespace

TEST(ModuleHooks, ForwardPreHookReplacesInputs) {
  struct Add : Module<Add> {
    Tensor forward(const Tensor &X, const Tensor &Y) { return X + Y; }
  } M;
  Tensor X = tensor({1.0}), Y = tensor({10.0});
  // Returning a vector replaces all inputs.
  auto H1 = M.register_forward_pre_hook(
      [](ModuleBase &, const std::vector<Value> &In) {
        return std::vector<Value>{In[1], In[0].toTensor() * 100.0};
      });
  EXPECT_EQ(vals(M(X, Y)), std::vector<double>{110});
  H1.remove();
  // A tuple Value spreads into the inputs; void keeps them.
  int Seen = 0;
  auto H2 = M.register_forward_pre_hook(
      [&](ModuleBase &Mod, const std::vector<Value> &In) {
        EXPECT_EQ(&Mod, &M);
        EXPECT_EQ(In.size(), 2u);
        ++Seen;
      });
  auto H3 = M.register_forward_pre_hook(
      [](ModuleBase &, const std::vector<Value> &In) -> std::optional<Value> {
        return Value::tuple({In[0], Value(tensor({5.0}))});
      });
  EXPECT_EQ(vals(M(X, Y)), std::vector<double>{6});
  EXPECT_EQ(Seen, 1);
  H2.remove();
  H3.remove();
  // A single non-tuple Value becomes the only input.
  Twice T;
  auto H4 = T.register_forward_pre_hook(
      [](ModuleBase &, const std::vector<Value> &) { return Value(tensor({4.0})); });
  EXPECT_EQ(vals(T(tensor({1.0}))), std::vector<double>{8});
  H4.remove();
  EXPECT_EQ(vals(T(tensor({1.0}))), std::vector<double>{2});
}

TEST(ModuleHooks, ForwardHookSeesInputsAndReplacesOutput) {
  Twice T;
  std::vector<double> SeenIn, SeenOut;
  auto H1 = T.register_forward_hook(
      [&](ModuleBase &, const std::vector<Value> &In, const Value &Out) {
        SeenIn = vals(In[0].toTensor());
        SeenOut = vals(Out.toTensor());
      });
  auto H2 = T.register_forward_hook(
      [](ModuleBase &, const std::vector<Value> &, const Value &Out) {
        return Value(Out.toTensor() + 1.0);
      });
  EXPECT_EQ(vals(T(tensor({3.0}))), std::vector<double>{7});
  EXPECT_EQ(SeenIn, std::vector<double>{3});
  EXPECT_EQ(SeenOut, std::vector<double>{6});
  // A hook returning nullopt keeps the output.
  H2.remove();
  auto H3 = T.register_forward_hook(
      [](ModuleBase &, const std::vector<Value> &,
         const Value &) -> std::optional<Value> { return std::nullopt; });
  EXPECT_EQ(vals(T(tensor({3.0}))), std::vector<double>{6});
  // A tuple output replaced through the typed call.
  TwoIn M;
  auto H4 = M.register_forward_hook(
      [](ModuleBase &, const std::vector<Value> &, const Value &Out) {
        return Value::tuple({Out.elements()[1], Out.elements()[0]});
      });
  auto [A, B] = M(tensor({1.0, 1.0, 1.0}), tensor({2.0, 2.0, 2.0}));
  EXPECT_EQ(vals(A), (std::vector<double>{2, 2, 2}));
  EXPECT_EQ(vals(B), (std::vector<double>{3, 4, 5}));
}

TEST(ModuleHooks, OrderGlobalFirstAndPrepend) {
  std::vector<std::string> Log;
  Twice T;
  auto G1 = register_module_forward_pre_hook(
      [&](ModuleBase &M, const std::vector<Value> &) {
        Log.push_back("global-pre " + M.type_name());
      });
  auto G2 = register_module_forward_hook(
      [&](ModuleBase &, const std::vector<Value> &, const Value &) {
        Log.push_back("global-fwd");
      });
  auto P1 = T.register_forward_pre_hook(
      [&](ModuleBase &, const std::vector<Value> &) { Log.push_back("pre1"); });
  auto P0 = T.register_forward_pre_hook(
      [&](ModuleBase &, const std::vector<Value> &) { Log.push_back("pre0"); },
      /*Prepend=*/true);
  auto F1 = T.register_forward_hook(
      [&](ModuleBase &, const std::vector<Value> &, const Value &) {
        Log.push_back("fwd1");
      });
  T(tensor({1.0}));
  G1.remove();
  G2.remove();
  EXPECT_EQ(Log, (std::vector<std::string>{"global-pre Twice", "pre0", "pre1",
                                           "global-fwd", "fwd1"}));
  EXPECT_FALSE(nn::detail::callsNeedValues());
}

TEST(ModuleHooks, RemovableHandleIsIdempotentAndOutlivesTheModule) {
  int Calls = 0;
  RemovableHandle H, Other;
  {
    auto T = std::make_shared<Twice>();
    H = T->register_forward_hook(
        [&](ModuleBase &, const std::vector<Value> &, const Value &) { ++Calls; });
    Other = T->register_forward_hook(
        [&](ModuleBase &, const std::vector<Value> &, const Value &) { ++Calls; });
    EXPECT_NE(H.id(), Other.id());
    (*T)(tensor({1.0}));
    EXPECT_EQ(Calls, 2);
    H.remove();
    H.remove(); // Twice is fine.
    (*T)(tensor({1.0}));
    EXPECT_EQ(Calls, 3);
    EXPECT_TRUE(T->needsValueCall());
  }
  Other.remove(); // The module is gone: a no-op.
  RemovableHandle Empty;
  Empty.remove();
  // A handle going out of scope does not remove its hook (as in PyTorch).
  Twice T;
  {
    RemovableHandle Scoped = T.register_forward_hook(
        [&](ModuleBase &, const std::vector<Value> &, const Value &) { ++Calls; });
  }
  T(tensor({1.0}));
  EXPECT_EQ(Calls, 4);
}

TEST(ModuleHooks, FullBackwardHookSeesGradInputAndGradOutput) {
  TwoIn M;
  std::vector<Tensor> GIn, GOut;
  int Calls = 0;
  M.register_full_backward_hook([&](ModuleBase &Mod,
                                    const std::vector<Tensor> &GradIn,
                                    const std::vector<Tensor> &GradOut) {
    EXPECT_EQ(&Mod, &M);
    GIn = GradIn;
    GOut = GradOut;
    ++Calls;
  });
  Tensor A = tensor({1.0, 2.0, 3.0}, TensorOptions().requires_grad());
  Tensor B = tensor({4.0, 5.0, 6.0}, TensorOptions().requires_grad());
  auto [Y0, Y1] = M(A, B);
  Tensor C0 = tensor({1.0, 10.0, 100.0}), C1 = tensor({2.0, 3.0, 4.0});
  ((Y0 * C0).sum() + (Y1 * C1).sum()).backward();
  ASSERT_EQ(Calls, 1);
  ASSERT_EQ(GOut.size(), 2u);
  EXPECT_EQ(vals(GOut[0]), vals(C0));
  EXPECT_EQ(vals(GOut[1]), vals(C1));
  ASSERT_EQ(GIn.size(), 2u);
  // d/dA = C0 * w + C1 * B; d/dB = C0 + C1 * A.
  EXPECT_EQ(vals(GIn[0]), (std::vector<double>{1 + 8, 20 + 15, 300 + 24}));
  EXPECT_EQ(vals(GIn[1]), (std::vector<double>{1 + 2, 10 + 6, 100 + 12}));
  EXPECT_EQ(vals(A.grad()), vals(GIn[0]));
  EXPECT_EQ(vals(B.grad()), vals(GIn[1]));
  // The parameter's gradient is not affected by the wrapping.
  EXPECT_EQ(vals(M.w.grad()), (std::vector<double>{1, 20, 300}));
}

TEST(ModuleHooks, FullBackwardHookReplacesGradInput) {
  struct Chain : Module<Chain> {
    std::shared_ptr<Twice> A = register_module("a", std::make_shared<Twice>());
    std::shared_ptr<Twice> B = register_module("b", std::make_shared<Twice>());
    Tensor forward(const Tensor &X) { return (*B)((*A)(X)); }
  } C;
  C.B->register_full_backward_hook(
      [](ModuleBase &, const std::vector<Tensor> &GradIn,
         const std::vector<Tensor> &) {
        return std::vector<Tensor>{GradIn[0] * 10.0};
      });
  std::vector<double> SeenByA;
  C.A->register_full_backward_hook(
      [&](ModuleBase &, const std::vector<Tensor> &,
          const std::vector<Tensor> &GradOut) { SeenByA = vals(GradOut[0]); });
  Tensor X = tensor({1.0, 1.0}, TensorOptions().requires_grad());
  C(X).sum().backward();
  EXPECT_EQ(SeenByA, (std::vector<double>{20, 20}));
  EXPECT_EQ(vals(X.grad()), (std::vector<double>{40, 40}));
  // A wrong count or shape is an error naming the module.
  Twice T;
  T.register_full_backward_hook(
      [](ModuleBase &, const std::vector<Tensor> &, const std::vector<Tensor> &) {
        return std::vector<Tensor>{ones({3}), ones({3})};
      });
  Tensor Z = tensor({1.0, 1.0}, TensorOptions().requires_grad());
  try {
    T(Z).sum().backward();
    ADD_FAILURE() << "expected an error";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("Twice returned 2 gradients; expected 1"),
              std::string::npos)
        << E.what();
  }
}

TEST(ModuleHooks, InputsWithoutGradAndNonTensorInputs) {
  // The first layer: the input needs no gradient, the parameters do.
  Lin L(2, 2);
  std::vector<Tensor> GIn, GOut;
  L.register_full_backward_hook([&](ModuleBase &, const std::vector<Tensor> &GI,
                                    const std::vector<Tensor> &GO) {
    GIn = GI;
    GOut = GO;
  });
  L(ones({1, 2})).sum().backward();
  ASSERT_EQ(GIn.size(), 1u);
  EXPECT_FALSE(GIn[0].defined());
  ASSERT_EQ(GOut.size(), 1u);
  EXPECT_EQ(vals(GOut[0]), (std::vector<double>{1, 1}));
  // A non-tensor argument gets an undefined slot.
  struct Scale : Module<Scale> {
    Tensor forward(const Tensor &X, double S) { return X * S; }
  } Sc;
  Sc.register_full_backward_hook([&](ModuleBase &, const std::vector<Tensor> &GI,
                                     const std::vector<Tensor> &) { GIn = GI; });
  Tensor X = tensor({1.0}, TensorOptions().requires_grad());
  Sc(X, 3.0).sum().backward();
  ASSERT_EQ(GIn.size(), 2u);
  EXPECT_EQ(vals(GIn[0]), std::vector<double>{3});
  EXPECT_FALSE(GIn[1].defined());
  // Under NoGradGuard no backward hook is wired (nothing to differentiate).
  NoGradGuard NoGrad;
  Tensor Y = Sc(X, 3.0);
  EXPECT_FALSE(Y.requires_grad());
}

TEST(ModuleHooks, BackwardPreHookReplacesGradOutput) {
  Twice T;
  T.register_full_backward_pre_hook(
      [](ModuleBase &, const std::vector<Tensor> &GradOut) {
        return std::vector<Tensor>{GradOut[0] * 5.0};
      });
  std::vector<double> SeenOut;
  T.register_full_backward_hook([&](ModuleBase &, const std::vector<Tensor> &,
                                    const std::vector<Tensor> &GO) {
    SeenOut = vals(GO[0]);
  });
  Tensor X = tensor({1.0}, TensorOptions().requires_grad());
  T(X).sum().backward();
  EXPECT_EQ(SeenOut, std::vector<double>{5});
  EXPECT_EQ(vals(X.grad()), std::vector<double>{10});
}

TEST(ModuleHooks, GlobalBackwardHookSeesEveryModule) {
  struct Chain : Module<Chain> {
    std::shared_ptr<Twice> A = register_module("a", std::make_shared<Twice>());
    std::shared_ptr<Lin> B = register_module("b", std::make_shared<Lin>(2, 2));
    Tensor forward(const Tensor &X) { return (*B)((*A)(X)); }
  } C;
  std::vector<std::string> Order;
  auto H = register_module_full_backward_hook(
      [&](ModuleBase &M, const std::vector<Tensor> &, const std::vector<Tensor> &) {
        Order.push_back(M.type_name());
      });
  Tensor X = ones({1, 2}, TensorOptions().requires_grad());
  C(X).sum().backward();
  H.remove();
  // Innermost last-run module first, the root last.
  EXPECT_EQ(Order, (std::vector<std::string>{"Lin", "Twice", "Chain"}));
  Order.clear();
  X.set_grad(Tensor());
  C(X).sum().backward();
  EXPECT_TRUE(Order.empty());
}

TEST(ModuleHooks, BackwardHookSemanticsMatchPyTorch) {
  // The same two-input, tuple-output module and loss in PyTorch; the hook
  // prints grad_input and grad_output, and replaces grad_input[0] by half.
  std::string Script = R"PY(
class TwoIn(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.tensor([1.0, 2.0, 3.0]))
    def forward(self, a, b, s):
        return a * self.w + b * s, a * b
m = TwoIn()
def fmt(t):
    return 'None' if t is None else ' '.join('%g' % v for v in t.tolist())
def hook(mod, gi, go):
    print('grad_input', len(gi), '|'.join(fmt(g) for g in gi))
    print('grad_output', len(go), '|'.join(fmt(g) for g in go))
    return (gi[0] * 0.5,) + tuple(gi[1:])
m.register_full_backward_hook(hook)
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = torch.tensor([4.0, 5.0, 6.0])
y0, y1 = m(a, b, 2.0)
((y0 * torch.tensor([1.0, 10.0, 100.0])).sum() + (y1 * torch.tensor([2.0, 3.0, 4.0])).sum()).backward()
print('a.grad', fmt(a.grad))
print('w.grad', fmt(m.w.grad))
)PY";
  std::string Why;
  std::optional<std::string> Torch = runTorch(Script, Why);
  if (!Torch)
    GTEST_SKIP() << "SKIPPED: no Python with torch: " << Why;
  ASSERT_EQ(Torch->rfind("SCRIPT-FAILED", 0), std::string::npos) << *Torch;

  struct TwoInS : Module<TwoInS> {
    Tensor w = register_parameter("w", tensor({1.0, 2.0, 3.0}));
    std::tuple<Tensor, Tensor> forward(const Tensor &A, const Tensor &B,
                                       double S) {
      return {A * w + B * S, A * B};
    }
  } M;
  auto Fmt = [](const Tensor &T) {
    if (!T.defined())
      return std::string("None");
    std::ostringstream OS;
    bool First = true;
    for (double V : T.to_vector<double>()) {
      OS << (First ? "" : " ") << V;
      First = false;
    }
    return OS.str();
  };
  std::ostringstream Out;
  M.register_full_backward_hook([&](ModuleBase &, const std::vector<Tensor> &GI,
                                    const std::vector<Tensor> &GO) {
    auto Join = [&](const std::vector<Tensor> &V) {
      std::string S;
      for (size_t I = 0; I < V.size(); ++I)
        S += (I ? "|" : "") + Fmt(V[I]);
      return S;
    };
    Out << "grad_input " << GI.size() << " " << Join(GI) << "\n";
    Out << "grad_output " << GO.size() << " " << Join(GO) << "\n";
    std::vector<Tensor> R = GI;
    R[0] = GI[0] * 0.5;
    return R;
  });
  Tensor A = tensor({1.0, 2.0, 3.0}, TensorOptions().requires_grad());
  Tensor B = tensor({4.0, 5.0, 6.0});
  auto [Y0, Y1] = M(A, B, 2.0);
  ((Y0 * tensor({1.0, 10.0, 100.0})).sum() +
   (Y1 * tensor({2.0, 3.0, 4.0})).sum())
      .backward();
  Out << "a.grad " << Fmt(A.grad()) << "\n";
  Out << "w.grad " << Fmt(M.w.grad()) << "\n";
  EXPECT_EQ(lines(Out.str()), lines(*Torch));
}
