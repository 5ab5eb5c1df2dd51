//===- TorchFunctionalOracle.cpp - Running cases in C++ and in torch ------===//
//
// The implementation of FunctionalOracle: the request file, one Python run
// (or its cached answer to the identical request), parsing, and the C++
// half of a case computed when it is compared.
//
//===----------------------------------------------------------------------===//

#include "TorchFunctionalOracle.h"
#include "common/Subprocess.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace nng::test {

namespace {

const char *dtypeTag(DType T) {
  switch (T) {
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::Bool:
    return "bool";
  default:
    return "i64";
  }
}

void writeTensor(std::ostream &OS, const std::string &Name, const Tensor &T) {
  OS << "tensor " << Name << " " << dtypeTag(T.dtype()) << " " << T.dim();
  for (int64_t D : T.sizes())
    OS << " " << D;
  char Buf[40];
  rt::Tensor D = T.data();
  for (int64_t I = 0, N = T.numel(); I < N; ++I) {
    if (T.is_floating_point())
      std::snprintf(Buf, sizeof(Buf), " %.17g", D.getFlat(I));
    else
      std::snprintf(Buf, sizeof(Buf), " %lld",
                    static_cast<long long>(D.getFlatInt(I)));
    OS << Buf;
  }
  OS << "\n";
}

/// Parses "DTYPE NDIM DIMS... VALUES..." from the stream.
Tensor readTensor(std::istringstream &IS) {
  std::string DT;
  int64_t NDim;
  IS >> DT >> NDim;
  std::vector<int64_t> Dims(NDim);
  int64_t N = 1;
  for (int64_t &D : Dims) {
    IS >> D;
    N *= D;
  }
  std::vector<double> V(N);
  for (double &X : V) {
    std::string S;
    IS >> S;
    X = S == "nan"    ? NAN
        : S == "inf"  ? INFINITY
        : S == "-inf" ? -INFINITY
                      : std::stod(S);
  }
  DType T = DT == "f32"    ? DType::F32
            : DT == "f64"  ? DType::F64
            : DT == "bool" ? DType::Bool
                           : DType::I64;
  return tensor(V, Dims, T);
}

/// The gradient seed of case I: fixed values in [-1, 1] (the Python side
/// computes the same formula).
Tensor gradSeed(const Tensor &Out, size_t I) {
  std::vector<double> V(Out.numel());
  for (size_t K = 0; K < V.size(); ++K)
    V[K] = std::sin(0.7 * double(K) + 1.3 * double(I) + 0.1);
  return tensor(V, Out.sizes(), Out.dtype());
}

std::string readFile(const fs::path &P) {
  std::ifstream In(P, std::ios::binary);
  std::ostringstream OS;
  OS << In.rdbuf();
  return OS.str();
}

std::string describeT(const Tensor &T) {
  return std::string(dtypeName(T.dtype())) + T.shape().toString();
}

/// "" when A matches B (torch) within tolerances, else the worst element.
std::string diff(const Tensor &A, const Tensor &B, double Atol, double Rtol) {
  if (A.shape() != B.shape())
    return "shape " + describeT(A) + " vs torch " + describeT(B);
  if (A.is_floating_point() != B.is_floating_point())
    return "dtype " + describeT(A) + " vs torch " + describeT(B);
  std::vector<double> X = A.to_vector<double>(), Y = B.to_vector<double>();
  int64_t Bad = 0, Worst = -1;
  double WorstErr = 0;
  for (size_t I = 0; I < X.size(); ++I) {
    if (std::isnan(X[I]) && std::isnan(Y[I]))
      continue;
    if (X[I] == Y[I])
      continue;
    double Err = std::fabs(X[I] - Y[I]);
    if (!(Err <= Atol + Rtol * std::fabs(Y[I]))) {
      ++Bad;
      if (Worst < 0 || !(Err <= WorstErr)) {
        Worst = static_cast<int64_t>(I);
        WorstErr = Err;
      }
    }
  }
  if (!Bad)
    return "";
  std::ostringstream OS;
  OS << Bad << " of " << X.size() << " elements differ; worst at flat index "
     << Worst << ": " << X[Worst] << " vs torch " << Y[Worst] << " (|diff| "
     << WorstErr << ")";
  return OS.str();
}

} // namespace

std::string FunctionalOracle::run() {
  fs::path Dir = fs::temp_directory_path() /
                 ("nng-functional-oracle-" + std::to_string(::getpid()));
  fs::create_directories(Dir);
  std::ofstream Req(Dir / "request.txt");
  Mine.assign(Cases.size(), {});
  Theirs.assign(Cases.size(), {});
  for (size_t I = 0; I < Cases.size(); ++I) {
    const FunctionalCase &C = Cases[I];
    for (const auto &[Name, T] : C.Inputs)
      writeTensor(Req, C.Name + "." + Name, T);
    Req << "case " << C.Name << " " << I << " " << C.Grads.size();
    for (const std::string &G : C.Grads)
      Req << " " << G;
    Req << "\nexpr " << C.Torch << "\n";
  }
  Req.close();

  auto ParseResult = [&](const fs::path &Path) {
    std::ifstream Res(Path);
    std::string Line;
    std::map<std::string, size_t> Index;
    for (size_t I = 0; I < Cases.size(); ++I)
      Index[Cases[I].Name] = I;
    while (std::getline(Res, Line)) {
      std::istringstream IS(Line);
      std::string Kind, Case;
      IS >> Kind >> Case;
      Result &R = Theirs.at(Index.at(Case));
      if (Kind == "out") {
        size_t K;
        IS >> K;
        R.Outputs.resize(std::max(R.Outputs.size(), K + 1));
        R.Outputs[K] = readTensor(IS);
      } else if (Kind == "grad") {
        std::string Var;
        IS >> Var;
        R.Grads[Var] = readTensor(IS);
      } else if (Kind == "error") {
        R.Error = Line.substr(7 + Case.size());
      }
    }
  };

  // A cached answer to the identical request (same cases, same inputs).
  fs::path CacheDir =
      fs::path(NNGRAPH_BINARY_DIR) / "tests" / "eager-torch-oracle";
  if (fs::exists(CacheDir / "result.txt") &&
      readFile(CacheDir / "request.txt") == readFile(Dir / "request.txt")) {
    ParseResult(CacheDir / "result.txt");
    fs::remove_all(Dir);
    return "";
  }

  std::string Reasons;
  for (const std::string &Py : pythonCandidates()) {
    if (Py.find('/') != std::string::npos && !fs::exists(Py)) {
      Reasons += Py + " does not exist; ";
      continue;
    }
    std::string Cmd =
        "OPENBLAS_CORETYPE=SkylakeX OMP_NUM_THREADS=2 " + shellQuote(Py) + " " +
        shellQuote(NNGRAPH_SOURCE_DIR
                   "/tests/eager/scripts/torch_functional_oracle.py") +
        " " + shellQuote((Dir / "request.txt").string()) + " " +
        shellQuote((Dir / "result.txt").string());
    std::string Out;
    int Status = runCommand(Cmd, Out);
    if (Status == OracleSkipStatus || Status == 127) {
      Reasons += Py + ": " + Out + "; ";
      continue;
    }
    if (Status != 0)
      fail(ErrorKind::Internal, "torch_functional_oracle.py failed with ", Py,
           " (status ", Status, "):\n", Out);
    ParseResult(Dir / "result.txt");
    // Keep the answers for the next process with the same request (ctest
    // runs each case in its own process).
    fs::create_directories(CacheDir);
    std::string Tmp = "." + std::to_string(::getpid());
    fs::copy_file(Dir / "result.txt", CacheDir / ("result.txt" + Tmp),
                  fs::copy_options::overwrite_existing);
    fs::copy_file(Dir / "request.txt", CacheDir / ("request.txt" + Tmp),
                  fs::copy_options::overwrite_existing);
    fs::remove(CacheDir / "request.txt");
    fs::rename(CacheDir / ("result.txt" + Tmp), CacheDir / "result.txt");
    fs::rename(CacheDir / ("request.txt" + Tmp), CacheDir / "request.txt");
    fs::remove_all(Dir);
    return "";
  }
  fs::remove_all(Dir);
  return "no Python with torch: " + Reasons;
}

void FunctionalOracle::computeMine(size_t I) {
  const FunctionalCase &C = Cases[I];
  std::map<std::string, Tensor> Env;
  for (const auto &[Name, T] : C.Inputs) {
    Tensor Leaf(T.data().clone());
    if (std::find(C.Grads.begin(), C.Grads.end(), Name) != C.Grads.end())
      Leaf.requires_grad_(true);
    Env[Name] = Leaf;
  }
  Result &R = Mine[I];
  R = Result();
  try {
    R.Outputs = C.Fn(Env);
    if (!C.Grads.empty() && R.Outputs.at(0).requires_grad()) {
      sum(R.Outputs[0] * gradSeed(R.Outputs[0], I)).backward();
      for (const std::string &G : C.Grads) {
        Tensor Gr = Env[G].grad();
        R.Grads[G] = Gr.defined() ? Gr : zeros_like(Env[G]);
      }
    }
  } catch (const Error &E) {
    R.Error = E.what();
  }
}

std::string FunctionalOracle::compare(size_t I) {
  computeMine(I);
  const FunctionalCase &C = Cases[I];
  const Result &A = Mine[I], &B = Theirs[I];
  std::string Msg;
  if (!A.Error.empty() || !B.Error.empty())
    return "nng error: '" + A.Error + "', torch error: '" + B.Error + "'\n";
  if (A.Outputs.size() != B.Outputs.size())
    return "nng gave " + std::to_string(A.Outputs.size()) + " outputs, torch " +
           std::to_string(B.Outputs.size()) + "\n";
  for (size_t K = 0; K < A.Outputs.size(); ++K)
    if (std::string D = diff(A.Outputs[K], B.Outputs[K], C.Atol, C.Rtol);
        !D.empty())
      Msg += "output " + std::to_string(K) + ": " + D + "\n";
  for (const std::string &G : C.Grads) {
    auto X = A.Grads.find(G), Y = B.Grads.find(G);
    if (X == A.Grads.end() || Y == B.Grads.end()) {
      Msg += "gradient of " + G + " missing on one side\n";
      continue;
    }
    if (std::string D = diff(X->second, Y->second, C.Atol, C.Rtol); !D.empty())
      Msg += "gradient of " + G + ": " + D + "\n";
  }
  return Msg;
}

} // namespace nng::test
