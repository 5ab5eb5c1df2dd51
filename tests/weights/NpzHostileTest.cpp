//===- NpzHostileTest.cpp - Refusing hostile .npz archives ------*- C++ -*-===//
//
// The hostile corpus for the .npz reader: zip entry names with "../",
// entries that are not .npy, object arrays (never unpickled), unsupported
// and structured descrs, headers that lie (absurd shapes, data shorter or
// longer than claimed, lengths past the end, broken dict literals), bad bool
// bytes, and every truncation of a small valid archive. Each is an
// nng::Error naming the file and the entry or key, never a crash.
//
//===----------------------------------------------------------------------===//

#include "weights/FlatTestUtils.h"

using namespace nng;
using namespace nng::weights;
using namespace nng::weights::flattest;
namespace fs = std::filesystem;

namespace {

const char *File = "hostile.npz";

std::string dict(const std::string &Descr, const std::string &Shape,
                 const std::string &Fortran = "False") {
  return "{'descr': '" + Descr + "', 'fortran_order': " + Fortran +
         ", 'shape': " + Shape + ", }";
}

void refusedNpy(const std::string &Npy, std::vector<std::string> Needles) {
  Needles.push_back(File);
  Needles.push_back("'x.npy'");
  expectError(
      [&] {
        readNpzFromBytes(makeZip({{"x.npy", Npy}}), File);
      },
      Needles);
}

TEST(NpzHostileTest, DotDotEntryNamesAreRefused) {
  std::string Ok = makeNpy(dict("<f4", "(1,)"), std::string(4, '\0'));
  for (const char *Name : {"../evil.npy", "a/../../evil.npy", "/abs.npy"})
    expectError(
        [&] {
          readNpzFromBytes(makeZip({{Name, Ok}}), File);
        },
        {File, Name});
}

TEST(NpzHostileTest, NonNpyEntriesAndDuplicates) {
  std::string Ok = makeNpy(dict("<f4", "(1,)"), std::string(4, '\0'));
  expectError(
      [&] {
        readNpzFromBytes(makeZip({{"readme.txt", "hi"}}), File);
      },
      {File, "'readme.txt'", "not a .npy"});
  expectError(
      [&] {
        readNpzFromBytes(makeZip({{".npy", Ok}}), File);
      },
      {File, "'.npy'"});
  expectError(
      [&] {
        readNpzFromBytes(makeZip({{"a.npy", Ok}, {"a.npy", Ok}}), File);
      },
      {File, "a.npy"});
  expectError([&] { readNpzFromBytes("not a zip at all", File); }, {File});
  expectError([&] { readNpzFromBytes("", File); }, {File});
  // An entry that is not an array at all.
  refusedNpy("garbage!garbage!", {"not a .npy array"});
}

TEST(NpzHostileTest, ObjectArraysAreNeverUnpickled) {
  // What np.save writes for np.array([print], dtype=object): a pickle.
  refusedNpy(makeNpy(dict("|O", "(1,)"), "\x80\x04\x95"
                                         "cos\nsystem\n."),
             {"|O", "never unpickles"});
}

TEST(NpzHostileTest, UnsupportedDescrs) {
  for (const char *D :
       {"<c8", "<U5", "|S3", "<M8[ns]", "|V4", "<f16", "f4", "|f4", "<b1x"})
    refusedNpy(makeNpy(dict(D, "(1,)"), std::string(4, '\0')),
               {std::string("'") + D + "'", "not supported"});
  refusedNpy(makeNpy("{'descr': [('a', '<f4')], 'fortran_order': False, "
                     "'shape': (1,), }",
                     std::string(4, '\0')),
             {"structured"});
}

TEST(NpzHostileTest, AbsurdShapes) {
  refusedNpy(makeNpy(dict("<f4", "(1000000000000000, 1000000000000000)"), ""),
             {"overflow"});
  refusedNpy(makeNpy(dict("<f8", "(4611686018427387904,)"), ""), {"overflow"});
  refusedNpy(makeNpy(dict("<f4", "(0, 4611686018427387904, 4)"), ""),
             {"overflow"});
  refusedNpy(makeNpy(dict("<f4", "(99999999999999999999,)"), ""),
             {"overflows int64"});
  refusedNpy(makeNpy(dict("<f4", "(-1,)"), ""), {"negative"});
  // A huge but representable shape must fail on the data length, not
  // allocate.
  refusedNpy(makeNpy(dict("<f4", "(1000000000000,)"), std::string(8, '\0')),
             {"shorter than the 4000000000000 bytes"});
  std::string Many = "(";
  for (int I = 0; I < 100; ++I)
    Many += "1,";
  refusedNpy(makeNpy(dict("<f4", Many + ")"), std::string(4, '\0')),
             {"more than 64 dimensions"});
}

TEST(NpzHostileTest, DataLengthDisagreesWithHeader) {
  refusedNpy(makeNpy(dict("<f4", "(2, 3)"), std::string(20, '\0')),
             {"20 bytes, shorter than the 24"});
  refusedNpy(makeNpy(dict("<f4", "(2, 3)"), std::string(28, '\0')),
             {"longer than the 24"});
}

TEST(NpzHostileTest, BrokenHeaders) {
  std::string D4(4, '\0');
  for (const std::string &H :
       {std::string("{'descr': '<f4', 'shape': (1,), }"),
        std::string("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,), }"),
        std::string("{'descr': '<f4', 'fortran_order': False, 'shape': [1], }"),
        std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), "
                    "'extra': 1}"),
        std::string("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
                    "'shape': (1,)}"),
        std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (1,) "),
        std::string(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x"),
        std::string("{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}"),
        std::string("descr")})
    refusedNpy(makeNpy(H, D4), {"header"});
  // Header length past the end of the entry.
  std::string Npy = makeNpy(dict("<f4", "(1,)"), D4);
  Npy[8] = '\xff';
  Npy[9] = '\x7f';
  refusedNpy(Npy, {"header length"});
  // Unknown versions.
  std::string V9 = makeNpy(dict("<f4", "(1,)"), D4);
  V9[6] = 9;
  refusedNpy(V9, {"version 9.0"});
}

TEST(NpzHostileTest, BoolBytesMustBeZeroOrOne) {
  refusedNpy(makeNpy(dict("|b1", "(2,)"), std::string("\x01\x03", 2)),
             {"byte 3"});
}

TEST(NpzHostileTest, EveryTruncationIsRefused) {
  fs::path D = freshDir();
  TensorMap M;
  M.insert("a", pattern(DType::F32, {2, 2}));
  M.insert("b", pattern(DType::I8, {3}));
  std::string P = (D / "small.npz").string();
  writeNpz(P, M);
  std::string Bytes = slurp(P);
  ASSERT_EQ(readNpzFromBytes(Bytes, File).size(), 2u);
  std::string T = (D / "t.npz").string();
  for (size_t N = 0; N < Bytes.size(); ++N) {
    SCOPED_TRACE("truncated to " + std::to_string(N) + " bytes");
    expectError(
        [&] { readNpzFromBytes(std::string_view(Bytes).substr(0, N), File); },
        {File});
    spit(T, Bytes.substr(0, N));
    expectError([&] { readNpz(T); }, {T});
  }
  // The same for an archive built by hand (no extra fields, unaligned).
  std::string Hand =
      makeZip({{"x.npy", makeNpy(dict("<f4", "(2,)"), std::string(8, '\0'))}});
  ASSERT_EQ(readNpzFromBytes(Hand, File).size(), 1u);
  for (size_t N = 0; N < Hand.size(); ++N)
    expectError(
        [&] { readNpzFromBytes(std::string_view(Hand).substr(0, N), File); },
        {File});
}

} // namespace
