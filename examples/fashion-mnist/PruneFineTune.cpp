//===- PruneFineTune.cpp - Prune the trained model, fine-tune it ----------===//
//
// --prune: measure the trained model (parameters, MACs per image from its
// trace, the size of its ONNX serialization), prune its channels with
// nn::utils::prune_channels, evaluate, fine-tune eagerly with a new SGD (the
// pruned parameters are new tensors), evaluate, measure again, export.
//
//===----------------------------------------------------------------------===//

#include "PruneFineTune.h"
#include "Export.h"

#include "nngraph/frontend/fx/Trace.h"
#include "nngraph/frontend/nn/utils/PruneChannels.h"
#include "nngraph/frontend/onnx/OnnxExport.h"
#include "nngraph/frontend/optim/Optim.h"

#include <chrono>
#include <cstdio>
#include <string>

namespace fmnist {

namespace {

/// What the report compares before and after pruning.
struct ModelSize {
  int64_t Parameters = 0;
  int64_t Macs = 0; ///< Multiply-accumulates per image (Conv, Gemm, MatMul).
  int64_t OnnxBytes = 0;
};

/// The trace of Model in eval mode (its mode restored) with a batch dim N.
nng::fx::GraphModule traceEval(nng::nn::ModuleBase &Model) {
  const bool WasTraining = Model.is_training();
  Model.eval();
  try {
    nng::fx::GraphModule G =
        nng::fx::symbolic_trace(Model, {nng::fx::InputSpec({"N", 1, 28, 28})});
    Model.train(WasTraining);
    return G;
  } catch (...) {
    Model.train(WasTraining);
    throw;
  }
}

/// MACs per image of the convolutions and matrix products of G: each
/// output element costs the weight's elements per output channel.
int64_t macsPerImage(const nng::ir::Graph &G) {
  using nng::ir::OpKind;
  int64_t Macs = 0;
  for (const auto &N : G.nodes()) {
    if (N->op() != OpKind::Conv && N->op() != OpKind::Gemm &&
        N->op() != OpKind::MatMul)
      continue;
    const nng::ir::TensorType &Y = N->output(0)->type();
    const nng::ir::TensorType &W = N->input(1)->type();
    std::optional<int64_t> WN = W.staticNumel();
    if (!Y.hasRank() || Y.rank() < 2 || !WN)
      continue;
    int64_t PerImage = 1;
    for (int64_t D = 1; D < Y.rank(); ++D)
      PerImage *= Y.dim(D).isStatic() ? Y.dim(D).value() : 1;
    Macs += PerImage * (*WN / Y.dim(1).value());
  }
  return Macs;
}

ModelSize measure(nng::nn::ModuleBase &Model) {
  nng::fx::GraphModule G = traceEval(Model);
  return {
      Model.num_parameters(), macsPerImage(G.graph()),
      static_cast<int64_t>(nng::frontend::exportOnnxToBytes(G.graph()).size())};
}

double percentOf(int64_t Part, int64_t Whole) {
  return Whole ? 100.0 * double(Part) / double(Whole) : 0.0;
}

} // namespace

double pruneAndFineTune(nng::nn::ModuleBase &Model, const Dataset &Train,
                        const Dataset &Test, const TrainOptions &O,
                        double AccuracyBefore) {
  const ModelSize Before = measure(Model);
  nng::nn::utils::PruneChannelsOptions PO;
  PO.ratio = O.Prune;
  nng::nn::utils::PruneChannelsReport R = nng::nn::utils::prune_channels(
      Model, {nng::fx::InputSpec({"N", 1, 28, 28})}, PO);
  const double AccuracyPruned = evaluate(Model, Test).Accuracy;
  std::printf("pruned: %lld channels of %lld layer groups (ratio %g, l1, "
              "round 8), %lld groups left alone; test accuracy %.2f%%\n",
              static_cast<long long>(R.channels_removed),
              static_cast<long long>(R.groups_pruned), O.Prune,
              static_cast<long long>([&] {
                int64_t N = 0;
                for (const auto &[Why, Count] : R.groups_left)
                  N += Count;
                return N;
              }()),
              AccuracyPruned);
  std::printf("%s", Model.to_string().c_str());
  std::printf("\n");
  std::fflush(stdout);

  // Fine-tune: a new optimizer over the new parameters, the same recipe.
  nng::optim::SGD Opt(Model.parameters(), {.lr = O.FinetuneLr,
                                           .momentum = O.Momentum,
                                           .weight_decay = O.WeightDecay,
                                           .nesterov = O.Momentum > 0});
  nng::optim::CosineAnnealingLR Schedule(Opt, O.FinetuneEpochs);
  double Accuracy = AccuracyPruned;
  Model.train();
  for (int64_t E = 0; E < O.FinetuneEpochs; ++E) {
    const auto Start = std::chrono::steady_clock::now();
    const double Lr = Opt.param_groups().front().lr();
    // Epoch numbers after training's: a fresh data order.
    const double Loss =
        trainEpoch(Model, Opt, Train, O.BatchSize, O.Seed, O.Epochs + E,
                   "fine-tune " + std::to_string(E + 1) + "/" +
                       std::to_string(O.FinetuneEpochs));
    EvalResult ER = evaluate(Model, Test);
    Accuracy = ER.Accuracy;
    Schedule.step();
    std::printf(
        "fine-tune %lld/%lld: train loss %.4f, test loss %.4f, test "
        "accuracy %.2f%%, lr %.4g, %.1f s\n",
        static_cast<long long>(E + 1), static_cast<long long>(O.FinetuneEpochs),
        Loss, ER.Loss, ER.Accuracy, Lr,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
            .count());
    std::fflush(stdout);
  }

  const ModelSize After = measure(Model);
  if (!O.ExportPrunedPath.empty())
    exportModel(Model, O.ExportPrunedPath);
  std::printf("accuracy: before pruning %.2f%%, after pruning %.2f%%, after "
              "fine-tuning %.2f%% (%+.2f points)\n",
              AccuracyBefore, AccuracyPruned, Accuracy,
              Accuracy - AccuracyBefore);
  std::printf("parameters: %lld -> %lld (%.1f%%)\n",
              static_cast<long long>(Before.Parameters),
              static_cast<long long>(After.Parameters),
              percentOf(After.Parameters, Before.Parameters));
  std::printf("MACs per image: %lld -> %lld (%.1f%%)\n",
              static_cast<long long>(Before.Macs),
              static_cast<long long>(After.Macs),
              percentOf(After.Macs, Before.Macs));
  std::printf("ONNX file: %lld -> %lld bytes (%.1f%%)\n",
              static_cast<long long>(Before.OnnxBytes),
              static_cast<long long>(After.OnnxBytes),
              percentOf(After.OnnxBytes, Before.OnnxBytes));
  std::fflush(stdout);
  return Accuracy;
}

} // namespace fmnist
