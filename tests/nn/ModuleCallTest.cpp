//===- ModuleCallTest.cpp - operator(), forward signatures and Values -----===//
//
// Calling modules: several tensor inputs, default arguments, non-tensor
// arguments, tuple / pair / vector / map / void results, through the direct
// path (no hooks) and through Values (a hook installed), untyped calls on
// ModuleBase, arity errors, errors that name the module path, and nn::Value
// itself (conversions, printing, tensor flattening).
//
//===----------------------------------------------------------------------===//

#include "ModuleTestUtils.h"

#include "nngraph/frontend/Dispatch.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

using namespace nng;
using namespace nng::nn;
using namespace nng::nn::testing;

namespace {

struct Axpy : Module<Axpy> {
  Tensor forward(const Tensor &X, const Tensor &Y, double Alpha = 2.0) {
    return X * Alpha + Y;
  }
};

struct Split : Module<Split> {
  std::tuple<Tensor, Tensor> forward(const Tensor &X) {
    return {X + 1.0, X * 3.0};
  }
};

struct Pieces : Module<Pieces> {
  std::vector<Tensor> forward(const Tensor &X, int64_t N) {
    std::vector<Tensor> R;
    for (int64_t I = 0; I < N; ++I)
      R.push_back(X * static_cast<double>(I));
    return R;
  }
};

struct Named : Module<Named> {
  std::map<std::string, Tensor> forward(const Tensor &X, const std::string &Key,
                                        bool Negate) {
    return {{Key, Negate ? -X : X}, {"twice", X * 2.0}};
  }
};

struct Pair : Module<Pair> {
  std::pair<Tensor, int64_t> forward(const std::vector<Tensor> &Xs) {
    return {Xs[0] + Xs[1], static_cast<int64_t>(Xs.size())};
  }
};

struct MaybeMask : Module<MaybeMask> {
  Tensor forward(const Tensor &X, const Tensor &Mask = Tensor(),
                 std::optional<double> Fill = std::nullopt) {
    if (!Mask.defined())
      return X;
    return masked_fill(X, Mask, Fill.value_or(0.0));
  }
};

struct Counter : Module<Counter> {
  int Calls = 0;
  void forward() { ++Calls; }
};

/// Installs a no-op forward hook so calls go through Values.
RemovableHandle viaValues(ModuleBase &M) {
  return M.register_forward_hook(
      [](ModuleBase &, const std::vector<Value> &, const Value &) {});
}

std::vector<double> vals(const Tensor &T) { return T.to_vector<double>(); }

} // namespace

TEST(ModuleCall, SeveralTensorInputsAndDefaultArguments) {
  Axpy M;
  Tensor X = tensor({1.0, 2.0}), Y = tensor({10.0, 20.0});
  for (int Pass = 0; Pass < 2; ++Pass) {
    SCOPED_TRACE(Pass ? "through Values" : "direct");
    RemovableHandle H;
    if (Pass)
      H = viaValues(M);
    EXPECT_EQ(vals(M(X, Y)), (std::vector<double>{12, 24}));
    EXPECT_EQ(vals(M(X, Y, 3.0)), (std::vector<double>{13, 26}));
    EXPECT_EQ(vals(M(X, Y, 1)), (std::vector<double>{11, 22})); // int -> double
    H.remove();
  }
}

TEST(ModuleCall, TupleVectorMapAndPairResults) {
  Tensor X = tensor({1.0, 2.0});
  Split S;
  Pieces P;
  Named N;
  Pair Pr;
  for (int Pass = 0; Pass < 2; ++Pass) {
    SCOPED_TRACE(Pass ? "through Values" : "direct");
    std::vector<RemovableHandle> Hs;
    if (Pass)
      for (ModuleBase *M : std::vector<ModuleBase *>{&S, &P, &N, &Pr})
        Hs.push_back(viaValues(*M));
    auto [A, B] = S(X);
    EXPECT_EQ(vals(A), (std::vector<double>{2, 3}));
    EXPECT_EQ(vals(B), (std::vector<double>{3, 6}));
    std::vector<Tensor> Ps = P(X, 3);
    ASSERT_EQ(Ps.size(), 3u);
    EXPECT_EQ(vals(Ps[2]), (std::vector<double>{2, 4}));
    std::map<std::string, Tensor> Ns = N(X, std::string("neg"), true);
    EXPECT_EQ(vals(Ns.at("neg")), (std::vector<double>{-1, -2}));
    EXPECT_EQ(vals(Ns.at("twice")), (std::vector<double>{2, 4}));
    auto [Sum, Count] = Pr(std::vector<Tensor>{X, X});
    EXPECT_EQ(vals(Sum), (std::vector<double>{2, 4}));
    EXPECT_EQ(Count, 2);
    for (auto &H : Hs)
      H.remove();
  }
}

TEST(ModuleCall, OptionalArgumentsAndVoidForward) {
  MaybeMask M;
  Tensor X = tensor({1.0, 2.0, 3.0});
  Tensor Mask = tensor({0.0, 1.0, 0.0}) > 0.5;
  auto H = viaValues(M);
  EXPECT_EQ(vals(M(X)), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(vals(M(X, Mask)), (std::vector<double>{1, 0, 3}));
  EXPECT_EQ(vals(M(X, Mask, 7.5)), (std::vector<double>{1, 7.5, 3}));
  EXPECT_EQ(vals(M(X, Tensor(), std::nullopt)), (std::vector<double>{1, 2, 3}));
  Counter C;
  C();
  auto HC = viaValues(C);
  C();
  EXPECT_EQ(C.Calls, 2);
}

TEST(ModuleCall, UntypedCallsAndForwardValues) {
  auto L = std::make_shared<Lin>(2, 3);
  ModuleBase &Base = *L;
  Value V = Base(ones({1, 2}));
  ASSERT_TRUE(V.isTensor());
  Tensor T = V; // Implicit conversion.
  EXPECT_TRUE(allclose(T, (*L)(ones({1, 2}))));
  Value Direct = L->forwardValues({Value(ones({1, 2}))});
  EXPECT_TRUE(allclose(Direct.toTensor(), T));
  try {
    Base(ones({1, 2}), ones({1, 2}));
    ADD_FAILURE() << "expected an arity error";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("Lin.forward takes 1 argument(s)"),
              std::string::npos)
        << E.what();
  }
  ModuleList List;
  try {
    List.call({Value(ones({1}))});
    ADD_FAILURE() << "ModuleList must not be callable";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("ModuleList has no forward()"),
              std::string::npos)
        << E.what();
  }
  try {
    Base(std::string("not a tensor"));
    ADD_FAILURE() << "expected a conversion error";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("expected a Tensor value but got str"),
              std::string::npos)
        << E.what();
  }
}

TEST(ModuleCall, ErrorsNameTheModulePath) {
  struct Block : Module<Block> {
    std::shared_ptr<Lin> Fc = register_module("fc", std::make_shared<Lin>(4, 2));
    Tensor forward(const Tensor &X) { return (*Fc)(X); }
  };
  struct Net : Module<Net> {
    std::shared_ptr<Block> B = register_module("block", std::make_shared<Block>());
    Tensor forward(const Tensor &X) { return (*B)(X); }
  } N;
  for (int Pass = 0; Pass < 2; ++Pass) {
    SCOPED_TRACE(Pass ? "through Values" : "direct");
    RemovableHandle H;
    if (Pass)
      H = viaValues(*N.B->Fc);
    try {
      N(ones({1, 3})); // Fc expects 4 features.
      ADD_FAILURE() << "expected a shape error";
    } catch (const Error &E) {
      std::string W = E.what();
      EXPECT_NE(W.find("in module block.fc (Lin)"), std::string::npos) << W;
      EXPECT_NE(W.find("in module block (Block)"), std::string::npos) << W;
      EXPECT_NE(W.find("in module <root> (Net)"), std::string::npos) << W;
      // Each level once.
      EXPECT_EQ(W.find("in module block.fc (Lin)"),
                W.rfind("in module block.fc (Lin)"))
          << W;
    }
    H.remove();
  }
  EXPECT_TRUE(dispatch::moduleScopes().empty());
}

TEST(ModuleValue, ConversionsRoundTrip) {
  Tensor T = ones({2});
  EXPECT_TRUE(toValue(T).toTensor().is_same(T));
  EXPECT_TRUE(Value(Tensor()).isNone());
  EXPECT_FALSE(fromValue<Tensor>(Value()).defined());
  EXPECT_EQ(fromValue<int>(toValue(7)), 7);
  EXPECT_EQ(fromValue<double>(toValue(7)), 7.0);
  EXPECT_EQ(fromValue<int64_t>(Value(3.0)), 3);
  EXPECT_TRUE(fromValue<bool>(toValue(true)));
  EXPECT_EQ(fromValue<std::string>(toValue("abc")), "abc");
  EXPECT_EQ(fromValue<std::vector<int64_t>>(toValue(std::vector<int64_t>{1, 2})),
            (std::vector<int64_t>{1, 2}));
  auto Tup = fromValue<std::tuple<int, std::string, double>>(
      toValue(std::make_tuple(1, std::string("x"), 2.5)));
  EXPECT_EQ(Tup, std::make_tuple(1, std::string("x"), 2.5));
  EXPECT_EQ(fromValue<std::optional<int>>(Value()), std::nullopt);
  EXPECT_EQ(fromValue<std::optional<int>>(Value(4)), 4);
  std::map<std::string, int> M{{"b", 2}, {"a", 1}};
  EXPECT_EQ(fromValue<decltype(M)>(toValue(M)), M);
  EXPECT_THROW(fromValue<int64_t>(Value(2.5)), Error);
  EXPECT_THROW(fromValue<std::string>(Value(1)), Error);
  EXPECT_THROW((fromValue<std::pair<int, int>>(Value::tuple({1, 2, 3}))),
               Error);
}

TEST(ModuleValue, PrintingAndTensorFlattening) {
  Value V = Value::tuple(
      {Value(ones({2, 3})), Value(1), Value(2.5), Value(true), Value("s"),
       Value(), Value::list({Value(zeros({1}))}),
       Value::dict({{"k", Value(ones({4}, DType::F64))}})});
  EXPECT_EQ(V.toString(),
            "(Tensor(shape=[2, 3], dtype=f32), 1, 2.5, True, 's', None, "
            "[Tensor(shape=[1], dtype=f32)], {'k': Tensor(shape=[4], "
            "dtype=f64)})");
  EXPECT_EQ(Value::tuple({Value(1)}).toString(), "(1,)");
  std::vector<Tensor> Ts = V.tensors();
  ASSERT_EQ(Ts.size(), 3u);
  EXPECT_EQ(Ts[2].dtype(), DType::F64);
  Value Doubled = V.mapTensors([](const Tensor &T) { return T * 2.0; });
  EXPECT_EQ(Doubled.elements()[0].toTensor().to_vector<double>()[0], 2.0);
  EXPECT_EQ(Doubled.elements()[1].toInt(), 1);
  EXPECT_EQ(Doubled.elements()[7].at("k").toTensor().dtype(), DType::F64);
  EXPECT_TRUE(Doubled.elements()[7].contains("k"));
  EXPECT_THROW(Doubled.elements()[7].at("missing"), Error);
  EXPECT_THROW(Value::dict({{"a", Value(1)}, {"a", Value(2)}}), Error);
}
