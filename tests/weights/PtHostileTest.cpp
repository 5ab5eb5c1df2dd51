//===- PtHostileTest.cpp - Hostile .pt files give errors ---------*- C++ -*-===//
//
// Each hostile file must give an nng::Error naming the file and the
// offending item, and nothing may execute: pickles naming os.system,
// builtins.eval, subprocess.Popen (GLOBAL and STACK_GLOBAL), calls and
// BUILD on things that are not allowed, storages larger than their zip
// entry, views reaching past their storage, zip entries named ../x, zip
// bombs, the legacy format, stack underflow, memo misuse, huge lengths,
// deep nesting, self-reference, exponential sharing, and a small valid
// file truncated at every byte boundary or with every single bit flipped.
// With NNGRAPH_WRITE_FUZZ_SEEDS=DIR the corpus is also written to DIR
// (how tests/fuzz/seeds/pt was made).
//
//===----------------------------------------------------------------------===//

#include "PtTestUtils.h"

#include "nngraph/frontend/weights/Formats.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <zlib.h>

using namespace nng;
using namespace nng::weights;
using namespace nng::weights::pttest;
namespace fs = std::filesystem;

namespace {

/// Writes Bytes as a fuzz seed when NNGRAPH_WRITE_FUZZ_SEEDS is set.
void seed(const std::string &Name, const std::string &Bytes) {
  if (const char *D = std::getenv("NNGRAPH_WRITE_FUZZ_SEEDS");
      D && *D && Bytes.size() <= 4096) // run-fuzzer.sh: -max_len=4096
    spit(fs::path(D) / (Name + ".pt"), Bytes);
}

/// Expects readPtFromBytes(Bytes) to fail with every needle (the file name
/// "hostile.pt" always).
void expectHostile(const std::string &Name, const std::string &Bytes,
                   std::vector<std::string> Needles) {
  SCOPED_TRACE(Name);
  seed(Name, Bytes);
  Needles.push_back(Name + ".pt");
  expectError([&] { readPtFromBytes(Bytes, Name + ".pt"); }, Needles);
}

/// A string literal with its embedded NULs.
template <size_t N> std::string lit(const char (&S)[N]) {
  return std::string(S, N - 1);
}

std::string floats(std::initializer_list<float> V) {
  return std::string(reinterpret_cast<const char *>(std::data(V)),
                     V.size() * sizeof(float));
}

/// A valid small file: {'w': tensor [2, 2]} plus a view of it.
std::string smallValid() {
  std::string P = "\x80\x02" "ccollections\nOrderedDict\n)R(" + pklString("w") +
                  pklTensor("0", 4, 0, {2, 2}, {2, 1}) + pklString("v") +
                  pklTensor("0", 4, 1, {2}, {2}) + "u.";
  return makePt(P, {{"0", floats({1, 2, 3, 4})}});
}

const char *Marker = "/tmp/nngraph-pt-hostile-marker";

} // namespace

TEST(PtHostile, SmallValidFileReads) {
  std::string B = smallValid();
  seed("valid-small", B);
  Object O = readPtFromBytes(B, "valid.pt");
  ASSERT_TRUE(O.isDict());
  EXPECT_EQ(O.find("w")->toTensor().toDoubleVector(),
            (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(O.find("v")->toTensor().toDoubleVector(), (std::vector<double>{2, 4}));
  EXPECT_EQ(O.find("w")->toTensor().storage(), O.find("v")->toTensor().storage());
  // A small file of the writer (aligned entries, nested containers).
  rt::Tensor W = O.find("w")->toTensor();
  Object Small = Object::dict(
      {{Object::string("w"), Object::tensor(W)},
       {Object::string("wt"), Object::tensor(W.permute({1, 0}))},
       {Object::string("meta"),
        Object::dict({{Object::string("epoch"), Object::integer(3)},
                      {Object::string("lr"), Object::floating(0.5)},
                      {Object::integer(7),
                       Object::list({Object(), Object::boolean(true),
                                     Object::string("x")})}})}});
  fs::path P = freshDir() / "writer.pt";
  writePt(P.string(), Small);
  std::string WB = slurp(P);
  seed("valid-writer", WB);
  Object Back = readPtFromBytes(WB, "writer.pt");
  EXPECT_EQ(Back.summary(), Small.summary());
}

TEST(PtHostile, ForbiddenGlobalsNeverRun) {
  std::remove(Marker);
  std::string Cmd = pklString(std::string("touch ") + Marker);
  // GLOBAL (protocol 2) as pickle.dumps writes a __reduce__ to os.system.
  expectHostile("os-system",
                makePt("\x80\x02" "cposix\nsystem\n" + Cmd + "\x85R."),
                {"posix.system", "not allowed", "byte offset 2"});
  expectHostile("os-system2", makePt("\x80\x02" "cos\nsystem\n" + Cmd + "\x85R."),
                {"os.system", "not allowed"});
  // STACK_GLOBAL (protocol 4).
  expectHostile("builtins-eval",
                makePt("\x80\x04\x8c\x08" "builtins\x94\x8c\x04" "eval\x94\x93" +
                       pklString("__import__('os')") + "\x85R."),
                {"builtins.eval", "not allowed", "byte offset 20"});
  expectHostile("subprocess-popen",
                makePt("\x80\x02" "csubprocess\nPopen\n(" + pklString("touch") +
                       "tR."),
                {"subprocess.Popen", "not allowed"});
  // Hidden inside a state dict, after valid entries.
  expectHostile("nested-global",
                makePt("\x80\x02" "ccollections\nOrderedDict\n)R(" +
                           pklString("w") + pklTensor("0", 4, 0, {4}, {1}) +
                           pklString("x") + "cos\nsystem\n" + Cmd + "\x85Ru.",
                       {{"0", floats({1, 2, 3, 4})}}),
                {"os.system"});
  EXPECT_FALSE(fs::exists(Marker)) << "something executed";
}

TEST(PtHostile, CallsOnThingsNotAllowed) {
  // REDUCE on an allowed global that is not callable (a storage class).
  expectHostile("reduce-storage-class",
                makePt("\x80\x02" "ctorch\nFloatStorage\n" + pklInt(10) + "\x85R."),
                {"REDUCE", "torch.FloatStorage", "not allowed"});
  // REDUCE on a non-callable value.
  expectHostile("reduce-on-string",
                makePt("\x80\x02" + pklString("os.system") + ")R."),
                {"REDUCE", "string"});
  // BUILD on a global (setstate on a class).
  expectHostile("build-on-global",
                makePt("\x80\x02" "ctorch\nFloatStorage\n}b."),
                {"BUILD", "torch.FloatStorage"});
  // NEWOBJ on a rebuild function.
  expectHostile("newobj-rebuild",
                makePt("\x80\x02" "ctorch._utils\n_rebuild_tensor_v2\n)\x81."),
                {"NEWOBJ", "_rebuild_tensor_v2"});
  // A persistent id that is not a storage.
  expectHostile("persid-module",
                makePt("\x80\x02(" + pklString("module") + pklInt(1) + "tQ."),
                {"persistent id"});
  // Text opcodes of protocol 0 that call (INST/OBJ) are unknown here.
  expectHostile("inst-opcode", makePt("(ios\nsystem\n."), {"opcode 0x69"});
}

TEST(PtHostile, StorageAndViewBounds) {
  // The pickle says 100 floats; the entry has 4.
  expectHostile("storage-too-big",
                makePt("\x80\x02" + pklTensor("0", 100, 0, {100}, {1}) + ".",
                       {{"0", floats({1, 2, 3, 4})}}),
                {"storage '0'", "100 elements", "16 bytes"});
  expectHostile("offset-past-storage",
                makePt("\x80\x02" + pklTensor("0", 4, 3, {2}, {1}) + ".",
                       {{"0", floats({1, 2, 3, 4})}}),
                {"storage '0'", "element 4", "past the end"});
  expectHostile("stride-past-storage",
                makePt("\x80\x02" + pklTensor("0", 4, 0, {2, 2}, {3, 1}) + ".",
                       {{"0", floats({1, 2, 3, 4})}}),
                {"storage '0'", "past the end"});
  expectHostile("huge-stride",
                makePt("\x80\x02" + pklTensor("0", 4, 0, {3}, {0x7fffffff}) + ".",
                       {{"0", floats({1, 2, 3, 4})}}),
                {"storage '0'"});
  expectHostile("negative-size",
                makePt("\x80\x02" + pklTensor("0", 4, 0, {-2}, {1}) + ".",
                       {{"0", floats({1, 2, 3, 4})}}),
                {"negative"});
  expectHostile("missing-storage",
                makePt("\x80\x02" + pklTensor("7", 4, 0, {4}, {1}) + "."),
                {"storage '7'", "archive/data/7"});
}

TEST(PtHostile, ZipAttacks) {
  std::string P = "\x80\x02N.";
  expectHostile("dotdot-entry",
                makeZip({{"archive/data.pkl", P}, {"../x", "evil"}}),
                {"'../x'", ".."});
  expectHostile("absolute-entry",
                makeZip({{"archive/data.pkl", P}, {"/etc/x", "evil"}}),
                {"'/etc/x'", "absolute"});
  // 1 GiB declared from a few bytes of deflate: refused before inflating.
  std::string Zeros(1 << 20, '\0');
  std::string Bomb = deflateRaw(Zeros);
  expectHostile("zip-bomb",
                makeZip({{"archive/data.pkl", Bomb, 8, int64_t(1) << 30}}),
                {"archive/data.pkl", "zip bomb"});
  // Declared smaller than it inflates to: never written past.
  expectHostile("inflate-longer-than-declared",
                makeZip({{"archive/data.pkl", Bomb, 8, 1000}}),
                {"archive/data.pkl", "does not inflate to its declared 1000"});
  expectHostile("bad-crc", makeZip({{"archive/data.pkl", P, 0, -1, 1234}}),
                {"archive/data.pkl", "CRC-32"});
  expectHostile("not-a-pt", makeZip({{"weights.bin", "x"}}), {"data.pkl"});
  // A deflated pickle reads fine (and is seed material).
  std::string Ok = makeZip({{"archive/data.pkl", deflateRaw(P), 8,
                             int64_t(P.size()),
                             int64_t(crc32(0, reinterpret_cast<const Bytef *>(P.data()),
                                           static_cast<uInt>(P.size())))}});
  seed("valid-deflated", Ok);
  EXPECT_TRUE(readPtFromBytes(Ok, "deflated.pt").isNone());
}

TEST(PtHostile, LegacyFormat) {
  std::string Legacy = "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19"
                       ".\x80\x02M\xe9\x03.";
  expectHostile("legacy", Legacy,
                {"legacy", "torch >= 1.6", "torch.save"});
  expectHostile("not-zip", std::string("hello world"), {"not a torch.save zip"});
  expectHostile("empty", std::string(), {"not a torch.save zip"});
}

TEST(PtHostile, PickleMachineAbuse) {
  expectHostile("stack-underflow", makePt("\x80\x02" "a."), {"stack underflow"});
  expectHostile("pop-below-mark", makePt("\x80\x02N(0."), {"stack underflow"});
  expectHostile("memo-unset", makePt("\x80\x02h\x05."), {"memo entry 5"});
  expectHostile("huge-string", makePt("\x80\x02X\xff\xff\xff\xff" "abc."),
                {"truncated pickle"});
  expectHostile("huge-long", makePt("\x80\x02\x8b\xff\xff\xff\x7f."),
                {"does not fit in 64 bits"});
  expectHostile("no-stop", makePt("\x80\x02N"), {"truncated pickle"});
  expectHostile("bad-protocol", makePt("\x80\x09N."), {"protocol 9"});
  expectHostile("set-on-list", makePt("\x80\x02]NNs."), {"SETITEM"});
  expectHostile("float-key", makePt(lit("\x80\x02}G\x3f\xf0\0\0\0\0\0\0Ns.")),
                {"dict key is a float"});
  // 200000 nested lists: refused, no stack overflow in parse or teardown.
  std::string Deep = "\x80\x02";
  for (int I = 0; I < 200000; ++I)
    Deep += "]";
  for (int I = 0; I < 199999; ++I)
    Deep += "a";
  expectHostile("deep-nesting", makePt(Deep + "."), {"deeper than"});
  std::string DeepMarks = "\x80\x02";
  for (int I = 0; I < 200000; ++I)
    DeepMarks += "(";
  expectHostile("deep-marks", makePt(DeepMarks + "."), {"stack underflow"});
  // A list containing itself.
  expectHostile("self-reference", makePt(lit("\x80\x02]q\x00h\x00" "a.")),
                {"refers to itself"});
  // 2^64 leaves from 64 DUP+TUPLE2 pairs.
  std::string Exp = "\x80\x02N";
  for (int I = 0; I < 64; ++I)
    Exp += "2\x86";
  expectHostile("exponential-sharing", makePt(Exp + "."), {"expands to more"});
}

TEST(PtHostile, TruncationAtEveryByte) {
  std::string B = smallValid();
  for (size_t N = 0; N < B.size(); ++N) {
    try {
      readPtFromBytes(std::string_view(B.data(), N), "cut.pt");
      ADD_FAILURE() << "a file cut to " << N << " bytes was accepted";
    } catch (const Error &E) {
      EXPECT_NE(std::string(E.what()).find("cut.pt"), std::string::npos)
          << E.what();
    }
  }
}

TEST(PtHostile, EveryBitFlip) {
  // Flips may give an error or a (different) valid object; never a crash.
  std::string B = smallValid();
  int Errors = 0, Accepted = 0;
  for (size_t I = 0; I < B.size(); ++I)
    for (int Bit = 0; Bit < 8; ++Bit) {
      std::string C = B;
      C[I] = static_cast<char>(C[I] ^ (1 << Bit));
      try {
        Object O = readPtFromBytes(C, "flip.pt");
        (void)O.summary();
        ++Accepted;
      } catch (const Error &E) {
        ++Errors;
      }
    }
  EXPECT_GT(Errors, 0);
  std::cout << "bit flips: " << Errors << " errors, " << Accepted
            << " accepted\n";
}
