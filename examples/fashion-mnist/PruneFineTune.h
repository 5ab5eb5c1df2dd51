//===- PruneFineTune.h - Prune the trained model, fine-tune it --*- C++ -*-===//
//
// What fashion-mnist-train --prune RATIO does after training (issue 17,
// item 4): structured channel pruning of the trained model with
// nn::utils::prune_channels (RATIO of the channels of every prunable layer,
// L1 ranking, counts rounded to multiples of 8), --finetune-epochs of eager
// fine-tuning with a fresh SGD at --finetune-lr, and --export-pruned; it
// prints the test accuracy before pruning, after pruning and after
// fine-tuning, and the parameters, MACs per image and ONNX size before and
// after, as lines prune_accuracy.sh reads.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "FashionMnist.h"
#include "Trainer.h"

#include "nngraph/frontend/nn/Module.h"

namespace fmnist {

/// Prunes and fine-tunes Model (test accuracy AccuracyBefore) as the file
/// comment says; returns the test accuracy after fine-tuning. Throws on
/// any error.
double pruneAndFineTune(nng::nn::ModuleBase &Model, const Dataset &Train,
                        const Dataset &Test, const TrainOptions &O,
                        double AccuracyBefore);

} // namespace fmnist
