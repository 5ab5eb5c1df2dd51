//===- PtTestUtils.h - Helpers for the .pt reader/writer tests ---*- C++ -*-===//
//
// Shared by PtTest.cpp and PtHostileTest.cpp: running the torch oracle
// (tests/weights/scripts/pt_oracle.py, with $NNGRAPH_PYTHON or
// /usr/bin/python3), the manifest format that script uses to describe a
// checkpoint (JSON structure + raw tensor bytes, compared exactly, with
// storage-sharing ids), hand-built zip archives (any method, sizes and
// names, for hostile files) and pickle byte builders.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace nng::weights::pttest {

/// A fresh empty folder for the current test.
std::filesystem::path freshDir();
std::string slurp(const std::filesystem::path &P);
void spit(const std::filesystem::path &P, const std::string &Bytes);

/// Runs pt_oracle.py with Args. Returns false and sets *Skip when no Python
/// with torch exists; a failing script is a test failure (returns false,
/// *Skip empty). *Out receives the output.
bool runOracle(const std::string &Args, std::string *Out, std::string *Skip);

/// Expects O to equal the manifest Path.json + Path.raw (see
/// pt_oracle.py): structure, key order, dtypes, shapes, bitwise values,
/// and tensors share a Storage exactly when their ids are equal.
void expectMatchesManifest(const Object &O, const std::string &Path);
/// Writes the manifest of O to Path.json + Path.raw.
void writeManifest(const Object &O, const std::string &Path);

/// One entry of a hand-built zip archive.
struct RawEntry {
  std::string Name;
  std::string Data;          ///< the bytes stored (compressed when Method 8)
  uint16_t Method = 0;
  int64_t DeclaredSize = -1; ///< uncompressed size; -1: Data.size()
  int64_t Crc = -1;          ///< -1: CRC of Data
};
/// A zip archive with exactly these entries (no checks).
std::string makeZip(const std::vector<RawEntry> &Entries);
/// Raw deflate of Bytes.
std::string deflateRaw(const std::string &Bytes);
/// A .pt archive: archive/data.pkl = Pickle, archive/data/<key> = bytes.
std::string makePt(const std::string &Pickle,
                   const std::vector<std::pair<std::string, std::string>>
                       &Storages = {});

/// Pickle pieces (protocol 2).
std::string pklString(const std::string &S);
std::string pklInt(int64_t V);
/// A _rebuild_tensor_v2 call on storage Key (FloatStorage, Numel elements).
std::string pklTensor(const std::string &Key, int64_t Numel, int64_t Offset,
                      const std::vector<int64_t> &Sizes,
                      const std::vector<int64_t> &Strides);

/// Expects Fn to throw nng::Error whose message (with context) contains
/// every one of Needles.
void expectError(const std::function<void()> &Fn,
                 const std::vector<std::string> &Needles);

} // namespace nng::weights::pttest
