//===- Trainer.cpp - Training the Fashion-MNIST CNN -----------------------===//
//
// A PyTorch-style training loop over the eager API: per epoch, shuffle the
// training set (a generator seeded by --seed and the epoch, so a resumed run
// sees the same order as an uninterrupted one), then for each batch
// zero_grad, forward, cross_entropy, backward, SGD step; evaluate on the
// test set in eval mode under NoGradGuard; checkpoint. The learning rate
// follows CosineAnnealingLR over --epochs, one scheduler step per epoch.
// The model is either network of Model.h (--model), handled as an
// nn::ModuleBase; --export / --export-data run after the last epoch
// (Export.h), then --prune (PruneFineTune.h).
//
// Checkpoints (Checkpoint.h, format in README.md) hold the model's
// state_dict as tensors "model.KEY", the optimizer's state as the bytes of
// an optimizer checkpoint file (optim/OptimizerCheckpoint.h) in the u8
// tensor "optimizer", and the epoch and settings as metadata.
//
//===----------------------------------------------------------------------===//

#include "Trainer.h"
#include "Checkpoint.h"
#include "Export.h"
#include "FashionMnist.h"
#include "Model.h"
#include "OpProfiler.h"
#include "ProgressBar.h"
#include "PruneFineTune.h"

#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/optim/Optim.h"
#include "nngraph/runtime/Parallel.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>

namespace fmnist {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char *ProgramName = "fashion-mnist-train";
/// Images per evaluation batch (no gradients: memory is no concern).
constexpr int64_t EvalBatch = 1000;

/// The models of --model, by option value: (value, type name, factory).
struct ModelKind {
  const char *Option;
  const char *TypeName;
  nng::nn::ModulePtr (*Make)();
};

const ModelKind ModelKinds[] = {
    {"cnn", "FashionCnn",
     [] { return nng::nn::ModulePtr(std::make_shared<FashionCnn>()); }},
    {"residual", "FashionResNet",
     [] { return nng::nn::ModulePtr(std::make_shared<FashionResNet>()); }},
};

const ModelKind &modelKind(const std::string &Option) {
  for (const ModelKind &K : ModelKinds)
    if (Option == K.Option)
      return K;
  std::string Valid;
  for (const ModelKind &K : ModelKinds)
    Valid += std::string(Valid.empty() ? "" : ", ") + K.Option;
  throw std::invalid_argument("unknown model '" + Option +
                              "' (valid: " + Valid + ")");
}

/// The --model value that builds TypeName, or null.
const char *modelOptionFor(const std::string &TypeName) {
  for (const ModelKind &K : ModelKinds)
    if (TypeName == K.TypeName)
      return K.Option;
  return nullptr;
}

double secondsSince(Clock::time_point T) {
  return std::chrono::duration<double>(Clock::now() - T).count();
}

/// A batch as tensors: images [N, 1, 28, 28] normalized, labels [N] i64.
struct Batch {
  nng::Tensor Images;
  nng::Tensor Labels;
};

Batch makeBatch(const Dataset &D, const std::vector<int64_t> &Order,
                int64_t Begin, int64_t End) {
  const int64_t N = End - Begin;
  nng::rt::Tensor X =
      nng::rt::Tensor::empty(nng::Shape{N, 1, D.Rows, D.Cols}, nng::DType::F32);
  nng::rt::Tensor Y = nng::rt::Tensor::empty(nng::Shape{N}, nng::DType::I64);
  gatherBatch(D, Order, Begin, End, X.data<float>(), Y.data<int64_t>());
  return {nng::Tensor(std::move(X)), nng::Tensor(std::move(Y))};
}

/// The training order of an epoch: a permutation drawn from a generator
/// seeded by (Seed, Epoch), independent of everything else.
std::vector<int64_t> shuffledOrder(int64_t Count, uint64_t Seed,
                                   int64_t Epoch) {
  std::vector<int64_t> Order(static_cast<size_t>(Count));
  std::iota(Order.begin(), Order.end(), 0);
  std::seed_seq Seq{uint32_t(Seed), uint32_t(Seed >> 32), uint32_t(Epoch)};
  std::mt19937_64 Rng(Seq);
  std::shuffle(Order.begin(), Order.end(), Rng);
  return Order;
}

/// A temporary file name for the optimizer checkpoint bytes, removed when
/// the guard goes.
struct TempFile {
  fs::path Path;
  explicit TempFile(const std::string &Tag)
      : Path(fs::temp_directory_path() /
             ("fashion-mnist-" + Tag + "-" + std::to_string(getpid()) +
              ".tmp")) {}
  ~TempFile() {
    std::error_code Ec;
    fs::remove(Path, Ec);
  }
};

std::vector<char> readBytes(const fs::path &P) {
  std::ifstream In(P, std::ios::binary);
  if (!In)
    throw CheckpointError("cannot read the temporary file " + P.string());
  return std::vector<char>(std::istreambuf_iterator<char>(In), {});
}

void writeBytes(const fs::path &P, const void *Data, size_t Size) {
  std::ofstream Out(P, std::ios::binary | std::ios::trunc);
  Out.write(static_cast<const char *>(Data), static_cast<std::streamsize>(Size));
  if (!Out)
    throw CheckpointError("cannot write the temporary file " + P.string() +
                          " (is the temporary folder writable? set TMPDIR)");
}

std::string formatDouble(double V) {
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%.17g", V);
  return Buf;
}

void saveTrainingCheckpoint(const std::string &Path,
                            const nng::nn::ModuleBase &Model,
                            const nng::optim::Optimizer &Opt,
                            const TrainOptions &O, int64_t Epoch,
                            double Accuracy) {
  Checkpoint C;
  C.setMeta("program", ProgramName);
  C.setMeta("model", Model.type_name());
  C.setMeta("epoch", std::to_string(Epoch));
  C.setMeta("epochs", std::to_string(O.Epochs));
  C.setMeta("seed", std::to_string(O.Seed));
  C.setMeta("batch-size", std::to_string(O.BatchSize));
  C.setMeta("lr", formatDouble(O.Lr));
  C.setMeta("limit-train", std::to_string(O.LimitTrain));
  C.setMeta("test-accuracy", formatDouble(Accuracy));
  for (const auto &[Key, T] : Model.state_dict())
    C.addTensor("model." + Key, T.data());
  TempFile Tmp("optimizer");
  nng::optim::save(Opt, Tmp.Path);
  std::vector<char> Bytes = readBytes(Tmp.Path);
  nng::rt::Tensor B = nng::rt::Tensor::empty(
      nng::Shape{int64_t(Bytes.size())}, nng::DType::U8);
  std::copy(Bytes.begin(), Bytes.end(), reinterpret_cast<char *>(B.rawData()));
  C.addTensor("optimizer", B);
  saveCheckpoint(Path, C);
}

/// Restores the model and the optimizer from Path; returns the number of
/// epochs the checkpoint had completed. Everything is read and checked
/// before the model changes; the optimizer load checks before it changes.
int64_t resumeFrom(const std::string &Path, nng::nn::ModuleBase &Model,
                   nng::optim::Optimizer &Opt, const TrainOptions &O) {
  Checkpoint C = loadCheckpoint(Path);
  if (C.meta("program") != ProgramName)
    throw CheckpointError(Path + ": written by \"" + C.meta("program") +
                          "\", not by " + ProgramName);
  if (C.meta("model") != Model.type_name()) {
    const char *Option = modelOptionFor(C.meta("model"));
    throw CheckpointError(
        Path + ": holds a \"" + C.meta("model") + "\" model, not the " +
        Model.type_name() + " of --model " + modelOptionFor(Model.type_name()) +
        (Option ? std::string("; resume it with --model ") + Option
                : std::string("; this program cannot train it")));
  }
  int64_t Epoch = -1;
  std::istringstream(C.meta("epoch")) >> Epoch;
  if (Epoch < 0)
    throw CheckpointError(Path + ": malformed epoch \"" + C.meta("epoch") +
                          "\"");

  nng::nn::StateDict SD;
  for (const auto &[Name, T] : C.tensors())
    if (Name.rfind("model.", 0) == 0)
      SD.insert(Name.substr(6), nng::Tensor(T));
  const nng::rt::Tensor *OptBytes = C.findTensor("optimizer");
  if (!OptBytes || OptBytes->dtype() != nng::DType::U8 || OptBytes->rank() != 1)
    throw CheckpointError(Path + ": no optimizer state (u8 tensor "
                                 "\"optimizer\")");
  try {
    Model.load_state_dict(SD, /*Strict=*/true);
  } catch (const std::exception &E) {
    throw CheckpointError(Path + ": the model state does not fit: " +
                          E.what());
  }
  TempFile Tmp("resume");
  writeBytes(Tmp.Path, OptBytes->rawData(), OptBytes->nbytes());
  try {
    nng::optim::load(Opt, Tmp.Path);
  } catch (const std::exception &E) {
    throw CheckpointError(Path + ": the optimizer state does not fit: " +
                          E.what());
  }

  // Settings that change what "continuing" means are reported, not refused.
  auto note = [&](const char *Key, const std::string &Now) {
    const std::string *Was = C.findMeta(Key);
    if (Was && *Was != Now)
      std::printf("note: --%s was %s in the checkpointed run, now %s\n", Key,
                  Was->c_str(), Now.c_str());
  };
  note("seed", std::to_string(O.Seed));
  note("batch-size", std::to_string(O.BatchSize));
  note("limit-train", std::to_string(O.LimitTrain));
  std::printf("resuming from %s after epoch %lld (test accuracy then %.2f%%)\n",
              Path.c_str(), static_cast<long long>(Epoch),
              std::atof(C.meta("test-accuracy").c_str()));
  return Epoch;
}

} // namespace

EvalResult evaluate(nng::nn::ModuleBase &Model, const Dataset &Test) {
  nng::NoGradGuard NoGrad;
  Model.eval();
  std::vector<int64_t> Order(static_cast<size_t>(Test.Count));
  std::iota(Order.begin(), Order.end(), 0);
  double LossSum = 0;
  int64_t Correct = 0;
  for (int64_t B = 0; B < Test.Count; B += EvalBatch) {
    const int64_t E = std::min(Test.Count, B + EvalBatch);
    Batch Bt = makeBatch(Test, Order, B, E);
    nng::Tensor Logits = Model(Bt.Images).toTensor().contiguous();
    LossSum += nng::F::cross_entropy(Logits, Bt.Labels, nng::Tensor(), "sum")
                   .item<double>();
    const float *L = Logits.data_ptr<float>();
    const int64_t *Y = Bt.Labels.data_ptr<int64_t>();
    for (int64_t I = 0; I < E - B; ++I) {
      const float *Row = L + I * NumClasses;
      if (std::max_element(Row, Row + NumClasses) - Row == Y[I])
        ++Correct;
    }
  }
  Model.train();
  return {LossSum / double(Test.Count),
          100.0 * double(Correct) / double(Test.Count)};
}

double trainEpoch(nng::nn::ModuleBase &Model, nng::optim::Optimizer &Opt,
                  const Dataset &Train, int64_t BatchSize, uint64_t Seed,
                  int64_t Epoch, const std::string &Title) {
  const int64_t NumBatches = (Train.Count + BatchSize - 1) / BatchSize;
  std::vector<int64_t> Order = shuffledOrder(Train.Count, Seed, Epoch);
  ProgressBar Bar(Title, NumBatches);
  for (int64_t B = 0; B < NumBatches; ++B) {
    const int64_t Begin = B * BatchSize;
    const int64_t End = std::min(Train.Count, Begin + BatchSize);
    Batch Bt = makeBatch(Train, Order, Begin, End);
    Opt.zero_grad();
    nng::Tensor Loss =
        nng::F::cross_entropy(Model(Bt.Images).toTensor(), Bt.Labels);
    Loss.backward();
    Opt.step();
    Bar.update(B + 1, End - Begin, Loss.item<double>());
  }
  Bar.finish();
  return Bar.meanLoss();
}

const std::vector<std::string> &modelNames() {
  static const std::vector<std::string> Names = [] {
    std::vector<std::string> N;
    for (const ModelKind &K : ModelKinds)
      N.push_back(K.Option);
    return N;
  }();
  return Names;
}

void train(const TrainOptions &O) {
  if (O.Threads > 0)
    nng::setNumThreads(O.Threads);
  const std::string Dir = O.DataDir.empty() ? DefaultDataDir : O.DataDir;

  Clock::time_point LoadStart = Clock::now();
  Dataset TrainSet = loadSplit(Dir, Split::Train, O.LimitTrain);
  Dataset TestSet = loadSplit(Dir, Split::Test, O.LimitTest);
  std::printf("data: %s: %lld training, %lld test images (%.1f s)\n",
              Dir.c_str(), static_cast<long long>(TrainSet.Count),
              static_cast<long long>(TestSet.Count), secondsSince(LoadStart));

  nng::manual_seed(O.Seed);
  nng::nn::ModulePtr Model = modelKind(O.Model).Make();
  std::printf("model: %s, %lld parameters; SGD lr %g momentum %g "
              "weight_decay %g, cosine schedule over %lld epochs, batch %lld, "
              "%d threads\n",
              Model->type_name().c_str(),
              static_cast<long long>(Model->num_parameters()), O.Lr,
              O.Momentum, O.WeightDecay, static_cast<long long>(O.Epochs),
              static_cast<long long>(O.BatchSize), nng::numThreads());
  nng::optim::SGD Opt(Model->parameters(),
                      {.lr = O.Lr,
                       .momentum = O.Momentum,
                       .weight_decay = O.WeightDecay,
                       // Nesterov needs momentum (torch.optim.SGD's rule).
                       .nesterov = O.Momentum > 0});

  int64_t StartEpoch = 0;
  if (!O.ResumePath.empty()) {
    StartEpoch = resumeFrom(O.ResumePath, *Model, Opt, O);
    // The schedule is a function of --lr, --epochs and the epoch alone, so
    // that a run may be resumed with more epochs: restart it from --lr.
    for (nng::optim::ParamGroup &G : Opt.param_groups()) {
      G.set_lr(O.Lr);
      G.options.set("initial_lr", O.Lr);
    }
  }
  std::fflush(stdout);
  nng::optim::CosineAnnealingLR Schedule(Opt, O.Epochs);
  for (int64_t E = 0; E < std::min(StartEpoch, O.Epochs); ++E)
    Schedule.step();

  double Accuracy = -1;
  OpProfiler Profiler;
  double ProfiledSeconds = 0;
  Model->train();
  for (int64_t Epoch = StartEpoch; Epoch < O.Epochs; ++Epoch) {
    // Dropout masks: a stream per epoch too, for exact resumes.
    nng::manual_seed(O.Seed * 1000003u + uint64_t(Epoch));
    const double Lr = Opt.param_groups().front().lr();
    Clock::time_point EpochStart = Clock::now();
    std::optional<nng::dispatch::ModeGuard> Profiling;
    if (O.Profile)
      Profiling.emplace(Profiler);
    const double TrainLoss =
        trainEpoch(*Model, Opt, TrainSet, O.BatchSize, O.Seed, Epoch,
                   "epoch " + std::to_string(Epoch + 1) + "/" +
                       std::to_string(O.Epochs));
    Profiling.reset();
    const double TrainSeconds = secondsSince(EpochStart);
    ProfiledSeconds += TrainSeconds;
    EvalResult R = evaluate(*Model, TestSet);
    Accuracy = R.Accuracy;
    Schedule.step();
    std::printf("epoch %lld/%lld: train loss %.4f, test loss %.4f, test "
                "accuracy %.2f%%, lr %.4g, %.1f s (train %.1f s, %.0f img/s)\n",
                static_cast<long long>(Epoch + 1),
                static_cast<long long>(O.Epochs), TrainLoss, R.Loss,
                R.Accuracy, Lr, secondsSince(EpochStart), TrainSeconds,
                double(TrainSet.Count) / TrainSeconds);
    if (!O.CheckpointPath.empty())
      saveTrainingCheckpoint(O.CheckpointPath, *Model, Opt, O, Epoch + 1,
                             R.Accuracy);
    std::fflush(stdout);
  }
  if (Accuracy < 0) {
    std::printf("the checkpoint already completed %lld of %lld epochs: "
                "evaluating only\n",
                static_cast<long long>(StartEpoch),
                static_cast<long long>(O.Epochs));
    Accuracy = evaluate(*Model, TestSet).Accuracy;
  }
  if (O.Profile)
    Profiler.report(stderr, ProfiledSeconds);
  if (!O.ExportPath.empty() || !O.ExportDataDir.empty()) {
    const std::string InputName = exportModel(*Model, O.ExportPath);
    if (!O.ExportDataDir.empty())
      exportData(TrainSet, TestSet, O.ExportDataDir, InputName);
  }
  if (O.Prune > 0)
    Accuracy = pruneAndFineTune(*Model, TrainSet, TestSet, O, Accuracy);
  std::printf("test accuracy: %.1f%%\n", Accuracy);
  std::fflush(stdout);
}

} // namespace fmnist
