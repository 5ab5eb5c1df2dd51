//===- ModulePrintingTest.cpp - Printing the module tree like PyTorch ----===//
//
// operator<< / to_string() of a module tree: one-line extra_repr, multi-
// line extra_repr, nested containers, a reserved (None) child, parameter
// containers, and num_parameters. The expected text is PyTorch 1.13's repr
// of the same tree, held here and, when a Python with torch is available,
// also produced by it at test time.
//
//===----------------------------------------------------------------------===//

#include "ModuleTestUtils.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace nng;
using namespace nng::nn;
using namespace nng::nn::testing;

namespace {

struct Multi : Module<Multi> {
  Tensor forward(const Tensor &X) { return X; }
  std::string extra_repr() const override { return "a=1\nb=2"; }
};

struct Net : Module<Net> {
  Net() {
    register_module("stem", std::make_shared<Lin>(4, 8));
    register_module("body", std::make_shared<Sequential>(
                                std::make_shared<Lin>(8, 8),
                                std::make_shared<Act>(),
                                std::make_shared<Sequential>(
                                    std::make_shared<Lin>(8, 8, false))));
    register_module("heads",
                    std::make_shared<ModuleList>(std::make_shared<Lin>(8, 2),
                                                 std::make_shared<Multi>()));
    register_module("named",
                    std::make_shared<ModuleDict>(
                        NamedModules{{"x", std::make_shared<Act>()}}));
    register_module("empty", std::shared_ptr<Act>());
    register_module("plist", std::make_shared<ParameterList>(std::vector<Tensor>{
                                 zeros({3, 4}), zeros({5}, DType::F64)}));
    register_module("pdict", std::make_shared<ParameterDict>(
                                 NamedTensors{{"alpha", zeros({2})}}));
  }
  Tensor forward(const Tensor &X) { return X; }
};

/// The same modules in PyTorch (Lin's extra_repr copied from Linear's).
const char *Script = R"PY(
class Lin(nn.Module):
    def __init__(self, i, o, bias=True):
        super().__init__()
        self.i, self.o = i, o
        self.weight = nn.Parameter(torch.zeros(o, i))
        self.register_parameter('bias', nn.Parameter(torch.zeros(o)) if bias else None)
    def extra_repr(self):
        return 'in_features=%d, out_features=%d, bias=%s' % (self.i, self.o, self.bias is not None)
class Act(nn.Module):
    pass
class Multi(nn.Module):
    def extra_repr(self):
        return 'a=1\nb=2'
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = Lin(4, 8)
        self.body = nn.Sequential(Lin(8, 8), Act(), nn.Sequential(Lin(8, 8, False)))
        self.heads = nn.ModuleList([Lin(8, 2), Multi()])
        self.named = nn.ModuleDict({'x': Act()})
        self.register_module('empty', None)
        self.plist = nn.ParameterList([nn.Parameter(torch.zeros(3, 4)), nn.Parameter(torch.zeros(5, dtype=torch.float64))])
        self.pdict = nn.ParameterDict({'alpha': nn.Parameter(torch.zeros(2))})
print(repr(Net()))
print(repr(Lin(1, 2)))
print(repr(Act()))
print(repr(Multi()))
)PY";

const char *Expected =
      "Net(\n"
      "  (stem): Lin(in_features=4, out_features=8, bias=True)\n"
      "  (body): Sequential(\n"
      "    (0): Lin(in_features=8, out_features=8, bias=True)\n"
      "    (1): Act()\n"
      "    (2): Sequential(\n"
      "      (0): Lin(in_features=8, out_features=8, bias=False)\n"
      "    )\n"
      "  )\n"
      "  (heads): ModuleList(\n"
      "    (0): Lin(in_features=8, out_features=2, bias=True)\n"
      "    (1): Multi(\n"
      "      a=1\n"
      "      b=2\n"
      "    )\n"
      "  )\n"
      "  (named): ModuleDict(\n"
      "    (x): Act()\n"
      "  )\n"
      "  (empty): None\n"
      "  (plist): ParameterList(\n"
      "      (0): Parameter containing: [torch.float32 of size 3x4]\n"
      "      (1): Parameter containing: [torch.float64 of size 5]\n"
      "  )\n"
      "  (pdict): ParameterDict(  (alpha): Parameter containing: [torch.FloatTensor of size 2])\n"
      ")\n"
      "Lin(in_features=1, out_features=2, bias=True)\n"
      "Act()\n"
      "Multi(\n"
      "  a=1\n"
      "  b=2\n"
      ")\n";

} // namespace

TEST(ModulePrinting, TreeMatchesPyTorchRepr) {
  Net N;
  std::ostringstream OS;
  OS << N << "\n"
     << Lin(1, 2) << "\n"
     << Act() << "\n"
     << Multi() << "\n";
  EXPECT_EQ(OS.str(), Expected);
  EXPECT_EQ(std::string(Expected).rfind(N.to_string() + "\nLin(", 0), 0u);
  std::string Why;
  std::optional<std::string> Torch = runTorch(Script, Why);
  if (!Torch)
    GTEST_SKIP() << "SKIPPED: no Python with torch (the fixed expectation "
                    "was checked): "
                 << Why;
  ASSERT_EQ(Torch->rfind("SCRIPT-FAILED", 0), std::string::npos) << *Torch;
  EXPECT_EQ(lines(OS.str()), lines(*Torch));
}

TEST(ModulePrinting, ParameterCounts) {
  Net N;
  // stem 4*8+8, body 8*8+8 + 8*8, heads 8*2+2, plist 12+5, pdict 2.
  EXPECT_EQ(N.num_parameters(), 40 + 72 + 64 + 18 + 17 + 2);
  N.get_submodule("body")->requires_grad_(false);
  EXPECT_EQ(N.num_parameters(/*OnlyTrainable=*/true), 40 + 18 + 17 + 2);
}
