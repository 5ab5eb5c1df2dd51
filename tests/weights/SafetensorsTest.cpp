//===- SafetensorsTest.cpp - Reading and writing .safetensors ---*- C++ -*-===//
//
// Round trips for every dtype, the zero-copy read (tensor data inside the
// file's mapping), the header layout the writer produces, hand-built files
// following the spec (other key orders, whitespace, escapes, empty and
// scalar tensors), and the numpy oracle in both directions (the safetensors
// Python package is not in Debian, so the oracle script parses and builds
// files by the spec itself).
//
//===----------------------------------------------------------------------===//

#include "weights/FlatTestUtils.h"

#include <cstring>
#include <fstream>
#include <sstream>

using namespace nng;
using namespace nng::weights;
using namespace nng::weights::flattest;
namespace fs = std::filesystem;

namespace {

/// The arrays flat_oracle.py's standard(True) lists, in its order.
TensorMap standardMap(bool WithBF16) {
  TensorMap M;
  std::vector<std::pair<const char *, DType>> Kinds = {
      {"f64", DType::F64}, {"f32", DType::F32}, {"f16", DType::F16},
      {"i64", DType::I64}, {"i32", DType::I32}, {"i16", DType::I16},
      {"i8", DType::I8},   {"u8", DType::U8},   {"bool", DType::Bool},
      {"u16", DType::U16}, {"u32", DType::U32}, {"u64", DType::U64}};
  for (auto [Name, T] : Kinds)
    M.insert(Name, pattern(T, {2, 3}));
  if (WithBF16)
    M.insert("bf16", pattern(DType::BF16, {2, 3}));
  M.insert("scalar", pattern(DType::F32, {}));
  M.insert("empty", pattern(DType::F32, {0, 3}));
  M.insert("nested/key.w", pattern(DType::F32, {4}));
  M.insert("big", pattern(DType::F32, {3, 5, 7}));
  return M;
}

void expectSameMap(const TensorMap &A, const TensorMap &B) {
  ASSERT_EQ(A.keys(), B.keys());
  for (const auto &[K, T] : A) {
    const rt::Tensor &U = B.at(K);
    EXPECT_EQ(T.dtype(), U.dtype()) << K;
    EXPECT_EQ(T.shape(), U.shape()) << K;
    EXPECT_TRUE(T.equals(U))
        << K << ": " << T.toString() << " vs " << U.toString();
  }
}

/// The path of the mapping that holds P, from /proc/self/maps ("" if none).
std::string mappingOf(const void *P) {
  std::ifstream In("/proc/self/maps");
  std::string Line;
  auto A = reinterpret_cast<uintptr_t>(P);
  while (std::getline(In, Line)) {
    std::istringstream LS(Line);
    std::string Range, Perm, Off, Dev, Inode, Path;
    LS >> Range >> Perm >> Off >> Dev >> Inode;
    std::getline(LS >> std::ws, Path);
    size_t Dash = Range.find('-');
    uintptr_t Lo = std::stoull(Range.substr(0, Dash), nullptr, 16);
    uintptr_t Hi = std::stoull(Range.substr(Dash + 1), nullptr, 16);
    if (A >= Lo && A < Hi)
      return Path;
  }
  return "";
}

TEST(SafetensorsTest, RoundTripEveryDType) {
  fs::path D = freshDir();
  for (DType T : allDTypes()) {
    SCOPED_TRACE(std::string(dtypeName(T)));
    TensorMap M;
    M.insert("a", pattern(T, {3, 4}));
    M.insert("b.scalar", pattern(T, {}));
    M.insert("c", pattern(T, {0, 2}));
    M.insert("d", pattern(T, {2, 1, 3, 1}));
    std::string P = (D / (std::string(dtypeName(T)) + ".safetensors")).string();
    writeSafetensors(P, M);
    expectSameMap(M, readSafetensors(P));
    expectSameMap(M, readSafetensorsFromBytes(slurp(P), P));
  }
}

TEST(SafetensorsTest, KeysKeepMapOrderAndMetadataRoundTrips) {
  fs::path D = freshDir();
  TensorMap M;
  M.insert("zeta", pattern(DType::F32, {2}));
  M.insert("alpha", pattern(DType::I8, {3}));
  M.insert("mid.weight", pattern(DType::F64, {1}));
  Metadata Meta = {{"format", "pt"}, {"quote\"\\", "ü\n\x01"}};
  std::string P = (D / "m.safetensors").string();
  writeSafetensors(P, M, Meta);
  Metadata Got;
  TensorMap R = readSafetensors(P, &Got);
  EXPECT_EQ(R.keys(),
            (std::vector<std::string>{"zeta", "alpha", "mid.weight"}));
  EXPECT_EQ(Got, Meta);
  expectSameMap(M, R);
}

TEST(SafetensorsTest, HeaderLayoutFollowsTheSpec) {
  fs::path D = freshDir();
  TensorMap M;
  M.insert("w", pattern(DType::F32, {2, 3}));
  M.insert("b", pattern(DType::I16, {3}));
  std::string P = (D / "l.safetensors").string();
  writeSafetensors(P, M, {{"k", "v"}});
  std::string Bytes = slurp(P);
  ASSERT_GE(Bytes.size(), 8u);
  uint64_t N = 0;
  for (int I = 7; I >= 0; --I)
    N = (N << 8) | static_cast<unsigned char>(Bytes[I]);
  EXPECT_EQ((8 + N) % 8, 0u) << "the data buffer must start 8-aligned";
  std::string Header = Bytes.substr(8, N);
  while (!Header.empty() && Header.back() == ' ')
    Header.pop_back();
  EXPECT_EQ(
      Header,
      "{\"__metadata__\":{\"k\":\"v\"},"
      "\"w\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
      "\"b\":{\"dtype\":\"I16\",\"shape\":[3],\"data_offsets\":[24,30]}}");
  EXPECT_EQ(Bytes.size(), 8 + N + 30);
}

TEST(SafetensorsTest, ReadAliasesTheFileMapping) {
  fs::path D = freshDir();
  TensorMap M;
  M.insert("x", pattern(DType::F32, {64}));
  M.insert("y", pattern(DType::F64, {16}));
  fs::path P = D / "zc.safetensors";
  writeSafetensors(P.string(), M);
  TensorMap R = readSafetensors(P.string());
  const rt::Tensor &X = R.at("x"), &Y = R.at("y");
  // The data lies inside a mapping of this very file ...
  EXPECT_EQ(mappingOf(X.rawData()), fs::canonical(P).string());
  EXPECT_EQ(mappingOf(Y.rawData()), fs::canonical(P).string());
  // ... which is copy-on-write: writing in place changes this copy only.
  double Before = X.getFlat(0);
  {
    rt::Tensor W = X;
    W.setFlat(0, Before + 1.0);
  }
  EXPECT_EQ(X.getFlat(0), Before + 1.0);
  EXPECT_EQ(readSafetensors(P.string()).at("x").getFlat(0), Before);
  rt::Tensor(X).setFlat(0, Before);
  // ... at the distance the header's offsets give (one mapping, no copy).
  EXPECT_EQ(static_cast<const char *>(Y.rawData()) -
                static_cast<const char *>(X.rawData()),
            64 * 4);
  // The mapping outlives the map it came from.
  rt::Tensor Keep = X;
  R = TensorMap();
  EXPECT_TRUE(Keep.equals(pattern(DType::F32, {64})));
}

TEST(SafetensorsTest, ReadsHandBuiltSpecFiles) {
  // Keys out of offset order, spaces and newlines in the JSON, an escaped
  // name, a scalar, an empty tensor and unknown members in an entry.
  std::string F(8, '\0'), I(4, '\0');
  float FV[2] = {1.5f, -2.0f};
  int32_t IV = 7;
  std::memcpy(F.data(), FV, 8);
  std::memcpy(I.data(), &IV, 4);
  std::string Json =
      "{ \"b\" : {\"dtype\":\"I32\", \"shape\":[], \"data_offsets\":[8,12]},\n"
      "  \"a\\u00e9\\n\": "
      "{\"shape\":[2],\"dtype\":\"F32\",\"data_offsets\":[0,8],"
      "\"extra\":{\"x\":[1,2.5,null,true]}},\n"
      "  \"e\": {\"dtype\":\"F64\",\"shape\":[0,5],\"data_offsets\":[12,12]}} "
      " ";
  std::string Bytes = makeSafetensors(Json, F + I);
  Metadata Meta = {{"x", "y"}};
  TensorMap R = readSafetensorsFromBytes(Bytes, "hand.safetensors", &Meta);
  EXPECT_TRUE(Meta.empty());
  ASSERT_EQ(R.keys(), (std::vector<std::string>{"b", "a\xc3\xa9\n", "e"}));
  EXPECT_EQ(R.at("b").shape(), Shape{});
  EXPECT_EQ(R.at("b").getFlatInt(0), 7);
  EXPECT_EQ(R.at("a\xc3\xa9\n").toDoubleVector(),
            (std::vector<double>{1.5, -2.0}));
  EXPECT_EQ(R.at("e").shape(), (Shape{0, 5}));
  EXPECT_EQ(R.at("e").dtype(), DType::F64);

  // An empty file: no tensors.
  EXPECT_EQ(readSafetensorsFromBytes(makeSafetensors("{}", ""), "e").size(),
            0u);
  // A misaligned tensor (possible only with odd padding) is read as a copy.
  std::string Odd = makeSafetensors(
      "{\"p\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
      "\"q\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[1,9]}}",
      std::string(1, '\x05') + F);
  TensorMap O = readSafetensorsFromBytes(Odd, "odd");
  EXPECT_EQ(O.at("q").toDoubleVector(), (std::vector<double>{1.5, -2.0}));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(O.at("q").rawData()) % 4, 0u);
}

TEST(SafetensorsTest, WriterRefusesWhatItCannotStore) {
  fs::path D = freshDir();
  std::string P = (D / "w.safetensors").string();
  TensorMap M;
  M.insert("__metadata__", pattern(DType::F32, {1}));
  expectError([&] { writeSafetensors(P, M); }, {"__metadata__", P});
  TensorMap U;
  U.insert("bad\xff", pattern(DType::F32, {1}));
  expectError([&] { writeSafetensors(P, U); }, {"UTF-8", P});
  EXPECT_FALSE(fs::exists(P)) << "a failed write must leave no file";
}

TEST(SafetensorsTest, WritesNonContiguousTensorsInLogicalOrder) {
  fs::path D = freshDir();
  rt::Tensor T = pattern(DType::F32, {3, 4}).permute({1, 0});
  TensorMap M;
  M.insert("t", T);
  std::string P = (D / "t.safetensors").string();
  writeSafetensors(P, M);
  TensorMap R = readSafetensors(P);
  EXPECT_EQ(R.at("t").shape(), (Shape{4, 3}));
  EXPECT_TRUE(R.at("t").equals(T));
}

TEST(SafetensorsTest, NumpyOracleReadsWhatWeWrite) {
  fs::path D = freshDir();
  std::string P = (D / "ours.safetensors").string();
  writeSafetensors(P, standardMap(true),
                   {{"format", "nngraph"}, {"quote", "a \"b\" \\ \xc3\xbc"}});
  std::string Out, Skip;
  if (!runOracle("check-safetensors '" + P + "'", &Out, &Skip)) {
    if (!Skip.empty())
      GTEST_SKIP() << Skip;
    return;
  }
  EXPECT_NE(Out.find("OK"), std::string::npos) << Out;
}

TEST(SafetensorsTest, ReadsFilesBuiltByTheOracle) {
  fs::path D = freshDir();
  std::string P = (D / "theirs.safetensors").string();
  std::string Out, Skip;
  if (!runOracle("write-safetensors '" + P + "'", &Out, &Skip)) {
    if (!Skip.empty())
      GTEST_SKIP() << Skip;
    return;
  }
  Metadata Meta;
  TensorMap R = readSafetensors(P, &Meta);
  EXPECT_EQ(Meta,
            (Metadata{{"format", "np"}, {"note", "hand \"built\" \xc3\xbc"}}));
  TensorMap Want = standardMap(true);
  ASSERT_EQ(R.size(), Want.size());
  // The file is in the reference writer's order (dtype size, then name).
  EXPECT_EQ(R.keys().front(), "f64");
  for (const auto &[K, T] : Want) {
    ASSERT_TRUE(R.contains(K)) << K;
    EXPECT_EQ(R.at(K).dtype(), T.dtype()) << K;
    EXPECT_TRUE(R.at(K).equals(T)) << K << ": " << R.at(K).toString();
  }
}

} // namespace
