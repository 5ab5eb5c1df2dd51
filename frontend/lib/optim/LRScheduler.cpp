//===- LRScheduler.cpp - StepLR and CosineAnnealingLR ---------------------===//
//
// torch.optim.lr_scheduler (PyTorch 1.13) in C++: the _LRScheduler
// protocol (initial_lr, base_lrs, the first step at construction, step()
// bumping last_epoch and writing get_lr() into the groups, _last_lr) and
// the chainable get_lr of StepLR and CosineAnnealingLR, transcribed term by
// term so that the floating-point results equal Python's.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/optim/LRScheduler.h"
#include "nngraph/runtime/Error.h"

#include <cmath>
#include <numbers>

namespace nng::optim {

namespace {

/// Python's a % b for b > 0 (never negative).
int64_t pyMod(int64_t A, int64_t B) {
  int64_t R = A % B;
  return R < 0 ? R + B : R;
}

/// SD[Key]; throws naming the key when it is absent.
const OptionValue &field(const SchedulerStateDict &SD, const std::string &Key,
                         const std::string &Where) {
  const OptionValue *V = SD.find(Key);
  if (!V)
    fail(ErrorKind::InvalidArgument, Where, ": the state dict has no '", Key,
         "'; load a state_dict saved by the same kind of scheduler");
  return *V;
}

int64_t intField(const SchedulerStateDict &SD, const std::string &Key,
                 const std::string &Where) {
  const OptionValue &V = field(SD, Key, Where);
  if (!V.is_number())
    fail(ErrorKind::InvalidArgument, Where, ": '", Key, "' is ", V.describe(),
         "; it must be an int");
  try {
    return V.to_int();
  } catch (const Error &) {
    fail(ErrorKind::InvalidArgument, Where, ": '", Key, "' is ", V.repr(),
         "; it must be an int");
  }
}

double numberField(const SchedulerStateDict &SD, const std::string &Key,
                   const std::string &Where) {
  const OptionValue &V = field(SD, Key, Where);
  if (!V.is_number())
    fail(ErrorKind::InvalidArgument, Where, ": '", Key, "' is ", V.describe(),
         "; it must be a number");
  return V.to_double();
}

} // namespace

// --- LRScheduler
// -------------------------------------------------------------------

LRScheduler::LRScheduler(std::string Name, Optimizer &Opt, int64_t LastEpoch)
    : Opt(Opt), LastEpoch(LastEpoch), Name(std::move(Name)) {}

LRScheduler::~LRScheduler() = default;

void LRScheduler::initialStep() {
  // Attach to the optimizer only now, once the derived constructor has
  // checked its arguments: a refused scheduler leaves the groups alone.
  std::vector<ParamGroup> &Groups = Opt.param_groups();
  if (LastEpoch == -1) {
    for (ParamGroup &G : Groups)
      G.options.set_default("initial_lr", G.lr());
  } else {
    for (size_t I = 0; I < Groups.size(); ++I)
      if (!Groups[I].options.contains("initial_lr"))
        fail(ErrorKind::InvalidArgument, Name,
             ": param 'initial_lr' is not specified in param_groups[", I,
             "] when resuming an optimizer (last_epoch ", LastEpoch,
             "); construct with last_epoch = -1, or load the optimizer's "
             "state_dict first");
  }
  BaseLrs.clear();
  for (const ParamGroup &G : Groups)
    BaseLrs.push_back(G.options.number("initial_lr"));
  StepCount = 0;
  step();
}

std::vector<double> LRScheduler::currentLrs() const {
  std::vector<double> Lrs;
  for (const ParamGroup &G : Opt.param_groups())
    Lrs.push_back(G.lr());
  return Lrs;
}

void LRScheduler::step() {
  std::vector<ParamGroup> &Groups = Opt.param_groups();
  if (Groups.size() != BaseLrs.size())
    fail(ErrorKind::InvalidArgument, Name, ".step(): the optimizer has ",
         Groups.size(), " param groups but the scheduler was made for ",
         BaseLrs.size(), "; create the scheduler after adding all groups");
  ++StepCount;
  ++LastEpoch;
  std::vector<double> Values = get_lr();
  for (size_t I = 0; I < Groups.size(); ++I)
    Groups[I].set_lr(Values[I]);
  LastLr = currentLrs();
}

SchedulerStateDict LRScheduler::state_dict() const {
  SchedulerStateDict SD = ownFields();
  SD.set("base_lrs", BaseLrs);
  SD.set("last_epoch", LastEpoch);
  SD.set("verbose", false);
  SD.set("_step_count", StepCount);
  SD.set("_get_lr_called_within_step", false);
  SD.set("_last_lr", LastLr);
  return SD;
}

void LRScheduler::check_state_dict(const SchedulerStateDict &SD) const {
  std::string Where = Name + ".load_state_dict";
  for (const char *Key : {"base_lrs", "_last_lr"}) {
    const OptionValue &V = field(SD, Key, Where);
    if (!V.is_tuple() || V.to_tuple().size() != BaseLrs.size())
      fail(ErrorKind::InvalidArgument, Where, ": '", Key, "' is ", V.repr(),
           "; it must list one lr per param group (", BaseLrs.size(), ")");
  }
  intField(SD, "last_epoch", Where);
  intField(SD, "_step_count", Where);
  checkOwnFields(SD);
}

void LRScheduler::load_state_dict(const SchedulerStateDict &SD) {
  check_state_dict(SD);
  std::string Where = Name + ".load_state_dict";
  setOwnFields(SD);
  BaseLrs = SD.at("base_lrs").to_tuple();
  LastLr = SD.at("_last_lr").to_tuple();
  LastEpoch = intField(SD, "last_epoch", Where);
  StepCount = intField(SD, "_step_count", Where);
}

// --- StepLR
// -------------------------------------------------------------------------

StepLR::StepLR(Optimizer &Opt, int64_t StepSize, double Gamma,
               int64_t LastEpoch)
    : LRScheduler("StepLR", Opt, LastEpoch), StepSize(StepSize), Gamma(Gamma) {
  if (StepSize <= 0)
    fail(ErrorKind::InvalidArgument, "StepLR: step_size is ", StepSize,
         "; it must be a positive number of epochs");
  initialStep();
}

std::vector<double> StepLR::get_lr() const {
  std::vector<double> Lrs = currentLrs();
  if (LastEpoch == 0 || pyMod(LastEpoch, StepSize) != 0)
    return Lrs;
  for (double &Lr : Lrs)
    Lr = Lr * Gamma;
  return Lrs;
}

OptionDict StepLR::ownFields() const {
  return {{"step_size", StepSize}, {"gamma", Gamma}};
}

void StepLR::checkOwnFields(const SchedulerStateDict &SD) const {
  std::string Where = "StepLR.load_state_dict";
  int64_t S = intField(SD, "step_size", Where);
  numberField(SD, "gamma", Where);
  if (S <= 0)
    fail(ErrorKind::InvalidArgument, Where, ": step_size is ", S,
         "; it must be positive");
}

void StepLR::setOwnFields(const SchedulerStateDict &SD) {
  StepSize = SD.at("step_size").to_int();
  Gamma = SD.number("gamma");
}

// --- CosineAnnealingLR
// --------------------------------------------------------------

CosineAnnealingLR::CosineAnnealingLR(Optimizer &Opt, int64_t TMax,
                                     double EtaMin, int64_t LastEpoch)
    : LRScheduler("CosineAnnealingLR", Opt, LastEpoch), TMax(TMax),
      EtaMin(EtaMin) {
  if (TMax <= 0)
    fail(ErrorKind::InvalidArgument, "CosineAnnealingLR: T_max is ", TMax,
         "; it must be a positive number of epochs");
  initialStep();
}

std::vector<double> CosineAnnealingLR::get_lr() const {
  constexpr double Pi = std::numbers::pi;
  const double T = static_cast<double>(TMax);
  const double E = static_cast<double>(LastEpoch);
  std::vector<double> Lrs = currentLrs();
  if (LastEpoch == 0)
    return Lrs;
  if (StepCount == 1 && LastEpoch > 0) {
    // Resuming: the closed form from the base lrs.
    for (size_t I = 0; I < Lrs.size(); ++I)
      Lrs[I] = EtaMin + (BaseLrs[I] - EtaMin) * (1 + std::cos(E * Pi / T)) / 2;
    return Lrs;
  }
  if (pyMod(LastEpoch - 1 - TMax, 2 * TMax) == 0) {
    for (size_t I = 0; I < Lrs.size(); ++I)
      Lrs[I] = Lrs[I] + (BaseLrs[I] - EtaMin) * (1 - std::cos(Pi / T)) / 2;
    return Lrs;
  }
  for (double &Lr : Lrs)
    Lr = (1 + std::cos(Pi * E / T)) / (1 + std::cos(Pi * (E - 1) / T)) *
             (Lr - EtaMin) +
         EtaMin;
  return Lrs;
}

OptionDict CosineAnnealingLR::ownFields() const {
  return {{"T_max", TMax}, {"eta_min", EtaMin}};
}

void CosineAnnealingLR::checkOwnFields(const SchedulerStateDict &SD) const {
  std::string Where = "CosineAnnealingLR.load_state_dict";
  int64_t T = intField(SD, "T_max", Where);
  numberField(SD, "eta_min", Where);
  if (T <= 0)
    fail(ErrorKind::InvalidArgument, Where, ": T_max is ", T,
         "; it must be positive");
}

void CosineAnnealingLR::setOwnFields(const SchedulerStateDict &SD) {
  TMax = SD.at("T_max").to_int();
  EtaMin = SD.number("eta_min");
}

} // namespace nng::optim
