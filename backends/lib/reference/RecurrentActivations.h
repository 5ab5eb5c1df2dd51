//===- RecurrentActivations.h - Recurrent activations -----------*- C++ -*-===//
//
// The activation functions of RNN, GRU and LSTM (and of the dynamically
// quantized LSTM) as ONNX lists them, with their activation_alpha /
// activation_beta parameters, and the checked sequence lengths, shared by
// the recurrent reference kernels.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Kernels.h"

#include <string>
#include <vector>

namespace nng::backends::reference {

enum class CellKind { RNN, GRU, LSTM };

/// One activation function with its parameters.
struct Activation {
  std::string Name; ///< Lower case.
  double Alpha = 0, Beta = 0;

  double operator()(double X) const;
};

/// The activations of every direction (1, 2 or 3 per direction for RNN,
/// GRU and LSTM), from the node's attributes (parameters consumed in order,
/// ONNX's defaults otherwise) or the op's defaults.
std::vector<Activation> recurrentActivations(KernelContext &C, CellKind K,
                                             size_t NumDirs);

/// The sequence length of each of the B batch rows: input In
/// (sequence_lens) when given, each checked to lie in [0, S]; else S.
std::vector<int64_t> sequenceLengths(KernelContext &C, size_t In, int64_t B,
                                     int64_t S);

} // namespace nng::backends::reference
