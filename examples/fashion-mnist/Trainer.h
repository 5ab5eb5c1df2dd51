//===- Trainer.h - Training the Fashion-MNIST CNN ----------------*- C++ -*-===//
//
// The training run of fashion-mnist-train, separate from its command line:
// load the data, build the model and the optimizer (or resume them from a
// checkpoint), train epoch by epoch with a progress bar, evaluate on the
// test set after each epoch, checkpoint, optionally export the trained
// model (ONNX) and the data (.npz) for the int8 accuracy check
// (Export.h), optionally prune and fine-tune it (PruneFineTune.h), and print
// the final accuracy. evaluate and trainEpoch are the loop's pieces that the
// fine-tuning reuses.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "FashionMnist.h"

#include "nngraph/frontend/nn/Module.h"
#include "nngraph/frontend/optim/Optimizer.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fmnist {

/// The values of --model: "cnn" (FashionCnn, the default) and "residual"
/// (FashionResNet); see Model.h.
const std::vector<std::string> &modelNames();

/// What the command line sets (see main.cpp for the documentation of each).
struct TrainOptions {
  int64_t Epochs = 3;
  /// One of modelNames().
  std::string Model = "cnn";
  std::string DataDir;
  int64_t BatchSize = 64;
  double Lr = 0.05;
  double Momentum = 0.9;
  double WeightDecay = 5e-4;
  uint64_t Seed = 1;
  int64_t LimitTrain = 0;
  int64_t LimitTest = 0;
  int Threads = 0;
  std::string CheckpointPath;
  std::string ResumePath;
  /// Time every dispatched op of the training steps and print a table of
  /// the costliest ones (stderr) at the end.
  bool Profile = false;
  /// After training: the traced model as ONNX (.onnx) or text (.nng).
  std::string ExportPath;
  /// After training: calib.npz, test.npz and test_labels.npz in this folder.
  std::string ExportDataDir;
  /// After training (and the exports): prune this share of the channels
  /// (0: no pruning), then fine-tune (PruneFineTune.h).
  double Prune = 0;
  int64_t FinetuneEpochs = 1;
  double FinetuneLr = 0.01;
  /// After fine-tuning: the traced pruned model as ONNX (.onnx) or text.
  std::string ExportPrunedPath;
};

/// Test loss and accuracy of a model.
struct EvalResult {
  double Loss = 0;
  double Accuracy = 0; ///< In percent.
};

/// Evaluates Model on Test in eval mode under NoGradGuard, in batches;
/// leaves Model in training mode.
EvalResult evaluate(nng::nn::ModuleBase &Model, const Dataset &Test);

/// One epoch of training: every image of Train once, in the order drawn from
/// (Seed, Epoch), batches of BatchSize, one Opt step each, with a progress
/// bar titled Title (stderr). Returns the mean training loss.
double trainEpoch(nng::nn::ModuleBase &Model, nng::optim::Optimizer &Opt,
                  const Dataset &Train, int64_t BatchSize, uint64_t Seed,
                  int64_t Epoch, const std::string &Title);

/// Runs the training; prints per-epoch lines and, last, "test accuracy:
/// NN.N%" on stdout, the progress bar on stderr. Throws on any error
/// (data, checkpoint, nngraph), with a message saying what and where.
void train(const TrainOptions &O);

} // namespace fmnist
