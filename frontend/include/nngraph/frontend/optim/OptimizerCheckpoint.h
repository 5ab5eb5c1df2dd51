//===- OptimizerCheckpoint.h - Optimizer state in a file ------------------===//
//
// Saves and loads an optimizer's state_dict (and optionally an LR
// scheduler's): as torch.save writes them for .pt/.pth paths (PyTorch
// resumes from them, and load reads PyTorch's; TorchFormat.h), else to a
// small self-describing binary file. That format ("NNGOPTCK", version 1) is
// specified in docs/optim.md: a header with the payload size and a 64-bit
// FNV-1a checksum, then the optimizer name, the param groups (options and
// parameter indices), the per-parameter state (tensors with dtype, shape
// and raw little-endian bytes) and the scheduler fields. A truncated or
// corrupted file gives an Error (kind Parse or IO) saying what and where,
// never a crash; the optimizer is then unchanged.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/optim/LRScheduler.h"
#include "nngraph/frontend/optim/Optimizer.h"

#include <filesystem>
#include <optional>
#include <string>

namespace nng::optim {

/// What a checkpoint file holds.
struct OptimizerCheckpoint {
  /// The optimizer's name() ("SGD", "Adam", "AdamW").
  std::string optimizer;
  OptimizerStateDict state;
  /// The scheduler's name() and state_dict(), when one was saved.
  std::optional<std::string> scheduler;
  SchedulerStateDict scheduler_state;
};

/// Writes C to Path (through a temporary file renamed over Path, so an
/// existing checkpoint survives a failed write).
void write_checkpoint(const OptimizerCheckpoint &C,
                      const std::filesystem::path &Path);
/// Reads a checkpoint file; throws an Error saying what is wrong with it.
OptimizerCheckpoint read_checkpoint(const std::filesystem::path &Path);

/// Saves Opt's state_dict (and Scheduler's, when given) to Path: a .pt/.pth
/// path as torch.save would (the optimizer's state_dict, or {'optimizer',
/// 'scheduler'}), any other as an "NNGOPTCK" file.
void save(const Optimizer &Opt, const std::filesystem::path &Path,
          const LRScheduler *Scheduler = nullptr);
/// Loads a file written by save(), or a .pt file PyTorch wrote (an
/// optimizer state_dict, or a dict with 'optimizer' and 'scheduler' or
/// 'lr_scheduler' entries), into Opt (and Scheduler, which the file must
/// then hold). An "NNGOPTCK" file's optimizer must have Opt's name;
/// everything is checked before anything changes.
void load(Optimizer &Opt, const std::filesystem::path &Path,
          LRScheduler *Scheduler = nullptr);

} // namespace nng::optim
