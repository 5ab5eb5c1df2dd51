//===- TensorTest.cpp - Shapes, storage and tensor views -----------------===//

#include "nngraph/runtime/Device.h"
#include "nngraph/runtime/Tensor.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace nng;
using nng::rt::Tensor;

TEST(Shape, Basics) {
  Shape S{2, 3, 4};
  EXPECT_EQ(S.rank(), 3u);
  EXPECT_EQ(S.numel(), 24);
  EXPECT_EQ(S.dim(-1), 4);
  EXPECT_EQ(S.toString(), "[2, 3, 4]");
  EXPECT_EQ(Shape{}.numel(), 1);
  EXPECT_EQ((Shape{2, 0, 3}).numel(), 0);
  EXPECT_EQ(contiguousStrides(S), (Strides{12, 4, 1}));
}

TEST(Shape, InvalidShapesNameTheValues) {
  try {
    Shape{2, -3}.validate();
    FAIL();
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("[2, -3]"), std::string::npos);
    EXPECT_NE(std::string(E.what()).find("-3"), std::string::npos);
  }
  EXPECT_THROW((Shape{1LL << 40, 1LL << 40}.validate()), Error);
  EXPECT_THROW(Tensor::empty(Shape{4, -1}, DType::F32), Error);
}

TEST(Shape, Broadcast) {
  EXPECT_EQ(broadcastShapes({2, 1, 4}, {3, 1}), (Shape{2, 3, 4}));
  EXPECT_EQ(broadcastShapes({}, {5}), (Shape{5}));
  EXPECT_EQ(broadcastShapes({0, 1}, {1, 7}), (Shape{0, 7}));
  try {
    broadcastShapes({2, 3}, {4});
    FAIL();
  } catch (const Error &E) {
    EXPECT_EQ(E.kind(), ErrorKind::ShapeMismatch);
    EXPECT_NE(std::string(E.what()).find("[2, 3]"), std::string::npos);
  }
}

TEST(Shape, NormalizeAxis) {
  EXPECT_EQ(normalizeAxis(-1, 4), 3);
  EXPECT_EQ(normalizeAxis(2, 4), 2);
  EXPECT_THROW(normalizeAxis(4, 4), Error);
  EXPECT_THROW(normalizeAxis(-5, 4), Error);
}

TEST(Device, ParseAndPrint) {
  EXPECT_TRUE(Device::parse("cpu").isCPU());
  EXPECT_EQ(Device::parse("cuda:1"), Device::cuda(1));
  EXPECT_EQ(Device::parse("cuda").toString(), "cuda:0");
  EXPECT_THROW(Device::parse("tpu"), Error);
  EXPECT_THROW(Device::parse("cuda:x"), Error);
}

TEST(Storage, AlignedAndZeroed) {
  auto S = Storage::allocate(100);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(S->data()) % 64, 0u);
  for (size_t I = 0; I < 100; ++I)
    EXPECT_EQ(static_cast<char *>(S->data())[I], 0);
  EXPECT_THROW(Storage::allocate(4, Device::cuda(0)), Error);
}

TEST(Storage, WrapRunsDeleter) {
  int Freed = 0;
  {
    static float Buf[4];
    auto S = Storage::wrap(Buf, sizeof(Buf), [&](void *) { ++Freed; });
    Tensor T(S, {2, 2}, {2, 1}, 0, DType::F32);
    EXPECT_EQ(Freed, 0);
  }
  EXPECT_EQ(Freed, 1);
}

TEST(Storage, MapFile) {
  char Path[] = "/tmp/nngraph-mapXXXXXX";
  int Fd = mkstemp(Path);
  ASSERT_GE(Fd, 0);
  float Vals[3] = {1.5f, 2.5f, 3.5f};
  ASSERT_EQ(write(Fd, "head", 4), 4);
  ASSERT_EQ(write(Fd, Vals, sizeof(Vals)), (ssize_t)sizeof(Vals));
  close(Fd);
  auto S = Storage::mapFile(Path, 4, sizeof(Vals));
  Tensor T(S, {3}, {1}, 0, DType::F32);
  EXPECT_EQ(T.getFlat(2), 3.5);
  // Copy-on-write: the mapping takes the write, the file keeps its bytes.
  T.setFlat(0, 9.0);
  EXPECT_EQ(T.getFlat(0), 9.0);
  EXPECT_EQ(Tensor(Storage::mapFile(Path, 4, sizeof(Vals)), {3}, {1}, 0,
                   DType::F32)
                .getFlat(0),
            1.5);
  EXPECT_THROW(Storage::mapFile(Path, 4, 100), Error);
  EXPECT_THROW(Storage::mapFile("/nonexistent/file"), Error);
  std::remove(Path);
}

TEST(Tensor, FromVectorAndAccess) {
  Tensor T = Tensor::fromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(T.dtype(), DType::F32);
  EXPECT_TRUE(T.isContiguous());
  EXPECT_EQ(T.getDouble({1, 2}), 6.0);
  EXPECT_EQ(T.data<float>()[4], 5.0f);
  EXPECT_THROW(T.data<int32_t>(), Error);
  EXPECT_THROW(T.getFlat(6), Error);
  EXPECT_THROW((Tensor::fromVector<float>({1, 2}, {3})), Error);
  Tensor S = Tensor::scalar<int64_t>(7);
  EXPECT_EQ(S.rank(), 0u);
  EXPECT_EQ(S.getFlatInt(0), 7);
}

TEST(Tensor, ViewsShareStorage) {
  Tensor T = Tensor::fromVector<int32_t>({0, 1, 2, 3, 4, 5}, {2, 3});
  Tensor P = T.permute({1, 0});
  EXPECT_EQ(P.shape(), (Shape{3, 2}));
  EXPECT_FALSE(P.isContiguous());
  EXPECT_EQ(P.toIntVector(), (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
  Tensor C = P.contiguous();
  EXPECT_TRUE(C.isContiguous());
  EXPECT_EQ(C.toIntVector(), P.toIntVector());
  Tensor Sl = T.slice(1, 0, 3, 2);
  EXPECT_EQ(Sl.toIntVector(), (std::vector<int64_t>{0, 2, 3, 5}));
  Tensor R = T.reshape({3, -1});
  EXPECT_EQ(R.shape(), (Shape{3, 2}));
  EXPECT_EQ(R.storage(), T.storage());
  EXPECT_THROW(T.reshape({4, -1}), Error);
  EXPECT_THROW(T.reshape({-1, -1}), Error);
  Tensor B = Tensor::fromVector<float>({1, 2}, {2, 1}).broadcastTo({3, 2, 4});
  EXPECT_EQ(B.numel(), 24);
  EXPECT_EQ(B.getDouble({2, 1, 3}), 2.0);
  EXPECT_THROW(T.broadcastTo({3, 3}), Error);
}

/// The elements of a view by index, row-major (the oracle of the copies).
static std::vector<double> byIndex(const Tensor &T) {
  std::vector<double> R;
  std::vector<int64_t> Idx(T.rank(), 0);
  for (int64_t I = 0; I < T.numel(); ++I) {
    R.push_back(T.getDouble(Idx));
    for (size_t D = T.rank(); D-- > 0;)
      if (++Idx[D] < T.shape()[D])
        break;
      else
        Idx[D] = 0;
  }
  return R;
}

TEST(Tensor, StridedCopiesAndReads) {
  // Views of a 4-d tensor: permuted, sliced with steps and reversed,
  // broadcast (stride 0), size-1 axes; copied into contiguous tensors of
  // the same and of other dtypes, into strided destinations, and read.
  std::vector<float> V(2 * 3 * 4 * 5);
  for (size_t I = 0; I < V.size(); ++I)
    V[I] = static_cast<float>(I) - 50.5f;
  Tensor T = Tensor::fromVector<float>(V, {2, 3, 4, 5});
  std::vector<Tensor> Views = {
      T,
      T.permute({3, 1, 0, 2}),
      T.permute({0, 1, 3, 2}),
      T.slice(3, 1, 5, 2).slice(1, 0, 3, 2),
      Tensor(T.storage(), {2, 3, 4, 5}, {60, 20, -5, 1}, 15, DType::F32),
      T.slice(0, 1, 2).permute({2, 0, 3, 1}),
      Tensor::fromVector<float>({1, 2, 3}, {3, 1}).broadcastTo({2, 3, 4}),
      T.reshape({6, 1, 20}).slice(2, 2, 18, 3)};
  for (size_t K = 0; K < Views.size(); ++K) {
    SCOPED_TRACE("view " + std::to_string(K));
    const Tensor &X = Views[K];
    std::vector<double> Want = byIndex(X);
    EXPECT_EQ(X.toDoubleVector(), Want);
    std::vector<int64_t> WantInts;
    for (double D : Want)
      WantInts.push_back(static_cast<int64_t>(D));
    EXPECT_EQ(X.toIntVector(), WantInts);
    EXPECT_EQ(byIndex(X.contiguous()), Want);
    EXPECT_EQ(byIndex(X.to(DType::F64)), Want);
    EXPECT_EQ(X.to(DType::I32).toIntVector(), WantInts);
    // Into a strided destination: a transposed view of a fresh tensor.
    std::vector<int64_t> Perm(X.rank());
    for (size_t D = 0; D < X.rank(); ++D)
      Perm[D] = static_cast<int64_t>(X.rank() - 1 - D);
    Shape RevShape(std::vector<int64_t>(X.shape().dims().rbegin(),
                                        X.shape().dims().rend()));
    for (DType DT : {DType::F32, DType::F64}) {
      Tensor Dst = Tensor::empty(RevShape, DT).permute(Perm);
      Dst.copyFrom(X);
      EXPECT_EQ(byIndex(Dst), Want);
    }
  }
}

TEST(Tensor, ViewOutsideStorageIsRejected) {
  auto S = Storage::allocate(16);
  EXPECT_THROW(Tensor(S, {5}, {1}, 0, DType::F32), Error);
  EXPECT_THROW(Tensor(S, {2}, {1}, 3, DType::F32), Error);
  EXPECT_THROW(Tensor(S, {2}, {-1}, 0, DType::F32), Error);
  EXPECT_NO_THROW(Tensor(S, {2}, {-1}, 1, DType::F32));
  EXPECT_NO_THROW(Tensor(S, {0}, {1}, 100, DType::F32));
}

TEST(Tensor, ConvertsBetweenDTypes) {
  Tensor T = Tensor::fromVector<float>({1.5f, -2.25f, 0.0f}, {3});
  Tensor H = T.to(DType::F16);
  EXPECT_EQ(H.dtype(), DType::F16);
  EXPECT_EQ(H.getFlat(1), -2.25);
  Tensor I = T.to(DType::I32);
  EXPECT_EQ(I.toIntVector(), (std::vector<int64_t>{1, -2, 0}));
  Tensor Bo = T.to(DType::Bool);
  EXPECT_EQ(Bo.toIntVector(), (std::vector<int64_t>{1, 1, 0}));
  EXPECT_TRUE(T.equals(H.to(DType::F32)));
}

TEST(Tensor, LargeBlocksAreReusedZeroed) {
  // A freed block of 1 MiB is handed out again for the same size (the
  // allocator's cache), and a tensor made on it is zero-filled again.
  constexpr int64_t N = 1 << 18;
  const void *First;
  {
    Tensor A = Tensor::empty({N}, DType::F32);
    First = A.rawData();
    float *P = A.data<float>();
    for (int64_t I = 0; I < N; ++I)
      P[I] = 1.0f;
  }
  Tensor B = Tensor::empty({N}, DType::F32);
  EXPECT_EQ(B.rawData(), First);
  const float *P = B.data<float>();
  EXPECT_EQ(std::count(P, P + N, 0.0f), N);
  // Another size does not take it.
  Tensor C = Tensor::empty({N + 16}, DType::F32);
  EXPECT_NE(C.rawData(), First);
}

TEST(Tensor, TheBlockCacheStaysBounded) {
  // Blocks of many sizes, the largest kept, freed one after another (a
  // decoder's growing cache): the cache drops old ones past its cap and
  // its age limit, and every block still comes back whole and zeroed.
  for (int Round = 0; Round < 2; ++Round)
    for (int64_t MiB : {16, 15, 12, 9, 8, 5, 1}) {
      for (int64_t Extra = 0; Extra < 40; ++Extra) {
        int64_t N = (MiB << 18) - Extra * 1024;
        Tensor T = Tensor::empty({N}, DType::F32);
        const float *P = T.data<float>();
        ASSERT_EQ(P[0], 0.0f);
        ASSERT_EQ(P[N - 1], 0.0f);
        T.data<float>()[N - 1] = 1.0f; // Dirty before it is freed.
      }
    }
}

TEST(Tensor, ZeroSize) {
  Tensor T = Tensor::empty({0, 3}, DType::F32);
  EXPECT_EQ(T.numel(), 0);
  EXPECT_EQ(T.nbytes(), 0u);
  Tensor C = T.clone();
  EXPECT_EQ(C.shape(), (Shape{0, 3}));
  EXPECT_TRUE(Tensor::empty({5, 0}, DType::F32).isContiguous());
  EXPECT_EQ(Tensor::empty({5, 0}, DType::F32).reshape({0, 7}).shape(),
            (Shape{0, 7}));
  EXPECT_TRUE(T.equals(C));
}

TEST(Tensor, ToString) {
  Tensor T = Tensor::fromVector<int64_t>({1, 2}, {2});
  EXPECT_EQ(T.toString(), "i64[2] {1, 2}");
  EXPECT_EQ(Tensor().toString(), "undefined");
}

TEST(Error, CarriesContext) {
  Error E(ErrorKind::Parse, "bad token");
  E.addContext("in model.nng").addContext("while loading");
  EXPECT_EQ(std::string(E.what()), "bad token\n  in model.nng\n  while loading");
  EXPECT_EQ(E.context().size(), 2u);
  EXPECT_STREQ(errorKindName(ErrorKind::Parse), "parse error");
}

TEST(Shape, StrideOverflowIsRejectedEvenWhenEmpty) {
  // Zero elements, but the strides of the non-zero axes overflow int64.
  EXPECT_THROW((Shape{0, 1LL << 40, 1LL << 40}.validate()), Error);
  EXPECT_NO_THROW((Shape{0, 1LL << 20, 1LL << 20}.validate()));
}
