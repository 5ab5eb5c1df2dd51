//===- FlatTestUtils.h - Helpers for the safetensors/.npz tests -*- C++ -*-===//
//
// Shared by SafetensorsTest.cpp, SafetensorsHostileTest.cpp, NpzTest.cpp
// and NpzHostileTest.cpp: deterministic tensors of every dtype (the same
// values tests/weights/scripts/flat_oracle.py generates), temporary
// folders, a minimal stored-zip builder for hand-made hostile archives, a
// .npy builder, finding /usr/bin/python3 (or $NNGRAPH_PYTHON) and running
// the oracle script, and an expectError helper that checks an nng::Error's
// message names the file and the offending item.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/Tensor.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace nng::weights::flattest {

/// The dtypes both flat formats share with numpy, plus BF16 (safetensors).
std::vector<DType> allDTypes();

/// A tensor of shape Sh whose element I is i*0.5-3 (floats), the int64
/// i*7-11 wrapped to the type (integers) or i%3==0 (bool).
rt::Tensor pattern(DType T, const Shape &Sh);

/// A fresh empty folder for the current test.
std::filesystem::path freshDir();

/// The whole file.
std::string slurp(const std::filesystem::path &P);
void spit(const std::filesystem::path &P, const std::string &Bytes);

/// A stored zip archive with the given (name, bytes) entries.
std::string makeZip(const std::vector<std::pair<std::string, std::string>> &E);

/// A .npy file with a raw header dict and data (header padded to 64).
std::string makeNpy(const std::string &Dict, const std::string &Data,
                    int Major = 1);

/// The little-endian bytes of a safetensors file with header Json and Data.
std::string makeSafetensors(const std::string &Json, const std::string &Data);

/// Runs tests/weights/scripts/flat_oracle.py with Args. Returns false (and
/// sets *Skip) when no Python with numpy exists; *Out receives the output.
/// A failing script (other than for a missing numpy) is a test failure.
bool runOracle(const std::string &Args, std::string *Out, std::string *Skip);

/// Expects Fn to throw nng::Error whose message contains every one of
/// Needles (file name, key, problem).
void expectError(const std::function<void()> &Fn,
                 const std::vector<std::string> &Needles);

} // namespace nng::weights::flattest
