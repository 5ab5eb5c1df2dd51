//===- CudaBundle.h - The CUDA device bundle's file format ------*- C++ -*-===//
//
// A device bundle carries generated kernels to a GPU machine that cannot
// run nngraph itself: per kernel the NVRTC-compiled cubin, the launch
// arguments exactly as CudaCodeGen.h lays them out, the input bytes, and the
// outputs the kernel IR interpreter computed from them, with a tolerance.
// nngraph-cuda-bundle writes it (CudaBundleWriter.cpp); cuda_bundle_run
// reads it, runs each kernel through the CUDA driver API and compares. This
// header depends on nothing but the C++ standard library, so the runner
// stays a standalone program.
//
// The file (kernels.nngcb in the bundle folder), little-endian throughout;
// str is a u32 length then the bytes, blob a u64 length then the bytes:
//
//   magic "NNGCUDAB", u32 version (1), u32 kernel count, then per kernel:
//     str  label         unique name of the test case ("softmax_f16")
//     str  entry         the extern "C" __global__ function
//     str  arch          what the cubin is for ("sm_90")
//     str  ir            the kernel IR's text form (printKernel), to read
//     blob cubin
//     u32  rank, then i64 sizes[rank]     the domain sizes
//     u32  max grid      most blocks to launch; 0: the runner chooses
//     u32  buffer count, then per buffer (the kernel's parameter order):
//       str  name
//       u8   dtype       0 f32, 1 f16, 2 bf16, 3 i32
//       u8   is output
//       f64  rtol, f64 atol  |got - expected| <= atol + rtol * |expected|;
//                            NaN matches NaN, infinities must be equal;
//                            i32 outputs must be equal
//       blob initial     the bytes the device buffer starts with: an
//                        input's data (strided inputs include their gaps),
//                        an output's fill pattern
//       blob expected    outputs: the interpreter's result; inputs: empty
//     blob args          the struct passed by value after the buffer
//                        pointers: i64 sizes[rank], then i64
//                        strides[buffers * rank] (element strides,
//                        buffer-major, 0 where a buffer broadcasts)
//
// The kernel's parameters are the buffers' device pointers in order, then
// args (8-byte fields, no padding: 8 * rank * (1 + buffers) bytes). Rows
// are the outer points (the product of sizes[0 .. rank-2]); the kernel
// takes them in a grid-stride loop.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace nng::cudabundle {

/// The element types of a bundle's buffers.
enum class ElemType : uint8_t { F32 = 0, F16 = 1, BF16 = 2, I32 = 3 };

inline size_t elemSize(ElemType T) {
  return T == ElemType::F16 || T == ElemType::BF16 ? 2 : 4;
}
inline const char *elemName(ElemType T) {
  switch (T) {
  case ElemType::F32:
    return "f32";
  case ElemType::F16:
    return "f16";
  case ElemType::BF16:
    return "bf16";
  case ElemType::I32:
    return "i32";
  }
  return "?";
}

/// One buffer parameter of a bundled kernel.
struct BundleBuffer {
  std::string Name;
  ElemType Type = ElemType::F32;
  bool IsOutput = false;
  double Rtol = 0, Atol = 0;
  std::string Initial;  ///< Bytes the device buffer starts with.
  std::string Expected; ///< Outputs: the interpreter's bytes.

  bool operator==(const BundleBuffer &) const = default;
};

/// One kernel with its launch and its data.
struct BundleKernel {
  std::string Label, Entry, Arch, IR, Cubin;
  std::vector<int64_t> Sizes;
  uint32_t MaxGrid = 0;
  std::vector<BundleBuffer> Buffers;
  std::string Args; ///< The by-value argument struct's bytes.

  /// The number of rows (outer points) of the domain.
  int64_t rows() const {
    int64_t R = 1;
    for (size_t D = 0; D + 1 < Sizes.size(); ++D)
      R *= Sizes[D];
    return R;
  }
  bool operator==(const BundleKernel &) const = default;
};

struct Bundle {
  std::vector<BundleKernel> Kernels;
  bool operator==(const Bundle &) const = default;
};

inline constexpr char BundleMagic[9] = "NNGCUDAB";
inline constexpr uint32_t BundleVersion = 1;
/// The bundle file's name inside a bundle folder.
inline constexpr const char *BundleFileName = "kernels.nngcb";

/// The argument struct for Sizes and Strides (buffer-major).
inline std::string packArgs(const std::vector<int64_t> &Sizes,
                            const std::vector<int64_t> &Strides) {
  std::string A((Sizes.size() + Strides.size()) * 8, '\0');
  if (!Sizes.empty())
    std::memcpy(A.data(), Sizes.data(), Sizes.size() * 8);
  if (!Strides.empty())
    std::memcpy(A.data() + Sizes.size() * 8, Strides.data(),
                Strides.size() * 8);
  return A;
}

namespace detail {

class Writer {
public:
  template <typename T> void pod(T V) {
    char B[sizeof(T)];
    std::memcpy(B, &V, sizeof(T));
    Out.append(B, sizeof(T));
  }
  void str(const std::string &S) {
    pod(static_cast<uint32_t>(S.size()));
    Out += S;
  }
  void blob(const std::string &S) {
    pod(static_cast<uint64_t>(S.size()));
    Out += S;
  }
  std::string Out;
};

class Reader {
public:
  explicit Reader(const std::string &In) : In(In) {}
  template <typename T> T pod(const char *What) {
    need(sizeof(T), What);
    T V;
    std::memcpy(&V, In.data() + Pos, sizeof(T));
    Pos += sizeof(T);
    return V;
  }
  std::string str(const char *What) { return bytes(pod<uint32_t>(What), What); }
  std::string blob(const char *What) {
    return bytes(pod<uint64_t>(What), What);
  }
  std::string bytes(uint64_t N, const char *What) {
    need(N, What);
    std::string S = In.substr(Pos, N);
    Pos += N;
    return S;
  }
  bool atEnd() const { return Pos == In.size(); }
  size_t pos() const { return Pos; }

private:
  void need(uint64_t N, const char *What) const {
    if (N > In.size() - Pos)
      throw std::runtime_error("bundle truncated at byte " +
                               std::to_string(Pos) + " reading " + What + " (" +
                               std::to_string(N) + " bytes wanted, " +
                               std::to_string(In.size() - Pos) + " left)");
  }
  const std::string &In;
  size_t Pos = 0;
};

} // namespace detail

/// B as the bundle file's bytes.
inline std::string serializeBundle(const Bundle &B) {
  detail::Writer W;
  W.Out.append(BundleMagic, 8);
  W.pod(BundleVersion);
  W.pod(static_cast<uint32_t>(B.Kernels.size()));
  for (const BundleKernel &K : B.Kernels) {
    W.str(K.Label);
    W.str(K.Entry);
    W.str(K.Arch);
    W.str(K.IR);
    W.blob(K.Cubin);
    W.pod(static_cast<uint32_t>(K.Sizes.size()));
    for (int64_t S : K.Sizes)
      W.pod(S);
    W.pod(K.MaxGrid);
    W.pod(static_cast<uint32_t>(K.Buffers.size()));
    for (const BundleBuffer &Buf : K.Buffers) {
      W.str(Buf.Name);
      W.pod(static_cast<uint8_t>(Buf.Type));
      W.pod(static_cast<uint8_t>(Buf.IsOutput));
      W.pod(Buf.Rtol);
      W.pod(Buf.Atol);
      W.blob(Buf.Initial);
      W.blob(Buf.Expected);
    }
    W.blob(K.Args);
  }
  return std::move(W.Out);
}

/// Parses the bundle file's bytes; throws std::runtime_error saying what is
/// wrong where (bad magic or version, truncation, an inconsistent kernel).
inline Bundle parseBundle(const std::string &Bytes) {
  detail::Reader R(Bytes);
  if (R.bytes(8, "the magic") != std::string(BundleMagic, 8))
    throw std::runtime_error("not a bundle file (no NNGCUDAB magic)");
  uint32_t Version = R.pod<uint32_t>("the version");
  if (Version != BundleVersion)
    throw std::runtime_error("bundle version " + std::to_string(Version) +
                             ", this reader knows " +
                             std::to_string(BundleVersion));
  Bundle B;
  uint32_t N = R.pod<uint32_t>("the kernel count");
  for (uint32_t I = 0; I < N; ++I) {
    BundleKernel K;
    K.Label = R.str("a label");
    std::string Where = "kernel " + std::to_string(I) + " (" + K.Label + ")";
    K.Entry = R.str("an entry name");
    K.Arch = R.str("an arch");
    K.IR = R.str("kernel IR");
    K.Cubin = R.blob("a cubin");
    uint32_t Rank = R.pod<uint32_t>("a rank");
    if (Rank == 0 || Rank > 16)
      throw std::runtime_error(Where + ": rank " + std::to_string(Rank));
    for (uint32_t D = 0; D < Rank; ++D)
      K.Sizes.push_back(R.pod<int64_t>("a size"));
    K.MaxGrid = R.pod<uint32_t>("the grid cap");
    uint32_t NB = R.pod<uint32_t>("the buffer count");
    if (NB > 4096)
      throw std::runtime_error(Where + ": " + std::to_string(NB) + " buffers");
    for (uint32_t J = 0; J < NB; ++J) {
      BundleBuffer Buf;
      Buf.Name = R.str("a buffer name");
      uint8_t T = R.pod<uint8_t>("a dtype");
      if (T > 3)
        throw std::runtime_error(Where + ": buffer " + Buf.Name +
                                 " has dtype code " + std::to_string(T));
      Buf.Type = static_cast<ElemType>(T);
      Buf.IsOutput = R.pod<uint8_t>("an output flag") != 0;
      Buf.Rtol = R.pod<double>("rtol");
      Buf.Atol = R.pod<double>("atol");
      Buf.Initial = R.blob("initial bytes");
      Buf.Expected = R.blob("expected bytes");
      if (Buf.Initial.size() % elemSize(Buf.Type) ||
          (Buf.IsOutput && Buf.Expected.size() != Buf.Initial.size()) ||
          (!Buf.IsOutput && !Buf.Expected.empty()))
        throw std::runtime_error(Where + ": buffer " + Buf.Name +
                                 ": sizes of its initial and expected bytes "
                                 "do not fit its type and role");
      K.Buffers.push_back(std::move(Buf));
    }
    K.Args = R.blob("the argument struct");
    if (K.Args.size() != 8 * Rank * (1 + NB))
      throw std::runtime_error(Where + ": argument struct of " +
                               std::to_string(K.Args.size()) +
                               " bytes, expected 8 * rank * (1 + buffers)");
    if (std::memcmp(K.Args.data(), K.Sizes.data(), 8 * Rank) != 0)
      throw std::runtime_error(Where + ": the argument struct's sizes are not "
                                       "the kernel's sizes");
    B.Kernels.push_back(std::move(K));
  }
  if (!R.atEnd())
    throw std::runtime_error("bundle has " +
                             std::to_string(Bytes.size() - R.pos()) +
                             " bytes after its last kernel");
  return B;
}

} // namespace nng::cudabundle
