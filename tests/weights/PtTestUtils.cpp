//===- PtTestUtils.cpp - Helpers for the .pt reader/writer tests ----------===//
//
// The oracle runner, the manifest reader/writer and the zip and pickle
// builders declared in PtTestUtils.h.
//
//===----------------------------------------------------------------------===//

#include "PtTestUtils.h"
#include "common/Subprocess.h"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace nng::test; // runCommand, shellQuote, pythonCandidates
using json = nlohmann::json;

namespace nng::weights::pttest {

fs::path freshDir() {
  const auto *Info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string Name = Info ? std::string(Info->test_suite_name()) + "-" +
                                Info->name()
                          : std::string("x");
  std::replace(Name.begin(), Name.end(), '/', '_');
  fs::path P = fs::path(::testing::TempDir()) /
               ("nng-pt-" + Name + "-" + std::to_string(::getpid()));
  fs::remove_all(P);
  fs::create_directories(P);
  return P;
}

std::string slurp(const fs::path &P) {
  std::ifstream F(P, std::ios::binary);
  std::ostringstream OS;
  OS << F.rdbuf();
  return OS.str();
}

void spit(const fs::path &P, const std::string &Bytes) {
  std::ofstream F(P, std::ios::binary);
  F.write(Bytes.data(), static_cast<std::streamsize>(Bytes.size()));
}

bool runOracle(const std::string &Args, std::string *Out, std::string *Skip) {
  const std::vector<std::string> Pythons = pythonCandidates();
  std::string Reasons;
  for (const std::string &Py : Pythons) {
    if (Py.find('/') != std::string::npos && !fs::exists(Py)) {
      Reasons += Py + " does not exist; ";
      continue;
    }
    // OpenBLAS 0.3.21 does not recognise this CPU (DESIGN.md).
    std::string Cmd = "OPENBLAS_CORETYPE=SkylakeX OMP_NUM_THREADS=2 '" + Py +
                      "' '" NNGRAPH_SOURCE_DIR
                      "/tests/weights/scripts/pt_oracle.py' " +
                      Args;
    std::string O;
    int Status = runCommand(Cmd, O);
    *Out = O;
    if (Status == 0)
      return true;
    if (Status == 77 || (Status == 127 && O.find("pt_oracle") == std::string::npos)) {
      Reasons += Py + ": " + O + "; ";
      continue;
    }
    ADD_FAILURE() << "pt_oracle.py " << Args << " failed (exit status "
                  << Status << ") with " << Py << ":\n"
                  << O;
    Skip->clear();
    return false;
  }
  *Skip = "no Python with torch: " + Reasons;
  return false;
}

namespace {

std::string tensorBytes(const rt::Tensor &T) {
  rt::Tensor C = T.contiguous();
  if (C.numel() == 0)
    return "";
  return std::string(static_cast<const char *>(C.rawData()), C.nbytes());
}

struct Checker {
  const std::string &Raw;
  std::map<int64_t, const Storage *> IdToStore;
  std::map<const Storage *, int64_t> StoreToId;

  void check(const Object &O, const json &W, const std::string &Path) {
    std::string T = W.at("t");
    SCOPED_TRACE(Path);
    if (T == "tensor") {
      ASSERT_TRUE(O.isTensor()) << Path << " is a " << Object::kindName(O.kind());
      const rt::Tensor &X = O.toTensor();
      EXPECT_EQ(std::string(dtypeName(X.dtype())), W.at("dtype").get<std::string>())
          << Path;
      EXPECT_EQ(X.shape().dims(), W.at("shape").get<std::vector<int64_t>>()) << Path;
      size_t Off = W.at("off"), N = W.at("nbytes");
      ASSERT_LE(Off + N, Raw.size());
      EXPECT_TRUE(tensorBytes(X) == Raw.substr(Off, N)) << Path << ": values differ";
      if (X.numel() > 0) {
        int64_t Id = W.at("storage");
        const Storage *S = X.storage().get();
        auto [It, New] = IdToStore.emplace(Id, S);
        EXPECT_EQ(It->second, S) << Path << ": should share storage " << Id;
        auto [It2, New2] = StoreToId.emplace(S, Id);
        EXPECT_EQ(It2->second, Id) << Path << ": shares storage with another id";
      }
      return;
    }
    if (T == "dict") {
      ASSERT_TRUE(O.isDict()) << Path << " is a " << Object::kindName(O.kind());
      const auto &Items = W.at("items");
      ASSERT_EQ(O.entries().size(), Items.size()) << Path;
      for (size_t I = 0; I < Items.size(); ++I) {
        const Object &K = O.entries()[I].first;
        const json &WK = Items[I][0];
        std::string KText;
        if (WK.is_string()) {
          ASSERT_EQ(K.kind(), Object::Kind::String) << Path;
          EXPECT_EQ(K.toStringRef(), WK.get<std::string>()) << Path << " key " << I;
          KText = WK.get<std::string>();
        } else {
          ASSERT_EQ(K.kind(), Object::Kind::Int) << Path;
          EXPECT_EQ(K.toInt(), WK.get<int64_t>()) << Path << " key " << I;
          KText = std::to_string(WK.get<int64_t>());
        }
        check(O.entries()[I].second, Items[I][1], Path + "/" + KText);
      }
      return;
    }
    if (T == "list" || T == "tuple") {
      ASSERT_EQ(O.kind(), T == "list" ? Object::Kind::List : Object::Kind::Tuple)
          << Path;
      const auto &Items = W.at("items");
      ASSERT_EQ(O.elements().size(), Items.size()) << Path;
      for (size_t I = 0; I < Items.size(); ++I)
        check(O.elements()[I], Items[I], Path + "/" + std::to_string(I));
      return;
    }
    if (T == "none") {
      EXPECT_TRUE(O.isNone()) << Path;
    } else if (T == "bool") {
      ASSERT_EQ(O.kind(), Object::Kind::Bool) << Path;
      EXPECT_EQ(O.toBool(), W.at("v").get<bool>()) << Path;
    } else if (T == "int") {
      ASSERT_EQ(O.kind(), Object::Kind::Int) << Path;
      EXPECT_EQ(O.toInt(), W.at("v").get<int64_t>()) << Path;
    } else if (T == "float") {
      ASSERT_EQ(O.kind(), Object::Kind::Float) << Path;
      EXPECT_EQ(O.toDouble(), W.at("v").get<double>()) << Path;
    } else if (T == "str") {
      ASSERT_EQ(O.kind(), Object::Kind::String) << Path;
      EXPECT_EQ(O.toStringRef(), W.at("v").get<std::string>()) << Path;
    } else {
      ADD_FAILURE() << Path << ": unknown manifest kind " << T;
    }
  }
};

struct Describer {
  std::string Raw;
  std::map<const Storage *, int64_t> Ids;
  int64_t Next = 0;

  json describe(const Object &O) {
    switch (O.kind()) {
    case Object::Kind::Tensor: {
      const rt::Tensor &T = O.toTensor();
      int64_t Id;
      if (T.numel() == 0)
        Id = Next++;
      else {
        auto [It, New] = Ids.emplace(T.storage().get(), Next);
        if (New)
          ++Next;
        Id = It->second;
      }
      std::string B = tensorBytes(T);
      json J = {{"t", "tensor"},
                {"dtype", std::string(dtypeName(T.dtype()))},
                {"shape", T.shape().dims()},
                {"off", Raw.size()},
                {"nbytes", B.size()},
                {"storage", Id}};
      Raw += B;
      return J;
    }
    case Object::Kind::Dict: {
      json Items = json::array();
      bool AllTensors = !O.entries().empty();
      for (const auto &[K, V] : O.entries()) {
        AllTensors = AllTensors && V.isTensor();
        json JK = K.kind() == Object::Kind::String ? json(K.toStringRef())
                                                    : json(K.toInt());
        Items.push_back(json::array({JK, describe(V)}));
      }
      return {{"t", "dict"}, {"ordered", AllTensors}, {"items", Items}};
    }
    case Object::Kind::List:
    case Object::Kind::Tuple: {
      json Items = json::array();
      for (const Object &E : O.elements())
        Items.push_back(describe(E));
      return {{"t", O.kind() == Object::Kind::List ? "list" : "tuple"},
              {"items", Items}};
    }
    case Object::Kind::None:
      return {{"t", "none"}};
    case Object::Kind::Bool:
      return {{"t", "bool"}, {"v", O.toBool()}};
    case Object::Kind::Int:
      return {{"t", "int"}, {"v", O.toInt()}};
    case Object::Kind::Float:
      return {{"t", "float"}, {"v", O.toDouble()}};
    case Object::Kind::String:
      return {{"t", "str"}, {"v", O.toStringRef()}};
    }
    return {};
  }
};

void put16(std::string &S, uint32_t V) {
  S.push_back(static_cast<char>(V & 0xFF));
  S.push_back(static_cast<char>((V >> 8) & 0xFF));
}
void put32(std::string &S, uint32_t V) {
  put16(S, V & 0xFFFF);
  put16(S, V >> 16);
}

} // namespace

void expectMatchesManifest(const Object &O, const std::string &Path) {
  json W = json::parse(slurp(Path + ".json"));
  std::string Raw = slurp(Path + ".raw");
  Checker C{Raw, {}, {}};
  C.check(O, W, fs::path(Path).filename().string());
}

void writeManifest(const Object &O, const std::string &Path) {
  Describer D;
  json J = D.describe(O);
  spit(Path + ".json", J.dump());
  spit(Path + ".raw", D.Raw);
}

std::string makeZip(const std::vector<RawEntry> &Entries) {
  std::string Out, CD;
  for (const RawEntry &E : Entries) {
    uint32_t Crc = E.Crc >= 0 ? static_cast<uint32_t>(E.Crc)
                              : static_cast<uint32_t>(crc32(
                                    0, reinterpret_cast<const Bytef *>(E.Data.data()),
                                    static_cast<uInt>(E.Data.size())));
    uint32_t Size = E.DeclaredSize >= 0 ? static_cast<uint32_t>(E.DeclaredSize)
                                        : static_cast<uint32_t>(E.Data.size());
    uint32_t Off = static_cast<uint32_t>(Out.size());
    std::string H;
    put32(H, 0x04034b50);
    put16(H, 20);
    put16(H, 0);
    put16(H, E.Method);
    put32(H, 0);
    put32(H, Crc);
    put32(H, static_cast<uint32_t>(E.Data.size()));
    put32(H, Size);
    put16(H, static_cast<uint32_t>(E.Name.size()));
    put16(H, 0);
    Out += H + E.Name + E.Data;
    put32(CD, 0x02014b50);
    put16(CD, 20);
    put16(CD, 20);
    put16(CD, 0);
    put16(CD, E.Method);
    put32(CD, 0);
    put32(CD, Crc);
    put32(CD, static_cast<uint32_t>(E.Data.size()));
    put32(CD, Size);
    put16(CD, static_cast<uint32_t>(E.Name.size()));
    put16(CD, 0);
    put16(CD, 0);
    put16(CD, 0);
    put16(CD, 0);
    put32(CD, 0);
    put32(CD, Off);
    CD += E.Name;
  }
  uint32_t CdOff = static_cast<uint32_t>(Out.size());
  Out += CD;
  put32(Out, 0x06054b50);
  put16(Out, 0);
  put16(Out, 0);
  put16(Out, static_cast<uint32_t>(Entries.size()));
  put16(Out, static_cast<uint32_t>(Entries.size()));
  put32(Out, static_cast<uint32_t>(CD.size()));
  put32(Out, CdOff);
  put16(Out, 0);
  return Out;
}

std::string deflateRaw(const std::string &Bytes) {
  z_stream Z;
  std::memset(&Z, 0, sizeof(Z));
  deflateInit2(&Z, 9, Z_DEFLATED, -MAX_WBITS, 9, Z_DEFAULT_STRATEGY);
  std::string Out(deflateBound(&Z, Bytes.size()), '\0');
  Z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(Bytes.data()));
  Z.avail_in = static_cast<uInt>(Bytes.size());
  Z.next_out = reinterpret_cast<Bytef *>(Out.data());
  Z.avail_out = static_cast<uInt>(Out.size());
  deflate(&Z, Z_FINISH);
  Out.resize(Z.total_out);
  deflateEnd(&Z);
  return Out;
}

std::string makePt(const std::string &Pickle,
                   const std::vector<std::pair<std::string, std::string>> &Storages) {
  std::vector<RawEntry> E;
  E.push_back({"archive/data.pkl", Pickle});
  for (const auto &[K, B] : Storages)
    E.push_back({"archive/data/" + K, B});
  E.push_back({"archive/version", "3\n"});
  return makeZip(E);
}

std::string pklString(const std::string &S) {
  std::string R = "X";
  put32(R, static_cast<uint32_t>(S.size()));
  return R + S;
}

std::string pklInt(int64_t V) {
  std::string R = "J";
  put32(R, static_cast<uint32_t>(static_cast<int32_t>(V)));
  return R;
}

std::string pklTensor(const std::string &Key, int64_t Numel, int64_t Offset,
                      const std::vector<int64_t> &Sizes,
                      const std::vector<int64_t> &Strides) {
  std::string P = "ctorch._utils\n_rebuild_tensor_v2\n((" + pklString("storage") +
                  "ctorch\nFloatStorage\n" + pklString(Key) + pklString("cpu") +
                  pklInt(Numel) + "tQ" + pklInt(Offset) + "(";
  for (int64_t S : Sizes)
    P += pklInt(S);
  P += "t(";
  for (int64_t S : Strides)
    P += pklInt(S);
  P += "t\x89" "ccollections\nOrderedDict\n)RtR";
  return P;
}

void expectError(const std::function<void()> &Fn,
                 const std::vector<std::string> &Needles) {
  try {
    Fn();
    ADD_FAILURE() << "expected an nng::Error containing '"
                  << (Needles.empty() ? "" : Needles[0]) << "'";
  } catch (const Error &E) {
    std::string M = E.what();
    for (const std::string &N : Needles)
      EXPECT_NE(M.find(N), std::string::npos)
          << "the error message lacks '" << N << "':\n"
          << M;
  }
}

} // namespace nng::weights::pttest
