//===- FastTraining.h - f32 loops of the fused training ops ----*- C++ -*-===//
//
// The cpu backend's kernels of nng.BatchNormTraining,
// nng.BatchNormTrainingGrad and nng.ReluGrad (FastTraining.cpp): typed f32
// loops, with the reference kernel serving other dtypes and reporting
// errors.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "../reference/Interpreter.h"

namespace nng::backends::cpu {

/// The kernel of a fused training op N, or null when N is not one.
reference::NodeKernel trainingKernelFor(const ir::Node &N);

/// Calls the training loops served themselves since the process started.
int64_t trainingFastCallCount();

} // namespace nng::backends::cpu
