//===- SafetensorsHostileTest.cpp - Refusing lying safetensors --*- C++ -*-===//
//
// The hostile corpus for the safetensors reader: headers that lie about
// their length, invalid JSON, unknown dtypes, offsets out of range,
// overlapping or leaving gaps, spans that disagree with the shape, duplicate
// keys, negative and overflowing extents, bad metadata and bool bytes, and
// every truncation of a small valid file. Each must be an nng::Error naming
// the file (and the tensor where there is one), never a crash; the tests
// run under AddressSanitizer in the sanitizer configuration.
//
//===----------------------------------------------------------------------===//

#include "weights/FlatTestUtils.h"

using namespace nng;
using namespace nng::weights;
using namespace nng::weights::flattest;
namespace fs = std::filesystem;

namespace {

const char *File = "hostile.safetensors";

std::string entry(const std::string &Name, const std::string &DT,
                  const std::string &Shape, const std::string &Offsets) {
  return "\"" + Name + "\":{\"dtype\":\"" + DT + "\",\"shape\":" + Shape +
         ",\"data_offsets\":" + Offsets + "}";
}

/// Reading Json + Data must fail with a message containing Needles (and
/// the file name).
void refused(const std::string &Json, const std::string &Data,
             std::vector<std::string> Needles) {
  SCOPED_TRACE(Json);
  Needles.push_back(File);
  expectError(
      [&] { readSafetensorsFromBytes(makeSafetensors(Json, Data), File); },
      Needles);
}

TEST(SafetensorsHostileTest, HeaderLengthLies) {
  std::string B = makeSafetensors("{}", "");
  B[0] = 100; // 100-byte header in a 10-byte file
  expectError([&] { readSafetensorsFromBytes(B, File); },
              {File, "header length 100", "larger than"});
  std::string Huge(8, '\xff');
  expectError([&] { readSafetensorsFromBytes(Huge + "{}", File); },
              {File, "header length"});
  expectError([&] { readSafetensorsFromBytes("abc", File); },
              {File, "shorter than the 8-byte"});
  expectError([&] { readSafetensorsFromBytes("", File); }, {File});
  expectError([&] { readSafetensorsFromBytes(std::string(8, '\0'), File); },
              {File, "'{'"});
}

TEST(SafetensorsHostileTest, InvalidJson) {
  for (const char *J :
       {"{", "{\"a\":}", "{\"a\":1,}", "{'a':1}", "{\"a\":NaN}",
        "{\"a\":\"\\x\"}", "{\"a\":\"\x01\"}", "{\"a\":01}", "{\"a\":1.}",
        "{\"a\":-}", "{\"a\":\"\\ud800\"}", "{\"a\":\"\xc0\xaf\"}",
        "{\"a\":tru}", "{} x", "{\"a\" 1}", "{\"a\":[1 2]}", "{\"a\":\"abc"})
    refused(J, "", {"not valid JSON"});
  // Deep nesting is refused before it exhausts the stack.
  refused("{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}",
          "", {"nesting deeper"});
  refused("[]   ", "", {"not start with '{'"});
}

TEST(SafetensorsHostileTest, UnknownDtypeNamesTensorAndDtype) {
  refused("{" + entry("layer.w", "F8_E4M3", "[1]", "[0,1]") + "}",
          std::string(1, '\0'), {"layer.w", "F8_E4M3", "not support"});
  refused("{" + entry("w", "f32", "[1]", "[0,4]") + "}", std::string(4, '\0'),
          {"'w'", "\"f32\""});
}

TEST(SafetensorsHostileTest, OffsetsOutOfRange) {
  refused("{" + entry("w", "F32", "[2]", "[0,8]") + "}", std::string(4, '\0'),
          {"'w'", "reach past the data buffer of 4 bytes"});
  refused("{" + entry("w", "F32", "[2]", "[18446744073709551608,0]") + "}",
          std::string(8, '\0'), {"'w'", "end before"});
  refused("{" + entry("w", "F32", "[2]", "[0,18446744073709551616]") + "}",
          std::string(8, '\0'), {"'w'", "non-negative integers"});
  refused("{" + entry("w", "F32", "[2]", "[-8,0]") + "}", std::string(8, '\0'),
          {"'w'", "data_offsets"});
  refused("{" + entry("w", "F32", "[2]", "[0,8,9]") + "}", std::string(8, '\0'),
          {"'w'", "two integers"});
  refused("{" + entry("w", "F32", "[2]", "[0.0,8]") + "}", std::string(8, '\0'),
          {"'w'", "data_offsets"});
}

TEST(SafetensorsHostileTest, OverlappingAndGappedOffsets) {
  std::string D(16, '\0');
  refused("{" + entry("a", "F32", "[2]", "[0,8]") + "," +
              entry("b", "F32", "[2]", "[4,12]") + "," +
              entry("c", "F32", "[1]", "[12,16]") + "}",
          D, {"'b'", "overlap tensor 'a'"});
  // Two tensors sharing the same bytes.
  refused("{" + entry("a", "F32", "[2]", "[0,8]") + "," +
              entry("b", "F32", "[2]", "[0,8]") + "}",
          std::string(8, '\0'), {"overlap"});
  refused("{" + entry("a", "F32", "[2]", "[0,8]") + "," +
              entry("b", "F32", "[1]", "[12,16]") + "}",
          D, {"'b'", "gap of 4 bytes"});
  refused("{" + entry("a", "F32", "[2]", "[4,12]") + "}", std::string(12, '\0'),
          {"'a'", "gap"});
  // Data after the last tensor.
  refused("{" + entry("a", "F32", "[2]", "[0,8]") + "}", D,
          {"cover only 8", "16 bytes"});
}

TEST(SafetensorsHostileTest, SpanDisagreesWithShape) {
  refused("{" + entry("w", "F32", "[3]", "[0,8]") + "}", std::string(8, '\0'),
          {"'w'", "span 8 bytes", "needs 12"});
  refused("{" + entry("w", "BF16", "[2,2]", "[0,4]") + "}",
          std::string(4, '\0'), {"'w'", "needs 8"});
}

TEST(SafetensorsHostileTest, DuplicateKeys) {
  refused("{" + entry("w", "U8", "[1]", "[0,1]") + "," +
              entry("w", "U8", "[1]", "[1,2]") + "}",
          std::string(2, '\0'), {"duplicate key \"w\""});
  refused("{" + entry("w", "U8", "[1]", "[0,1]") +
              ",\"__metadata__\":{\"a\":\"1\",\"a\":\"2\"}}",
          std::string(1, '\0'), {"duplicate key \"a\""});
}

TEST(SafetensorsHostileTest, NegativeAndOverflowingShapes) {
  refused("{" + entry("w", "F32", "[-1,2]", "[0,0]") + "}", "",
          {"'w'", "negative extent -1"});
  refused("{" + entry("w", "F32", "[1099511627776,1099511627776,4]", "[0,0]") +
              "}",
          "", {"'w'", "overflow"});
  refused("{" + entry("w", "F64", "[4611686018427387904]", "[0,0]") + "}", "",
          {"'w'", "overflow"});
  refused("{" + entry("w", "F32", "[0,4611686018427387904,4]", "[0,0]") + "}",
          "", {"'w'", "overflow"});
  refused("{" + entry("w", "F32", "[9223372036854775808]", "[0,0]") + "}", "",
          {"'w'", "int64"});
  refused("{" + entry("w", "F32", "[1.5]", "[0,4]") + "}", std::string(4, '\0'),
          {"'w'", "not an integer"});
  refused("{" + entry("w", "F32", "3", "[0,12]") + "}", std::string(12, '\0'),
          {"'w'", "\"shape\" is not an array"});
}

TEST(SafetensorsHostileTest, MalformedEntriesAndMetadata) {
  refused("{\"w\":[1,2]}", "", {"'w'", "expected an object"});
  refused("{\"w\":{\"dtype\":\"F32\",\"shape\":[]}}", "",
          {"'w'", "data_offsets"});
  refused("{\"w\":{\"dtype\":3,\"shape\":[],\"data_offsets\":[0,4]}}",
          std::string(4, '\0'), {"'w'", "dtype"});
  refused("{\"__metadata__\":{\"a\":1}}", "", {"metadata key 'a'", "string"});
  refused("{\"__metadata__\":[]}", "", {"__metadata__"});
}

TEST(SafetensorsHostileTest, BoolBytesMustBeZeroOrOne) {
  refused("{" + entry("mask", "BOOL", "[3]", "[0,3]") + "}",
          std::string("\x01\x00\x02", 3), {"'mask'", "byte 2"});
}

TEST(SafetensorsHostileTest, EveryTruncationIsRefused) {
  fs::path D = freshDir();
  TensorMap M;
  M.insert("a", pattern(DType::F32, {2, 2}));
  M.insert("b", pattern(DType::I8, {3}));
  M.insert("c", pattern(DType::BF16, {2}));
  std::string P = (D / "small.safetensors").string();
  writeSafetensors(P, M, {{"k", "v"}});
  std::string Bytes = slurp(P);
  ASSERT_EQ(readSafetensorsFromBytes(Bytes, File).size(), 3u);
  for (size_t N = 0; N < Bytes.size(); ++N) {
    SCOPED_TRACE("truncated to " + std::to_string(N) + " bytes");
    expectError(
        [&] {
          readSafetensorsFromBytes(std::string_view(Bytes).substr(0, N), File);
        },
        {File});
    // Through the memory-mapped path too (the file itself truncated).
    std::string T = (D / "t.safetensors").string();
    spit(T, Bytes.substr(0, N));
    expectError([&] { readSafetensors(T); }, {T});
  }
}

TEST(SafetensorsHostileTest, MissingFileNamesThePath) {
  fs::path D = freshDir();
  std::string P = (D / "nope.safetensors").string();
  expectError([&] { readSafetensors(P); }, {P});
  expectError([&] { readSafetensors(D.string()); }, {D.string()});
}

} // namespace
