//===- main.cpp - fashion-mnist-train: train a CNN on Fashion-MNIST -------===//
//
// The command line of fashion-mnist-train (CLI11): parses and checks the
// options (including the --export path's extension, before any training),
// then runs the training (Trainer.cpp), the exports (Export.cpp) and the
// pruning with fine-tuning (PruneFineTune.cpp). Exit status 0 when done, 1
// for a data, checkpoint or runtime error (printed as "fashion-mnist-train:
// error: ..."), 2 for a bad command line, like the nngraph tools. The last
// line of a successful run is exactly "test accuracy: NN.N%".
//
//===----------------------------------------------------------------------===//

#include "Export.h"
#include "FashionMnist.h"
#include "Trainer.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <stdexcept>

int main(int Argc, char **Argv) {
  fmnist::TrainOptions O;
  O.DataDir = fmnist::DefaultDataDir;

  CLI::App App("Trains a small conv-bn-relu CNN (or a small residual network) "
               "on Fashion-MNIST with nngraph's eager nn::Module API and "
               "prints the test accuracy.",
               "fashion-mnist-train");
  App.add_option("--model", O.Model,
                 "The network: cnn (conv-bn-relu-pool x2, two linear layers) "
                 "or residual (stem, two residual blocks, global average "
                 "pool, linear); see Model.h")
      ->check(CLI::IsMember(fmnist::modelNames()))
      ->capture_default_str();
  App.add_option("--epochs", O.Epochs, "Number of epochs to train")
      ->check(CLI::Range(int64_t(1), int64_t(100000)))
      ->capture_default_str();
  App.add_option("--data", O.DataDir,
                 "Folder with {train,t10k}-{images-idx3,labels-idx1}-ubyte.gz "
                 "(Debian's dataset-fashion-mnist)")
      ->capture_default_str();
  App.add_option("--batch-size", O.BatchSize, "Training batch size")
      ->check(CLI::Range(int64_t(1), int64_t(60000)))
      ->capture_default_str();
  App.add_option("--lr", O.Lr,
                 "Initial learning rate (SGD with Nesterov momentum; cosine "
                 "annealing to 0 over --epochs)")
      ->check(CLI::Range(1e-12, 100.0))
      ->capture_default_str();
  App.add_option("--momentum", O.Momentum, "SGD momentum")
      ->check(CLI::Range(0.0, 0.999))
      ->capture_default_str();
  App.add_option("--weight-decay", O.WeightDecay, "SGD L2 weight decay")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  App.add_option("--seed", O.Seed,
                 "Seed of the initialization, the data order and dropout")
      ->capture_default_str();
  App.add_option("--limit-train", O.LimitTrain,
                 "Use only the first N training images (0: all 60000)")
      ->check(CLI::Range(int64_t(0), int64_t(1) << 40))
      ->capture_default_str();
  App.add_option("--limit-test", O.LimitTest,
                 "Evaluate on the first N test images only (0: all 10000)")
      ->check(CLI::Range(int64_t(0), int64_t(1) << 40))
      ->capture_default_str();
  App.add_option("--threads", O.Threads,
                 "Threads of the kernels (0: OpenMP's default, "
                 "OMP_NUM_THREADS or all cores)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  App.add_option("--checkpoint", O.CheckpointPath,
                 "Save model and optimizer to FILE after each epoch "
                 "(atomically: an interrupted save keeps the previous one)");
  App.add_option("--resume", O.ResumePath,
                 "Continue the run saved in FILE (by --checkpoint) with the "
                 "epoch after the saved one")
      ->check(CLI::ExistingFile);
  App.add_flag("--profile", O.Profile,
               "Time every dispatched op of the training steps and print the "
               "costliest ops (stderr) at the end");
  App.add_option("--export", O.ExportPath,
                 "After training, trace the model in eval mode (batch dim N) "
                 "and write it to MODEL.onnx (or .nng)");
  App.add_option("--export-data", O.ExportDataDir,
                 "After training, write DIR/calib.npz (the first 500 "
                 "training images), DIR/test.npz (the test images), both "
                 "under the graph's input name, and DIR/test_labels.npz "
                 "('labels'), normalized as training feeds them");

  App.add_option("--prune", O.Prune,
                 "After training (and --export): remove this share of the "
                 "channels of every prunable layer (nn::utils::"
                 "prune_channels: L1 ranking, counts rounded to multiples of "
                 "8), fine-tune, and report accuracy, parameters, MACs and "
                 "ONNX size before and after (0: no pruning)")
      ->check(CLI::Range(0.0, 0.99))
      ->capture_default_str();
  App.add_option("--finetune-epochs", O.FinetuneEpochs,
                 "Epochs of fine-tuning after --prune")
      ->check(CLI::Range(int64_t(0), int64_t(100000)))
      ->capture_default_str();
  App.add_option("--finetune-lr", O.FinetuneLr,
                 "Learning rate of the fine-tuning (a new SGD with --momentum "
                 "and --weight-decay; cosine annealing over "
                 "--finetune-epochs)")
      ->check(CLI::Range(1e-12, 100.0))
      ->capture_default_str();
  App.add_option("--export-pruned", O.ExportPrunedPath,
                 "After --prune and the fine-tuning, trace the smaller model "
                 "(batch dim N) and write it to MODEL.onnx (or .nng)");

  try {
    App.parse(Argc, Argv);
  } catch (const CLI::ParseError &E) {
    int Status = App.exit(E);
    return Status == 0 ? 0 : 2;
  }

  try {
    if (!O.ExportPath.empty())
      fmnist::checkExportPath(O.ExportPath);
    if (!O.ExportPrunedPath.empty()) {
      if (O.Prune <= 0)
        throw std::invalid_argument("--export-pruned needs --prune");
      fmnist::checkExportPath(O.ExportPrunedPath);
    }
  } catch (const std::exception &E) {
    std::fprintf(stderr, "fashion-mnist-train: error: %s\n", E.what());
    return 2;
  }

  try {
    fmnist::train(O);
  } catch (const std::exception &E) {
    std::fflush(stdout);
    std::fprintf(stderr, "fashion-mnist-train: error: %s\n", E.what());
    return 1;
  }
  return 0;
}
