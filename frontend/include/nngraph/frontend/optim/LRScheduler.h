//===- LRScheduler.h - Learning-rate schedulers ---------------------------===//
//
// torch.optim.lr_scheduler's StepLR and CosineAnnealingLR (PyTorch 1.13).
// A scheduler changes the "lr" of its optimizer's parameter groups each
// step() with PyTorch's recursive (chainable) get_lr: the new lr is computed
// from the group's current lr, so lr changes made by other code (another
// scheduler, the user) carry through exactly as in PyTorch. Constructing a
// scheduler sets each group's "initial_lr" (kept in the optimizer's
// state_dict, as in PyTorch) and takes the first step (last_epoch 0).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/optim/Optimizer.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nng::optim {

/// A scheduler's state in PyTorch's structure (its __dict__ without the
/// optimizer): "base_lrs", "last_epoch", "verbose", "_step_count",
/// "_get_lr_called_within_step", "_last_lr" and the scheduler's own fields.
using SchedulerStateDict = OptionDict;

/// The base of the schedulers (torch's _LRScheduler).
class LRScheduler {
public:
  virtual ~LRScheduler();
  LRScheduler(const LRScheduler &) = delete;
  LRScheduler &operator=(const LRScheduler &) = delete;

  /// "StepLR", "CosineAnnealingLR".
  const std::string &name() const { return Name; }
  /// Advances one epoch and sets the groups' lr. Call it after
  /// optimizer.step().
  void step();
  /// The lr of each group as the last step() set it.
  const std::vector<double> &get_last_lr() const { return LastLr; }
  /// The epoch index of the last step() (0 after construction).
  int64_t last_epoch() const { return LastEpoch; }
  /// The groups' initial_lr.
  const std::vector<double> &base_lrs() const { return BaseLrs; }
  Optimizer &optimizer() const { return Opt; }

  SchedulerStateDict state_dict() const;
  /// Restores a state_dict; the optimizer's groups are not touched (load
  /// the optimizer's own state_dict for their lr). Throws, leaving the
  /// scheduler unchanged, when a field is missing, has the wrong kind, or
  /// base_lrs does not have one entry per group.
  void load_state_dict(const SchedulerStateDict &StateDict);
  /// Checks StateDict as load_state_dict does, without loading it.
  void check_state_dict(const SchedulerStateDict &StateDict) const;

protected:
  /// Remembers Opt; initialStep() attaches to it.
  LRScheduler(std::string Name, Optimizer &Opt, int64_t LastEpoch);
  /// PyTorch's base constructor and _initial_step, which derived
  /// constructors call once their arguments are checked: LastEpoch -1
  /// starts fresh (setting each group's initial_lr), another value resumes
  /// and needs initial_lr in every group; then base_lrs and the first step.
  void initialStep();
  /// The chainable form: the new lr of every group for LastEpoch.
  virtual std::vector<double> get_lr() const = 0;
  /// The scheduler's own fields, in PyTorch's order.
  virtual OptionDict ownFields() const = 0;
  /// Checks the own fields in SD (throws saying what is wrong).
  virtual void checkOwnFields(const SchedulerStateDict &SD) const = 0;
  /// Sets the own fields from SD (checked before).
  virtual void setOwnFields(const SchedulerStateDict &SD) = 0;
  /// lr of each optimizer group now.
  std::vector<double> currentLrs() const;

  Optimizer &Opt;
  std::vector<double> BaseLrs;
  int64_t LastEpoch;
  /// How many times step() ran (PyTorch's _step_count).
  int64_t StepCount = 0;
  std::vector<double> LastLr;

private:
  std::string Name;
};

/// Multiplies the lr by gamma every step_size epochs.
class StepLR final : public LRScheduler {
public:
  StepLR(Optimizer &Opt, int64_t step_size, double gamma = 0.1,
         int64_t last_epoch = -1);

protected:
  std::vector<double> get_lr() const override;
  OptionDict ownFields() const override;
  void checkOwnFields(const SchedulerStateDict &SD) const override;
  void setOwnFields(const SchedulerStateDict &SD) override;

private:
  int64_t StepSize;
  double Gamma;
};

/// Cosine annealing from the initial lr to eta_min over T_max epochs (and
/// back up over the next T_max, as PyTorch's recursion does).
class CosineAnnealingLR final : public LRScheduler {
public:
  CosineAnnealingLR(Optimizer &Opt, int64_t T_max, double eta_min = 0,
                    int64_t last_epoch = -1);

protected:
  std::vector<double> get_lr() const override;
  OptionDict ownFields() const override;
  void checkOwnFields(const SchedulerStateDict &SD) const override;
  void setOwnFields(const SchedulerStateDict &SD) override;

private:
  int64_t TMax;
  double EtaMin;
};

} // namespace nng::optim
