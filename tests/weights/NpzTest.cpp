//===- NpzTest.cpp - Reading and writing .npz archives ----------*- C++ -*-===//
//
// Round trips for every numpy dtype, key order, zero-copy reads of stored
// entries, hand-built .npy headers (versions 1-3, fortran order, big
// endian, Python 2 longs), and the numpy oracle both ways: np.savez and
// np.savez_compressed files read by us, our files np.load-ed and compared.
//
//===----------------------------------------------------------------------===//

#include "weights/FlatTestUtils.h"

#include <cstring>

using namespace nng;
using namespace nng::weights;
using namespace nng::weights::flattest;
namespace fs = std::filesystem;

namespace {

/// The arrays flat_oracle.py's standard(False) lists, in its order.
TensorMap standardMap() {
  TensorMap M;
  std::vector<std::pair<const char *, DType>> Kinds = {
      {"f64", DType::F64}, {"f32", DType::F32}, {"f16", DType::F16},
      {"i64", DType::I64}, {"i32", DType::I32}, {"i16", DType::I16},
      {"i8", DType::I8},   {"u8", DType::U8},   {"bool", DType::Bool},
      {"u16", DType::U16}, {"u32", DType::U32}, {"u64", DType::U64}};
  for (auto [Name, T] : Kinds)
    M.insert(Name, pattern(T, {2, 3}));
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

std::string bytesOf(const rt::Tensor &T) {
  rt::Tensor C = T.contiguous();
  return std::string(static_cast<const char *>(C.rawData()), C.nbytes());
}

TEST(NpzTest, RoundTripEveryDType) {
  fs::path D = freshDir();
  for (DType T : allDTypes()) {
    if (T == DType::BF16)
      continue; // numpy has no bfloat16 (see WriterRefusesBF16)
    SCOPED_TRACE(std::string(dtypeName(T)));
    TensorMap M;
    M.insert("a", pattern(T, {3, 4}));
    M.insert("b.scalar", pattern(T, {}));
    M.insert("c", pattern(T, {0, 2}));
    M.insert("d/e", pattern(T, {2, 1, 3, 1}));
    std::string P = (D / (std::string(dtypeName(T)) + ".npz")).string();
    writeNpz(P, M);
    expectSameMap(M, readNpz(P));
    expectSameMap(M, readNpzFromBytes(slurp(P), P));
  }
}

TEST(NpzTest, KeysKeepMapOrderAndStoredEntriesAreNotCopied) {
  fs::path D = freshDir();
  TensorMap M;
  M.insert("zeta", pattern(DType::F32, {100}));
  M.insert("alpha", pattern(DType::F64, {10}));
  M.insert("mid", pattern(DType::I8, {7}));
  std::string P = (D / "o.npz").string();
  writeNpz(P, M);
  std::string Bytes = slurp(P);
  TensorMap R = readNpzFromBytes(Bytes, P);
  EXPECT_EQ(R.keys(), (std::vector<std::string>{"zeta", "alpha", "mid"}));
  // Our writer aligns each array's data to 64 bytes, so reading a stored
  // entry aliases the archive: the two arrays lie in one buffer at the
  // distance of their entries.
  TensorMap F = readNpz(P);
  const char *Z = static_cast<const char *>(F.at("zeta").rawData());
  const char *A = static_cast<const char *>(F.at("alpha").rawData());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(Z) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(A) % 64, 0u);
  size_t ZOff = Bytes.find(bytesOf(M.at("zeta")));
  size_t AOff = Bytes.find(bytesOf(M.at("alpha")));
  ASSERT_NE(ZOff, std::string::npos);
  ASSERT_NE(AOff, std::string::npos);
  EXPECT_EQ(A - Z, static_cast<ptrdiff_t>(AOff - ZOff));
  // Writing into a view of the (copy-on-write) mapping leaves the file as
  // it was.
  double Before = F.at("zeta").getFlat(0);
  rt::Tensor W = F.at("zeta");
  W.setFlat(0, Before + 1.0);
  EXPECT_EQ(readNpz(P).at("zeta").getFlat(0), Before);
}

TEST(NpzTest, NpyHeaderVariants) {
  std::string F(24, '\0');
  float V[6] = {0, 1, 2, 3, 4, 5};
  std::memcpy(F.data(), V, 24);
  for (int Major : {1, 2, 3}) {
    SCOPED_TRACE(Major);
    std::string Npy =
        makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                F, Major);
    TensorMap R = readNpzFromBytes(makeZip({{"x.npy", Npy}}), "v.npz");
    EXPECT_EQ(R.at("x").shape(), (Shape{2, 3}));
    EXPECT_EQ(R.at("x").toDoubleVector(),
              (std::vector<double>{0, 1, 2, 3, 4, 5}));
  }
  // Key order and spacing vary; Python 2 wrote 3L; double quotes parse too.
  std::string Npy =
      makeNpy("{\"shape\":(2L,3L),'fortran_order':True,'descr':'<f4'}", F);
  rt::Tensor T = readNpzFromBytes(makeZip({{"f.npy", Npy}}), "f.npz").at("f");
  // Fortran order: element (i, j) is at i + 2 * j.
  EXPECT_EQ(T.shape(), (Shape{2, 3}));
  EXPECT_EQ(T.toDoubleVector(), (std::vector<double>{0, 2, 4, 1, 3, 5}));
  // Big-endian data is byte-swapped.
  std::string BE = {0, 0, 0, 0, 0, 0, 0, 5, 0x7f, 0, 0, 0, 0, 0, 0, 0};
  rt::Tensor B =
      readNpzFromBytes(
          makeZip({{"b.npy", makeNpy("{'descr': '>i8', 'fortran_order': False, "
                                     "'shape': (2,), }",
                                     BE)}}),
          "b.npz")
          .at("b");
  EXPECT_EQ(B.toIntVector(), (std::vector<int64_t>{5, 0x7f00000000000000}));
  // A scalar and a one-byte type with '<' or '|'.
  rt::Tensor S =
      readNpzFromBytes(makeZip({{"s.npy", makeNpy("{'descr': '<u1', "
                                                  "'fortran_order': False, "
                                                  "'shape': (), }",
                                                  "\x09")}}),
                       "s.npz")
          .at("s");
  EXPECT_EQ(S.shape(), Shape{});
  EXPECT_EQ(S.getFlatInt(0), 9);
}

TEST(NpzTest, HeaderIsPaddedTo64AndDictIsNumpyStyle) {
  fs::path D = freshDir();
  TensorMap M;
  M.insert("v", pattern(DType::I16, {5}));
  M.insert("m", pattern(DType::Bool, {2, 2}));
  std::string P = (D / "h.npz").string();
  writeNpz(P, M);
  std::string Bytes = slurp(P);
  EXPECT_NE(Bytes.find("{'descr': '<i2', 'fortran_order': False, "
                       "'shape': (5,), }"),
            std::string::npos);
  EXPECT_NE(Bytes.find("{'descr': '|b1', 'fortran_order': False, "
                       "'shape': (2, 2), }"),
            std::string::npos);
  size_t Magic = Bytes.find("\x93NUMPY");
  ASSERT_NE(Magic, std::string::npos);
  unsigned Len = static_cast<unsigned char>(Bytes[Magic + 8]) |
                 (static_cast<unsigned char>(Bytes[Magic + 9]) << 8);
  EXPECT_EQ((10 + Len) % 64, 0u);
  EXPECT_EQ(Bytes[Magic + 10 + Len - 1], '\n');
}

TEST(NpzTest, WriterRefusesBF16AndUnsafeKeys) {
  fs::path D = freshDir();
  std::string P = (D / "w.npz").string();
  TensorMap B;
  B.insert("w", pattern(DType::BF16, {2}));
  expectError([&] { writeNpz(P, B); }, {P, "'w'", "bfloat16"});
  for (const char *K : {"../x", "a/../../b", "/abs", ""}) {
    TensorMap U;
    U.insert(K, pattern(DType::F32, {1}));
    expectError([&] { writeNpz(P, U); }, {P, "key '"});
  }
  EXPECT_FALSE(fs::exists(P)) << "a failed write must leave no file";
}

TEST(NpzTest, WritesNonContiguousTensorsInLogicalOrder) {
  fs::path D = freshDir();
  rt::Tensor T = pattern(DType::I32, {3, 4}).permute({1, 0}).slice(0, 1, 4);
  TensorMap M;
  M.insert("t", T);
  std::string P = (D / "t.npz").string();
  writeNpz(P, M);
  EXPECT_TRUE(readNpz(P).at("t").equals(T));
}

TEST(NpzTest, ReadsWhatNumpyWrites) {
  fs::path D = freshDir();
  std::string Out, Skip;
  if (!runOracle("write-npz '" + D.string() + "'", &Out, &Skip)) {
    if (!Skip.empty())
      GTEST_SKIP() << Skip;
    return;
  }
  TensorMap Want = standardMap();
  for (const char *F : {"stored.npz", "compressed.npz"}) {
    SCOPED_TRACE(F);
    expectSameMap(Want, readNpz((D / F).string()));
  }
  TensorMap Fo = readNpz((D / "fortran.npz").string());
  EXPECT_TRUE(Fo.at("f").equals(pattern(DType::F32, {3, 4})));
  EXPECT_TRUE(Fo.at("g").equals(pattern(DType::I64, {2, 3, 4})));
  EXPECT_FALSE(Fo.at("f").isContiguous()) << "read as a column-major view";
  TensorMap Be = readNpz((D / "bigendian.npz").string());
  EXPECT_TRUE(Be.at("f").equals(pattern(DType::F32, {2, 3})));
  EXPECT_TRUE(Be.at("i").equals(pattern(DType::I64, {5})));
  EXPECT_TRUE(Be.at("h").equals(pattern(DType::F16, {3})));
  TensorMap Po = readNpz((D / "positional.npz").string());
  EXPECT_EQ(Po.keys(), (std::vector<std::string>{"arr_0", "arr_1"}));
}

TEST(NpzTest, NumpyLoadsWhatWeWrite) {
  fs::path D = freshDir();
  std::string P = (D / "ours.npz").string();
  writeNpz(P, standardMap());
  std::string Out, Skip;
  if (!runOracle("check-npz '" + P + "'", &Out, &Skip)) {
    if (!Skip.empty())
      GTEST_SKIP() << Skip;
    return;
  }
  EXPECT_NE(Out.find("OK"), std::string::npos) << Out;
}

} // namespace
