//===- Optim.h - All of nng::optim ----------------------------------------===//
//
// One include for the optimizers (SGD, Adam, AdamW), the learning-rate
// schedulers (StepLR, CosineAnnealingLR) and the checkpoint file functions,
// like `import torch.optim`. docs/optim.md is the user guide.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/optim/Adam.h"
#include "nngraph/frontend/optim/LRScheduler.h"
#include "nngraph/frontend/optim/Optimizer.h"
#include "nngraph/frontend/optim/OptimizerCheckpoint.h"
#include "nngraph/frontend/optim/SGD.h"
