//===- LayerConvTest.cpp - Conv1d, Conv2d, ConvTranspose2d ----------------===//
//
// Parameter shapes and state_dict keys, extra_repr strings (PyTorch 1.13's
// for the same constructor calls), forward on known values (reference
// numbers from PyTorch: strides, padding incl. "same" with an even kernel,
// dilation, groups, output_size), unbatched inputs, gradients, and the
// errors.
//
//===----------------------------------------------------------------------===//

#include "LayerTestUtils.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/nn/Conv.h"

using namespace nng;
using namespace nng::test;

TEST(LayerConvTest, ParametersMatchPyTorch) {
  nn::Conv1d C1(16, 33, 3, 2);
  EXPECT_EQ(
      stateSignature(C1),
      (std::vector<std::string>{"weight [33, 16, 3] f32", "bias [33] f32"}));
  nn::Conv2d C2(4, 8, {3, 5}, {2, 1}, {4, 2}, {3, 1}, 2, false);
  EXPECT_EQ(stateSignature(C2),
            (std::vector<std::string>{"weight [8, 2, 3, 5] f32"}));
  nn::ConvTranspose2d T(16, 33, 3, 2, 1, 1);
  EXPECT_EQ(
      stateSignature(T),
      (std::vector<std::string>{"weight [16, 33, 3, 3] f32", "bias [33] f32"}));
  nn::ConvTranspose2d TG(4, 6, 3, 1, 0, 0, 2);
  EXPECT_EQ(TG.weight.sizes(), (std::vector<int64_t>{4, 3, 3, 3}));
}

TEST(LayerConvTest, ReprMatchesPyTorch) {
  EXPECT_EQ(nn::Conv1d(16, 33, 3, 2).to_string(),
            "Conv1d(16, 33, kernel_size=(3,), stride=(2,))");
  EXPECT_EQ(nn::Conv2d(1, 32, 3).to_string(),
            "Conv2d(1, 32, kernel_size=(3, 3), stride=(1, 1))");
  EXPECT_EQ(
      nn::Conv2d(4, 8, {3, 5}, {2, 1}, {4, 2}, {3, 1}, 2, false).extra_repr(),
      "4, 8, kernel_size=(3, 5), stride=(2, 1), padding=(4, 2), "
      "dilation=(3, 1), groups=2, bias=False");
  EXPECT_EQ(nn::Conv2d(2, 4, 4, 1, "same").extra_repr(),
            "2, 4, kernel_size=(4, 4), stride=(1, 1), padding=same");
  EXPECT_EQ(nn::Conv2d(2, 4, 3, 1, "valid").extra_repr(),
            "2, 4, kernel_size=(3, 3), stride=(1, 1), padding=valid");
  EXPECT_EQ(nn::ConvTranspose2d(16, 33, 3, 2, 1, 1).extra_repr(),
            "16, 33, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), "
            "output_padding=(1, 1)");
}

TEST(LayerConvTest, OptionsStructGivesTheSameLayer) {
  nn::Conv2d C({.in_channels = 2,
                .out_channels = 4,
                .kernel_size = {3, 3},
                .padding = 1,
                .groups = 2,
                .bias = false});
  EXPECT_EQ(C.extra_repr(), "2, 4, kernel_size=(3, 3), stride=(1, 1), "
                            "padding=(1, 1), groups=2, bias=False");
  nn::ConvTranspose2d T(
      {.in_channels = 2, .out_channels = 2, .kernel_size = 2, .stride = 2});
  EXPECT_EQ(T.extra_repr(), "2, 2, kernel_size=(2, 2), stride=(2, 2)");
  EXPECT_THROW(nn::Conv2d({.in_channels = 2, .kernel_size = 3}), Error);
}

TEST(LayerConvTest, DefaultInitBounds) {
  manual_seed(1);
  nn::Conv2d C(4, 16, 3); // fan_in 36
  double Bound = 1.0 / 6.0;
  for (const Tensor &P : {C.weight, C.bias})
    for (double V : P.to_vector<double>())
      EXPECT_LE(std::abs(V), Bound);
  // ConvTranspose2d: fan_in = weight.size(1) * k * k = (out/groups) * 9.
  nn::ConvTranspose2d T(2, 4, 3);
  for (double V : T.bias.to_vector<double>())
    EXPECT_LE(std::abs(V), 1.0 / 6.0);
}

TEST(LayerConvTest, Conv1dForwardMatchesPyTorch) {
  auto C = nn::make<nn::Conv1d>(2, 3, 3, 2, 1);
  fillParams(*C);
  expectValues((*C)(seq({1, 2, 7}, 0.0)), {1, 3, 4},
               {1.28132308, 1.16646481, 0.159110546, -0.204947829, -0.381213844,
                -0.16296196, 0.766598225, 1.05281377, -0.371128976,
                -0.470271289, -0.374370933, -0.290953159});
}

TEST(LayerConvTest, Conv2dForwardMatchesPyTorch) {
  // Stride, padding, dilation and groups together.
  auto C =
      nn::make<nn::Conv2d>(4, 4, nn::IntOrTuple{3, 2}, nn::IntOrTuple{2, 1},
                           nn::ConvPadding{1, 0}, nn::IntOrTuple{1, 2}, 2);
  fillParams(*C);
  Tensor Y = (*C)(seq({1, 4, 5, 5}, 0.0));
  expectValues(Y, {1, 4, 3, 3},
               {1.21419895,   1.3063755,    0.997971535,  0.37345919,
                0.347351253,  0.371706963,  0.604655087,  1.15806782,
                1.38065171,   -0.704046369, -0.272443652, 0.38779521,
                0.207842112,  0.272069842,  0.308840692,  -0.520223379,
                -0.478488207, -0.111210898, 0.0262251049, 0.490653992,
                0.664228141,  -0.193285093, -0.135664627, -0.0743314177,
                -0.380079269, 0.257312059,  0.713593006,  -1.25500011,
                -1.12788618,  -0.662734032, -0.304605991, -0.314617902,
                -0.369084448, -0.897298515, -1.29866648,  -1.28167558});
  // Unbatched input: the same numbers without the batch axis.
  Tensor U = (*C)(seq({1, 4, 5, 5}, 0.0).squeeze(0));
  EXPECT_EQ(U.sizes(), (std::vector<int64_t>{4, 3, 3}));
  EXPECT_TRUE(allclose(U, Y.squeeze(0)));
}

TEST(LayerConvTest, SamePaddingWithEvenKernelMatchesPyTorch) {
  // Kernel 4 in H: total padding 3, one more zero row at the bottom.
  auto C = nn::make<nn::Conv2d>(nn::Conv2dOptions{.in_channels = 2,
                                                  .out_channels = 2,
                                                  .kernel_size = {4, 3},
                                                  .padding = "same",
                                                  .bias = false});
  fillParams(*C);
  expectValues(
      (*C)(seq({1, 2, 4, 5}, 0.0)), {1, 2, 4, 5},
      {-0.857649088,  -0.591662645, 0.777226508,  1.78057396,   1.56105113,
       0.0352826603,  0.135969132,  -0.219360918, -0.471522331, -0.543611169,
       -0.911542594,  -1.46824622,  -0.774564803, 0.283406615,  0.821026802,
       1.12185383,    2.11451554,   1.67555332,   0.448551893,  -0.542534471,
       0.607371151,   1.57425284,   1.28156734,   0.386140764,  -0.555695772,
       -0.0452041402, -0.514386058, -0.776816249, -0.673897505, -0.268626958,
       0.335683197,   1.55735219,   2.17135072,   1.76412857,   0.579105616,
       -0.0248536281, -1.34282231,  -2.3102057,   -2.1910634,   -0.887497127});
  auto V = nn::make<nn::Conv2d>(2, 2, 3, 1, "valid");
  EXPECT_EQ((*V)(zeros({1, 2, 5, 6})).sizes(),
            (std::vector<int64_t>{1, 2, 3, 4}));
}

TEST(LayerConvTest, ConvTranspose2dForwardMatchesPyTorch) {
  auto T = nn::make<nn::ConvTranspose2d>(2, 4, 3, 2, 1, 0, 2);
  fillParams(*T);
  Tensor X = seq({1, 2, 2, 3}, 0.0);
  Tensor Y = (*T)(X);
  ASSERT_EQ(Y.sizes(), (std::vector<int64_t>{1, 4, 3, 5}));
  std::vector<double> Head = {0.454648703, 0.468042195, 0.257563889,
                              0.160265416, 0.153171092, 0.882655859};
  std::vector<double> Got = Y.to_vector<double>();
  for (size_t I = 0; I < Head.size(); ++I)
    EXPECT_NEAR(Got[I], Head[I], 1e-5);
  EXPECT_NEAR(Got.back(), -0.730768681, 1e-5);
  // output_size picks output_padding (1, 1) here.
  Tensor Z = (*T)(X, std::vector<int64_t>{4, 6});
  ASSERT_EQ(Z.sizes(), (std::vector<int64_t>{1, 4, 4, 6}));
  std::vector<double> ZV = Z.to_vector<double>();
  EXPECT_NEAR(ZV[5], -0.027004689, 1e-5);
  EXPECT_NEAR(ZV[23], 0.40000695, 1e-5);
  EXPECT_NEAR(ZV.back(), -0.231733531, 1e-5);
  expectError(
      [&] {
        (*T)(X, std::vector<int64_t>{7, 6});
      },
      {"ConvTranspose2d", "valid sizes range from (3, 5) to (4, 6)"});
}

TEST(LayerConvTest, Gradients) {
  auto C = nn::make<nn::Conv2d>(2, 4, 3, 2, 1, 1, 2);
  C->to(DType::F64);
  Tensor X = seq({1, 2, 4, 4}, 0.2, 1.0, DType::F64);
  checkInputGradients(
      [&](const std::vector<Tensor> &In) { return (*C)(In[0]); },
      {X.clone().requires_grad_()});
  checkParameterGradients(
      *C, [&] { return (*C)(X); }, 8);

  auto S = nn::make<nn::Conv1d>(2, 2, 4, 1, "same");
  S->to(DType::F64);
  Tensor X1 = seq({1, 2, 5}, 0.4, 1.0, DType::F64);
  checkInputGradients(
      [&](const std::vector<Tensor> &In) { return (*S)(In[0]); },
      {X1.clone().requires_grad_()});

  auto T = nn::make<nn::ConvTranspose2d>(2, 2, 3, 2, 1, 1);
  T->to(DType::F64);
  Tensor X2 = seq({1, 2, 2, 2}, 0.1, 1.0, DType::F64);
  checkInputGradients(
      [&](const std::vector<Tensor> &In) { return (*T)(In[0]); },
      {X2.clone().requires_grad_()});
  checkParameterGradients(
      *T, [&] { return (*T)(X2); }, 8);
}

TEST(LayerConvTest, ConstructionErrors) {
  expectError([] { nn::Conv2d(3, 4, 3, 1, 0, 1, 2); },
              {"Conv2d", "in_channels (3) must be divisible by groups (2)"});
  expectError([] { nn::Conv2d(4, 6, 3, 1, 0, 1, 4); },
              {"out_channels (6) must be divisible by groups (4)"});
  expectError([] { nn::Conv2d(1, 1, 3, 1, 0, 1, 0); },
              {"groups must be a positive integer"});
  expectError([] { nn::Conv2d(1, 1, 3, 2, "same"); },
              {"padding='same' is not supported for strided convolutions"});
  expectError([] { nn::Conv2d(1, 1, 3, 1, "full"); },
              {"invalid padding string 'full'"});
  expectError([] { nn::Conv2d(1, 1, 3, 1, 1, 1, 1, true, "reflect"); },
              {"padding_mode='reflect'", "not supported"});
  expectError([] { nn::Conv2d(1, 1, 3, 1, 1, 1, 1, true, "mirror"); },
              {"padding_mode must be one of"});
  expectError(
      [] { nn::ConvTranspose2d(1, 1, 3, 1, 0, 0, 1, true, 1, "circular"); },
      {"ConvTranspose2d", "zeros"});
  expectError(
      [] {
        nn::Conv2d(1, 1, nn::IntOrTuple{3, 3, 3});
      },
      {"Conv2d kernel_size", "(3, 3, 3)"});
}

TEST(LayerConvTest, InputErrorsNameLayerAndShapes) {
  auto C = nn::make<nn::Conv2d>(3, 8, 3);
  expectError(
      [&] {
        (*C)(zeros({1, 4, 5, 5}));
      },
      {"Conv2d", "3 channels", "[1, 4, 5, 5]", "[8, 3, 3, 3]"});
  expectError(
      [&] {
        (*C)(zeros({5, 5}));
      },
      {"Conv2d", "3D (unbatched) or 4D (batched)", "[5, 5]"});
  auto C1 = nn::make<nn::Conv1d>(2, 2, 3);
  expectError([&] { (*C1)(zeros({1, 2, 3, 3})); }, {"Conv1d", "[1, 2, 3, 3]"});
}
