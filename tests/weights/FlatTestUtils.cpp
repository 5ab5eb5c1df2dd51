//===- FlatTestUtils.cpp - Helpers for safetensors/.npz tests ---*- C++ -*-===//
//
// See FlatTestUtils.h. The zip builder writes only what the hostile tests
// need (stored entries, no extras); the CRC-32 is computed here so the tests
// do not depend on zlib.
//
//===----------------------------------------------------------------------===//

#include "weights/FlatTestUtils.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace nng::weights::flattest {

std::vector<DType> allDTypes() {
  return {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64,
          DType::I32, DType::I16, DType::I8,  DType::U8,   DType::Bool,
          DType::U16, DType::U32, DType::U64};
}

namespace {
template <typename T> void put(rt::Tensor &R, int64_t I, T V) {
  std::memcpy(static_cast<char *>(R.rawData()) + I * sizeof(T), &V, sizeof(T));
}
} // namespace

rt::Tensor pattern(DType T, const Shape &Sh) {
  rt::Tensor R = rt::Tensor::empty(Sh, T);
  for (int64_t I = 0; I < R.numel(); ++I) {
    double F = I * 0.5 - 3;
    int64_t N = I * 7 - 11;
    switch (T) {
    case DType::F64:
      put<double>(R, I, F);
      break;
    case DType::F32:
      put<float>(R, I, static_cast<float>(F));
      break;
    case DType::F16:
      put<Half>(R, I, Half(static_cast<float>(F)));
      break;
    case DType::BF16:
      put<BFloat16>(R, I, BFloat16(static_cast<float>(F)));
      break;
    case DType::I64:
      put<int64_t>(R, I, N);
      break;
    case DType::I32:
      put<int32_t>(R, I, static_cast<int32_t>(N));
      break;
    case DType::I16:
      put<int16_t>(R, I, static_cast<int16_t>(N));
      break;
    case DType::I8:
      put<int8_t>(R, I, static_cast<int8_t>(N));
      break;
    case DType::U8:
      put<uint8_t>(R, I, static_cast<uint8_t>(N));
      break;
    case DType::U16:
      put<uint16_t>(R, I, static_cast<uint16_t>(N));
      break;
    case DType::U32:
      put<uint32_t>(R, I, static_cast<uint32_t>(N));
      break;
    case DType::U64:
      put<uint64_t>(R, I, static_cast<uint64_t>(N));
      break;
    case DType::Bool:
      put<uint8_t>(R, I, I % 3 == 0 ? 1 : 0);
      break;
    case DType::String: // Left as empty strings (id 0).
      break;
    }
  }
  return R;
}

fs::path freshDir() {
  const auto *Info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string Name =
      Info ? std::string(Info->test_suite_name()) + "-" + Info->name()
           : std::string("x");
  for (char &C : Name)
    if (C == '/')
      C = '_';
  fs::path P = fs::path(::testing::TempDir()) /
               ("nng-flat-" + Name + "-" + std::to_string(::getpid()));
  fs::remove_all(P);
  fs::create_directories(P);
  return P;
}

std::string slurp(const fs::path &P) {
  std::ifstream In(P, std::ios::binary);
  std::ostringstream OS;
  OS << In.rdbuf();
  return OS.str();
}

void spit(const fs::path &P, const std::string &Bytes) {
  std::ofstream Out(P, std::ios::binary);
  Out.write(Bytes.data(), static_cast<std::streamsize>(Bytes.size()));
}

namespace {
uint32_t crc32(const std::string &S) {
  uint32_t C = 0xFFFFFFFFu;
  for (unsigned char B : S) {
    C ^= B;
    for (int K = 0; K < 8; ++K)
      C = (C >> 1) ^ (0xEDB88320u & (0u - (C & 1)));
  }
  return ~C;
}
void le(std::string &S, uint64_t V, int Bytes) {
  for (int I = 0; I < Bytes; ++I)
    S += static_cast<char>((V >> (8 * I)) & 0xFF);
}
} // namespace

std::string
makeZip(const std::vector<std::pair<std::string, std::string>> &Entries) {
  std::string Out, Central;
  for (const auto &[Name, Data] : Entries) {
    uint32_t Crc = crc32(Data);
    uint64_t Off = Out.size();
    le(Out, 0x04034b50, 4);
    le(Out, 20, 2);
    le(Out, 0, 2);
    le(Out, 0, 2); // stored
    le(Out, 0, 2);
    le(Out, 0x21, 2);
    le(Out, Crc, 4);
    le(Out, Data.size(), 4);
    le(Out, Data.size(), 4);
    le(Out, Name.size(), 2);
    le(Out, 0, 2);
    Out += Name;
    Out += Data;
    le(Central, 0x02014b50, 4);
    le(Central, 20, 2);
    le(Central, 20, 2);
    le(Central, 0, 2);
    le(Central, 0, 2);
    le(Central, 0, 2);
    le(Central, 0x21, 2);
    le(Central, Crc, 4);
    le(Central, Data.size(), 4);
    le(Central, Data.size(), 4);
    le(Central, Name.size(), 2);
    le(Central, 0, 2);
    le(Central, 0, 2);
    le(Central, 0, 2);
    le(Central, 0, 2);
    le(Central, 0, 4);
    le(Central, Off, 4);
    Central += Name;
  }
  uint64_t CdOff = Out.size();
  Out += Central;
  le(Out, 0x06054b50, 4);
  le(Out, 0, 2);
  le(Out, 0, 2);
  le(Out, Entries.size(), 2);
  le(Out, Entries.size(), 2);
  le(Out, Central.size(), 4);
  le(Out, CdOff, 4);
  le(Out, 0, 2);
  return Out;
}

std::string makeNpy(const std::string &Dict, const std::string &Data,
                    int Major) {
  size_t Prefix = Major == 1 ? 10 : 12;
  std::string H = Dict;
  while ((Prefix + H.size() + 1) % 64 != 0)
    H += ' ';
  H += '\n';
  std::string Out = "\x93NUMPY";
  Out += static_cast<char>(Major);
  Out += '\0';
  le(Out, H.size(), Major == 1 ? 2 : 4);
  return Out + H + Data;
}

std::string makeSafetensors(const std::string &Json, const std::string &Data) {
  std::string Out;
  le(Out, Json.size(), 8);
  return Out + Json + Data;
}

bool runOracle(const std::string &Args, std::string *Out, std::string *Skip) {
  std::string Py = "/usr/bin/python3";
  if (const char *E = std::getenv("NNGRAPH_PYTHON"); E && *E)
    Py = E;
  if (Py.find('/') != std::string::npos && !fs::exists(Py)) {
    *Skip = Py + " does not exist (set NNGRAPH_PYTHON to a Python with numpy)";
    return false;
  }
  std::string Cmd = "OPENBLAS_CORETYPE=SkylakeX OMP_NUM_THREADS=1 '" + Py +
                    "' '" NNGRAPH_SOURCE_DIR
                    "/tests/weights/scripts/flat_oracle.py' " +
                    Args + " 2>&1";
  FILE *P = ::popen(Cmd.c_str(), "r");
  if (!P) {
    *Skip = "cannot run " + Py;
    return false;
  }
  char Buf[4096];
  size_t N;
  Out->clear();
  while ((N = std::fread(Buf, 1, sizeof(Buf), P)) > 0)
    Out->append(Buf, N);
  int Status = ::pclose(P);
  int Code = WIFEXITED(Status) ? WEXITSTATUS(Status) : -1;
  // The script exits 77 when numpy cannot be imported.
  if (Code == 77 || Code == 127) {
    *Skip = Py + " cannot run the numpy oracle: " + *Out;
    return false;
  }
  EXPECT_EQ(Code, 0) << "flat_oracle.py " << Args << " failed:\n" << *Out;
  return Code == 0;
}

void expectError(const std::function<void()> &Fn,
                 const std::vector<std::string> &Needles) {
  try {
    Fn();
    ADD_FAILURE() << "no error was thrown (expected one mentioning '"
                  << (Needles.empty() ? "" : Needles[0]) << "')";
  } catch (const Error &E) {
    std::string Msg = E.what();
    for (const std::string &N : Needles)
      EXPECT_NE(Msg.find(N), std::string::npos)
          << "message lacks '" << N << "': " << Msg;
  }
}

} // namespace nng::weights::flattest
