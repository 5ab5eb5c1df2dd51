//===- KernelsTraining.h - f32 loops of the fused training ops  -*- C++ -*-===//
//
// The cpu backend's kernels of nng.BatchNormTraining,
// nng.BatchNormTrainingGrad and nng.ReluGrad (KernelsTraining.cpp): typed f32
// loops, with the reference kernel serving other dtypes and reporting
// errors.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "../reference/Interpreter.h"

namespace nng::backends::cpu {

/// The f32 loops of nng.BatchNormTraining, nng.BatchNormTrainingGrad and
/// nng.ReluGrad: false when they do not serve C (the reference kernel
/// then runs; the kernel table, KernelTable.def, names them).
bool runBatchNormTraining(reference::KernelContext &C);
bool runBatchNormTrainingGrad(reference::KernelContext &C);
bool runReluGrad(reference::KernelContext &C);

} // namespace nng::backends::cpu
