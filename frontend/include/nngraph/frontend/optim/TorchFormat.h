//===- TorchFormat.h - Optimizer state as torch.save writes it --*- C++ -*-===//
//
// An optimizer's and a scheduler's state_dict as the Python objects
// torch.optim returns ({'state': {index: {name: tensor}}, 'param_groups':
// [{option: value, ..., 'params': [index, ...]}]}; a scheduler's __dict__
// fields), as weights::Object trees: what a .pt checkpoint holds, so a
// checkpoint written here resumes in PyTorch with
// torch.optim.X.load_state_dict(torch.load(path)) and one PyTorch wrote
// resumes here. optim::save/load (OptimizerCheckpoint.h) use them for
// .pt/.pth paths; a checkpoint with the model and other fields is built
// with them and weights::writePt.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/optim/LRScheduler.h"
#include "nngraph/frontend/optim/Optimizer.h"
#include "nngraph/frontend/weights/Object.h"

#include <string>

namespace nng::optim {

/// SD as torch.optim's state_dict(): group options in their order, then
/// 'params'; state tensors as tensors (Adam's 'step' a 0-d float32 one, as
/// PyTorch 1.13 keeps it), None as None, numbers as floats; tuples (betas)
/// as tuples.
weights::Object to_object(const OptimizerStateDict &SD);
/// A scheduler's state_dict as torch's (base_lrs and _last_lr as lists).
weights::Object to_object(const SchedulerStateDict &SD);

/// The optimizer state_dict an object in torch's structure holds; throws an
/// Error naming Where and the offending key when it is not one.
OptimizerStateDict optimizer_state_dict_from_object(const weights::Object &O,
                                                    const std::string &Where);
/// The scheduler state_dict an object (a dict of option values) holds.
SchedulerStateDict scheduler_state_dict_from_object(const weights::Object &O,
                                                    const std::string &Where);

} // namespace nng::optim
