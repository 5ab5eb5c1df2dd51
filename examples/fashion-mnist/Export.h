//===- Export.h - The trained model as ONNX, the data as .npz ---*- C++ -*-===//
//
// What fashion-mnist-train writes for the int8 accuracy check
// (quant_accuracy.sh, docs/quantization.md): --export traces the trained
// model in eval mode with a symbolic batch dim N and saves the graph as
// ONNX (or nngraph text, by extension); --export-data writes the
// calibration images, the test images and the test labels as .npz files
// that nngraph-quantize --calibration and nngraph-run --inputs read. The
// images are normalized exactly as training feeds them (gatherBatch).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "FashionMnist.h"

#include "nngraph/frontend/nn/Module.h"

#include <cstdint>
#include <string>

namespace fmnist {

/// The number of training images in calib.npz (fewer when fewer are
/// loaded).
inline constexpr int64_t CalibrationImages = 500;

/// Checks that Path has an extension the model can be saved with (".onnx"
/// or ".nng"), before any training; throws std::invalid_argument naming it.
void checkExportPath(const std::string &Path);

/// Traces Model in eval mode (its mode is restored afterwards) with the
/// input f32[N, 1, 28, 28] and returns the graph input's name. Writes the
/// graph to Path (.onnx or .nng) unless Path is empty. Prints one line.
std::string exportModel(nng::nn::ModuleBase &Model, const std::string &Path);

/// Creates Dir and writes, each atomically:
///   Dir/calib.npz        the first CalibrationImages images of Train as
///                        InputName: f32[C, 1, 28, 28];
///   Dir/test.npz         every image of Test as InputName: f32[T, 1, 28, 28];
///   Dir/test_labels.npz  their labels as "labels": i64[T].
/// Prints one line. Throws naming the file on failure.
void exportData(const Dataset &Train, const Dataset &Test,
                const std::string &Dir, const std::string &InputName);

} // namespace fmnist
