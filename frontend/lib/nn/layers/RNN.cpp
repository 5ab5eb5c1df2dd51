//===- RNN.cpp - RNN, LSTM and GRU layers ---------------------------------===//
//
// Parameter registration in PyTorch's order and names, argument checks
// with PyTorch's messages' substance, and the recurrence on eager ops: per
// layer and direction the input projection of every step at once
// (linear over [seq, batch, features]), then one step at a time the
// hidden projection and the cell's gates. Under a dispatch mode (the fx
// tracer) each layer is one ONNX RNN/LSTM/GRU node instead (both
// directions in one), its W, R and B built from the parameters by ops the
// optimizer folds: gates reordered to ONNX's (LSTM i,o,f,c; GRU z,r,h with
// linear_before_reset=1, which is PyTorch's formula). LSTM's projection has
// no ONNX form: with proj_size the trace records the unrolled steps.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/nn/RNN.h"
#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Init.h"
#include "nngraph/frontend/nn/LayerArgs.h"

#include <cmath>

namespace nng::nn {
namespace detail {

int64_t RNNConfig::gateSize() const {
  switch (K) {
  case Lstm:
    return 4 * HiddenSize;
  case Gru:
    return 3 * HiddenSize;
  default:
    return HiddenSize;
  }
}

namespace {

/// The parameters of one layer and direction.
struct CellWeights {
  Tensor Wih, Whh, Bih, Bhh, Whr;
};

std::string suffix(int64_t Layer, int64_t Dir) {
  return "_l" + std::to_string(Layer) + (Dir ? "_reverse" : "");
}

/// The module's current parameters per (layer, direction), in order
/// (looked up at each call, so to() and load_state_dict(assign) count).
std::vector<CellWeights> cellWeights(const ModuleBase &M, const RNNConfig &C) {
  std::vector<std::pair<std::string, Tensor>> Named =
      M.named_parameters("", /*Recurse=*/false);
  std::vector<CellWeights> W;
  size_t I = 0;
  auto Next = [&]() -> Tensor { return I < Named.size() ? Named[I++].second : Tensor(); };
  for (int64_t L = 0; L < C.O.num_layers; ++L)
    for (int64_t D = 0; D < C.numDirections(); ++D) {
      CellWeights Cw;
      Cw.Wih = Next();
      Cw.Whh = Next();
      if (C.O.bias) {
        Cw.Bih = Next();
        Cw.Bhh = Next();
      }
      if (C.O.proj_size > 0)
        Cw.Whr = Next();
      W.push_back(Cw);
    }
  return W;
}

/// One step of the cell: X is the step's input projection (with b_ih),
/// H and Cell the state (Cell: LSTM only); updates both.
void cellStep(const RNNConfig &C, const CellWeights &W, const Tensor &X,
              Tensor &H, Tensor &Cell) {
  Tensor Hw = F::linear(H, W.Whh, W.Bhh);
  switch (C.K) {
  case RNNConfig::RnnTanh:
    H = F::tanh(X + Hw);
    return;
  case RNNConfig::RnnRelu:
    H = F::relu(X + Hw);
    return;
  case RNNConfig::Lstm: {
    std::vector<Tensor> G = chunk(X + Hw, 4, 1);
    Tensor In = F::sigmoid(G[0]), Forget = F::sigmoid(G[1]);
    Tensor Candidate = F::tanh(G[2]), Out = F::sigmoid(G[3]);
    Cell = Forget * Cell + In * Candidate;
    H = Out * F::tanh(Cell);
    if (W.Whr.defined())
      H = F::linear(H, W.Whr);
    return;
  }
  case RNNConfig::Gru: {
    std::vector<Tensor> Gx = chunk(X, 3, 1), Gh = chunk(Hw, 3, 1);
    Tensor Reset = F::sigmoid(Gx[0] + Gh[0]);
    Tensor Update = F::sigmoid(Gx[1] + Gh[1]);
    Tensor New = F::tanh(Gx[2] + Reset * Gh[2]);
    H = (1.0 - Update) * New + Update * H;
    return;
  }
  }
}

/// An initial state: Given ([layers * directions, batch, Size], or without
/// the batch axis for an unbatched input), else zeros, or (Absent: the
/// ONNX node's default) undefined. Checked on the extents a trace runs
/// with, so symbolic batch sizes stay symbolic.
Tensor initialState(const Tensor &Given, const RNNConfig &C, SymInt Batch,
                    int64_t Size, bool Batched, bool Absent,
                    const Tensor &Input, const std::string &Type,
                    const char *What) {
  int64_t Layers = C.O.num_layers * C.numDirections();
  if (!Given.defined())
    return Absent ? Tensor()
                  : zeros({Layers, Batch.expect_int(), Size},
                          TensorOptions(Input.dtype()));
  Tensor S = Batched ? Given : Given.unsqueeze(1);
  if (S.dim() != 3 || S.size(0).example() != Layers ||
      S.size(1).example() != Batch.example() || S.size(2).example() != Size)
    fail(ErrorKind::ShapeMismatch, Type, ": ", What, " has shape ",
         Given.shape().toString(), ", expected [", Layers,
         Batched ? ", " + std::to_string(Batch.example()) : std::string(),
         ", ", Size, "] (num_layers * num_directions",
         Batched ? ", batch" : "", ", size) for an input of shape ",
         Input.shape().toString());
  return S;
}

/// W (or R, or one half of B) of a direction in ONNX's gate order.
Tensor onnxGates(const RNNConfig &C, const Tensor &T) {
  if (C.K == RNNConfig::Lstm) {
    std::vector<Tensor> G = chunk(T, 4, 0); // i, f, g, o
    return cat({G[0], G[3], G[1], G[2]}, 0);
  }
  if (C.K == RNNConfig::Gru) {
    std::vector<Tensor> G = chunk(T, 3, 0); // r, z, n
    return cat({G[1], G[0], G[2]}, 0);
  }
  return T;
}

/// One layer as one ONNX node: X [seq, batch, features], H and Cell the
/// layer's initial states [directions, batch, size]. Returns the output
/// [seq, batch, directions * hidden] and the final states.
std::tuple<Tensor, Tensor, Tensor>
onnxLayer(const RNNConfig &C, const std::vector<CellWeights> &W, int64_t L,
          const Tensor &X, const Tensor &H, const Tensor &Cell) {
  int64_t Dirs = C.numDirections();
  std::vector<Tensor> Ws, Rs, Bs;
  for (int64_t D = 0; D < Dirs; ++D) {
    const CellWeights &Cw = W[L * Dirs + D];
    Ws.push_back(onnxGates(C, Cw.Wih).unsqueeze(0));
    Rs.push_back(onnxGates(C, Cw.Whh).unsqueeze(0));
    if (C.O.bias)
      Bs.push_back(
          cat({onnxGates(C, Cw.Bih), onnxGates(C, Cw.Bhh)}, 0).unsqueeze(0));
  }
  ir::AttrMap A;
  A.set("hidden_size", C.HiddenSize);
  A.set("direction", Dirs == 2 ? "bidirectional" : "forward");
  ir::OpKind Op = ir::OpKind::RNN;
  if (C.K == RNNConfig::Lstm)
    Op = ir::OpKind::LSTM;
  else if (C.K == RNNConfig::Gru) {
    Op = ir::OpKind::GRU;
    A.set("linear_before_reset", int64_t(1));
  } else {
    std::string Act = C.K == RNNConfig::RnnRelu ? "Relu" : "Tanh";
    A.set("activations", std::vector<std::string>(Dirs, Act));
  }
  std::vector<Tensor> In = {X, Dirs == 2 ? cat(Ws, 0) : Ws[0],
                            Dirs == 2 ? cat(Rs, 0) : Rs[0],
                            Bs.empty() ? Tensor() : (Dirs == 2 ? cat(Bs, 0) : Bs[0]),
                            Tensor(), H};
  if (Cell.defined())
    In.push_back(Cell);
  std::vector<Tensor> Out =
      dispatch::call(Op, In, A, C.K == RNNConfig::Lstm ? 3 : 2);
  // Y [seq, directions, batch, hidden] -> [seq, batch, directions * hidden].
  Tensor Y = flatten(Out[0].transpose(1, 2), 2, 3);
  return {Y, Out[1], C.K == RNNConfig::Lstm ? Out[2] : Tensor()};
}

} // namespace

void registerRNNParameters(ModuleBase &M, const RNNConfig &C,
                           const std::string &Type) {
  const RNNOptions &O = C.O;
  if (C.InputSize < 0 || C.HiddenSize <= 0)
    fail(ErrorKind::InvalidArgument, Type,
         ": hidden_size must be greater than zero and input_size "
         "non-negative, got input_size=",
         C.InputSize, ", hidden_size=", C.HiddenSize);
  if (O.num_layers < 1)
    fail(ErrorKind::InvalidArgument, Type,
         ": num_layers must be at least 1, got ", O.num_layers);
  if (!(O.dropout >= 0 && O.dropout <= 1))
    fail(ErrorKind::InvalidArgument, Type,
         ": dropout must be a number in [0, 1], got ", O.dropout);
  if (O.proj_size < 0 || (O.proj_size > 0 && C.K != RNNConfig::Lstm) ||
      O.proj_size >= C.HiddenSize)
    fail(ErrorKind::InvalidArgument, Type, ": proj_size=", O.proj_size,
         " is not allowed: it must be 0, or (LSTM only) positive and "
         "smaller than hidden_size=",
         C.HiddenSize);
  int64_t G = C.gateSize(), Hr = C.realHidden();
  for (int64_t L = 0; L < O.num_layers; ++L)
    for (int64_t D = 0; D < C.numDirections(); ++D) {
      int64_t In = L == 0 ? C.InputSize : Hr * C.numDirections();
      std::string S = suffix(L, D);
      M.register_parameter("weight_ih" + S, empty({G, In}));
      M.register_parameter("weight_hh" + S, empty({G, Hr}));
      if (O.bias) {
        M.register_parameter("bias_ih" + S, empty({G}));
        M.register_parameter("bias_hh" + S, empty({G}));
      }
      if (O.proj_size > 0)
        M.register_parameter("weight_hr" + S, empty({O.proj_size, C.HiddenSize}));
    }
  resetRNNParameters(M, C);
}

void resetRNNParameters(ModuleBase &M, const RNNConfig &C) {
  double Stdv = 1.0 / std::sqrt(static_cast<double>(C.HiddenSize));
  for (Tensor &P : M.parameters(/*Recurse=*/false))
    init::uniform_(P, -Stdv, Stdv);
}

std::tuple<Tensor, Tensor, Tensor> runRNN(const ModuleBase &M,
                                          const RNNConfig &C,
                                          const Tensor &Input, const Tensor &H0,
                                          const Tensor &C0,
                                          const std::string &Type) {
  if (!Input.defined())
    fail(ErrorKind::InvalidArgument, Type, ": the input is undefined");
  if (Input.dim() != 2 && Input.dim() != 3)
    fail(ErrorKind::ShapeMismatch, Type,
         ": expected an input of 2 (unbatched) or 3 dimensions, got shape ",
         Input.shape().toString());
  bool Batched = Input.dim() == 3;
  // [seq, batch, features] from here on.
  Tensor X = !Batched ? Input.unsqueeze(1)
                      : C.O.batch_first ? Input.transpose(0, 1) : Input;
  if (X.size(2).example() != C.InputSize)
    fail(ErrorKind::ShapeMismatch, Type, ": input of shape ",
         Input.shape().toString(), " does not end in input_size=", C.InputSize);
  // Traced: one ONNX node per layer (no ONNX form for LSTM's projection).
  bool AsOnnx = dispatch::currentMode() && C.O.proj_size == 0;
  SymInt B = X.size(1);
  int64_t Dirs = C.numDirections();
  Tensor H = initialState(H0, C, B, C.realHidden(), Batched, AsOnnx, Input,
                          Type, "h_0");
  Tensor Cs;
  if (C.K == RNNConfig::Lstm)
    Cs = initialState(C0, C, B, C.HiddenSize, Batched, AsOnnx, Input, Type,
                      "c_0");

  std::vector<CellWeights> W = cellWeights(M, C);
  std::vector<Tensor> Hn, Cn;
  Tensor LayerIn = X;
  for (int64_t L = 0; L < C.O.num_layers; ++L) {
    if (AsOnnx) {
      Tensor Hl = H.defined() ? narrow(H, 0, L * Dirs, Dirs) : Tensor();
      Tensor Cl = Cs.defined() ? narrow(Cs, 0, L * Dirs, Dirs) : Tensor();
      auto [Out, Hs, Ct] = onnxLayer(C, W, L, LayerIn, Hl, Cl);
      Hn.push_back(Hs); // [directions, batch, size] blocks, joined below.
      if (Ct.defined())
        Cn.push_back(Ct);
      if (C.O.dropout > 0 && M.is_training() && L + 1 < C.O.num_layers)
        Out = F::dropout(Out, C.O.dropout, true);
      LayerIn = Out;
      continue;
    }
    // Eager: one step at a time (traced, the steps of the example length).
    int64_t T = X.size(0).expect_int();
    std::vector<Tensor> DirOut;
    for (int64_t D = 0; D < Dirs; ++D) {
      const CellWeights &Cw = W[L * Dirs + D];
      Tensor Xw = F::linear(LayerIn, Cw.Wih, Cw.Bih); // Every step at once.
      Tensor Ht = select(H, 0, L * Dirs + D);
      Tensor Ct = Cs.defined() ? select(Cs, 0, L * Dirs + D) : Tensor();
      std::vector<Tensor> Steps(static_cast<size_t>(T));
      for (int64_t S = 0; S < T; ++S) {
        int64_t Step = D == 0 ? S : T - 1 - S;
        cellStep(C, Cw, select(Xw, 0, Step), Ht, Ct);
        Steps[static_cast<size_t>(Step)] = Ht;
      }
      DirOut.push_back(T > 0 ? stack(Steps, 0)
                             : zeros({0, B.expect_int(), C.realHidden()},
                                     TensorOptions(Input.dtype())));
      Hn.push_back(Ht);
      if (Ct.defined())
        Cn.push_back(Ct);
    }
    Tensor Out = Dirs == 2 ? cat(DirOut, 2) : DirOut[0];
    if (C.O.dropout > 0 && M.is_training() && L + 1 < C.O.num_layers)
      Out = F::dropout(Out, C.O.dropout, true);
    LayerIn = Out;
  }
  auto Join = [&](const std::vector<Tensor> &Ts) {
    return AsOnnx ? cat(Ts, 0) : stack(Ts, 0);
  };
  Tensor Output = LayerIn, HN = Join(Hn);
  Tensor CN = Cn.empty() ? Tensor() : Join(Cn);
  if (!Batched) {
    Output = Output.squeeze(1);
    HN = HN.squeeze(1);
    if (CN.defined())
      CN = CN.squeeze(1);
  } else if (C.O.batch_first) {
    Output = Output.transpose(0, 1);
  }
  return {Output, HN, CN};
}

std::string rnnExtraRepr(const RNNConfig &C) {
  const RNNOptions &O = C.O;
  std::string S = std::to_string(C.InputSize) + ", " + std::to_string(C.HiddenSize);
  if (O.proj_size != 0)
    S += ", proj_size=" + std::to_string(O.proj_size);
  if (O.num_layers != 1)
    S += ", num_layers=" + std::to_string(O.num_layers);
  if (!O.bias)
    S += ", bias=False";
  if (O.batch_first)
    S += ", batch_first=True";
  if (O.dropout != 0)
    S += ", dropout=" + repr::pyFloat(O.dropout);
  if (O.bidirectional)
    S += ", bidirectional=True";
  return S;
}

} // namespace detail

namespace {

detail::RNNConfig configOf(detail::RNNConfig::Kind K, int64_t InputSize,
                           int64_t HiddenSize, const RNNOptions &O) {
  detail::RNNConfig C;
  C.K = K;
  C.InputSize = InputSize;
  C.HiddenSize = HiddenSize;
  C.O = O;
  return C;
}

detail::RNNConfig::Kind rnnKind(const RNNOptions &O) {
  if (O.nonlinearity == "tanh")
    return detail::RNNConfig::RnnTanh;
  if (O.nonlinearity == "relu")
    return detail::RNNConfig::RnnRelu;
  fail(ErrorKind::InvalidArgument, "RNN: unknown nonlinearity '",
       O.nonlinearity, "'; use \"tanh\" or \"relu\"");
}

} // namespace

RNN::RNN(int64_t input_size, int64_t hidden_size, RNNOptions options)
    : input_size(input_size), hidden_size(hidden_size),
      num_layers(options.num_layers), nonlinearity(options.nonlinearity),
      bias(options.bias), batch_first(options.batch_first),
      dropout(options.dropout), bidirectional(options.bidirectional),
      Config(configOf(rnnKind(options), input_size, hidden_size, options)) {
  nng::detail::FactoryDefaultsScope Scope(options.device, options.dtype);
  detail::registerRNNParameters(*this, Config, "RNN");
}

std::pair<Tensor, Tensor> RNN::forward(const Tensor &input, const Tensor &hx) {
  auto [Out, H, C] = detail::runRNN(*this, Config, input, hx, Tensor(), "RNN");
  return {Out, H};
}

void RNN::reset_parameters() { detail::resetRNNParameters(*this, Config); }
std::string RNN::extra_repr() const { return detail::rnnExtraRepr(Config); }

LSTM::LSTM(int64_t input_size, int64_t hidden_size, RNNOptions options)
    : input_size(input_size), hidden_size(hidden_size),
      num_layers(options.num_layers), bias(options.bias),
      batch_first(options.batch_first), dropout(options.dropout),
      bidirectional(options.bidirectional), proj_size(options.proj_size),
      Config(configOf(detail::RNNConfig::Lstm, input_size, hidden_size,
                      options)) {
  nng::detail::FactoryDefaultsScope Scope(options.device, options.dtype);
  detail::registerRNNParameters(*this, Config, "LSTM");
}

std::tuple<Tensor, std::pair<Tensor, Tensor>>
LSTM::forward(const Tensor &input,
              const std::optional<std::pair<Tensor, Tensor>> &hx) {
  auto [Out, H, C] =
      detail::runRNN(*this, Config, input, hx ? hx->first : Tensor(),
                     hx ? hx->second : Tensor(), "LSTM");
  return {Out, {H, C}};
}

void LSTM::reset_parameters() { detail::resetRNNParameters(*this, Config); }
std::string LSTM::extra_repr() const { return detail::rnnExtraRepr(Config); }

GRU::GRU(int64_t input_size, int64_t hidden_size, RNNOptions options)
    : input_size(input_size), hidden_size(hidden_size),
      num_layers(options.num_layers), bias(options.bias),
      batch_first(options.batch_first), dropout(options.dropout),
      bidirectional(options.bidirectional),
      Config(configOf(detail::RNNConfig::Gru, input_size, hidden_size,
                      options)) {
  nng::detail::FactoryDefaultsScope Scope(options.device, options.dtype);
  detail::registerRNNParameters(*this, Config, "GRU");
}

std::pair<Tensor, Tensor> GRU::forward(const Tensor &input, const Tensor &hx) {
  auto [Out, H, C] = detail::runRNN(*this, Config, input, hx, Tensor(), "GRU");
  return {Out, H};
}

void GRU::reset_parameters() { detail::resetRNNParameters(*this, Config); }
std::string GRU::extra_repr() const { return detail::rnnExtraRepr(Config); }

} // namespace nng::nn
