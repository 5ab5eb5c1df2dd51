//===- ConformanceCase.cpp - Running one ONNX conformance test -----------===//
//
// One test folder of ONNX's backend test data: the skip list of operators
// out of scope, the test_data_set_* folders, import (and the optional pass
// pipeline), running on the backend and comparing every output with ONNX's
// tolerances.
//
//===----------------------------------------------------------------------===//

#include "Conformance.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/frontend/onnx/OnnxImport.h"
#include "nngraph/frontend/onnx/OnnxTensor.h"
#include "nngraph/frontend/onnx/OnnxValue.h"
#include "nngraph/ir/OpSchema.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/passes/PassManager.h"
#include "nngraph/passes/Pipelines.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/Strings.h"
#include "nngraph/tools/ConformanceDriver.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <set>
#include <unordered_set>

namespace fs = std::filesystem;

namespace nng::tools::conformance {

const char *statusName(Status S) {
  return S == Status::Pass ? "PASS" : S == Status::Fail ? "FAIL" : "SKIP";
}

/// One line, for the per-test report.
std::string oneLine(std::string S) {
  for (size_t P; (P = S.find('\n')) != std::string::npos;)
    S.replace(P, 1, " | ");
  return S;
}

/// Reads the skip file: "OP[, OP...]: reason" lines, '#' comments. Every
/// listed op must be one nngraph lacks.
SkipList loadSkips(const std::string &Path) {
  SkipList L;
  if (Path.empty())
    return L;
  std::ifstream In(Path);
  if (!In)
    fail(ErrorKind::IO, "cannot open the skip file '", Path, "'");
  std::string Line;
  for (int LineNo = 1; std::getline(In, Line); ++LineNo) {
    Line = std::string(rt::trimSpace(Line));
    if (Line.empty() || Line[0] == '#')
      continue;
    size_t Colon = Line.find(": ");
    if (Colon == std::string::npos ||
        rt::trimSpace(Line.substr(Colon + 1)).empty())
      fail(ErrorKind::Parse, Path, ":", LineNo,
           ": expected 'OP[, OP...]: reason'");
    std::string Reason(rt::trimSpace(Line.substr(Colon + 1)));
    std::stringstream Ops(Line.substr(0, Colon));
    for (std::string Op; std::getline(Ops, Op, ',');) {
      Op = std::string(rt::trimSpace(Op));
      if (Op.empty())
        continue;
      if (Op.rfind("feature:", 0) == 0) {
        // A value feature import refuses (onnxModelFeatures), not an op.
        std::vector<std::string> Known = frontend::onnxRefusedFeatures();
        if (std::find(Known.begin(), Known.end(), Op.substr(8)) == Known.end())
          fail(ErrorKind::InvalidArgument, Path, ":", LineNo, ": '", Op,
               "' is not a feature that import refuses; remove it from the "
               "skip list");
        L[Op] = Op + ": " + Reason;
        continue;
      }
      size_t Dot = Op.rfind('.');
      std::string Domain = Dot == std::string::npos ? "" : Op.substr(0, Dot);
      std::string Name = Dot == std::string::npos ? Op : Op.substr(Dot + 1);
      if (frontend::onnxOperatorSupported(Domain, Name))
        fail(ErrorKind::InvalidArgument, Path, ":", LineNo, ": '", Op,
             "' is an operator nngraph supports; remove it from the skip "
             "list");
      L[Op] = Op + ": " + Reason;
    }
  }
  return L;
}

bool isTestDir(const fs::path &P) {
  std::error_code Ec;
  return fs::is_regular_file(P / "model.onnx", Ec);
}

/// The test folders under each of Dirs (or Dirs itself when it is one),
/// sorted by name within a folder, filtered by Filter.
std::vector<TestCase> discover(const std::vector<std::string> &Dirs,
                               const std::string &Filter) {
  std::optional<std::regex> Re;
  if (!Filter.empty())
    Re.emplace(Filter, std::regex::ECMAScript);
  std::vector<TestCase> Tests;
  for (const std::string &D : Dirs) {
    fs::path P(D);
    std::error_code Ec;
    if (!fs::is_directory(P, Ec))
      fail(ErrorKind::IO, "'", D, "' is not a directory");
    std::vector<fs::path> Found;
    std::string Folder;
    if (isTestDir(P)) {
      Found.push_back(P);
      Folder = fs::absolute(P).lexically_normal().parent_path().filename();
    } else {
      Folder = fs::absolute(P).lexically_normal().filename();
      if (Folder.empty())
        Folder = fs::absolute(P).lexically_normal().parent_path().filename();
      for (const auto &E : fs::directory_iterator(P, Ec))
        if (isTestDir(E.path()))
          Found.push_back(E.path());
      std::sort(Found.begin(), Found.end());
    }
    for (const fs::path &T : Found) {
      std::string Name = Folder + "/" + T.filename().string();
      if (Re && !std::regex_search(Name, *Re))
        continue;
      Tests.push_back({Folder, Name, T.string()});
    }
  }
  return Tests;
}

/// Files Prefix<N>.pb in Dir, by N.
std::vector<fs::path> numberedFiles(const fs::path &Dir,
                                    const std::string &Prefix) {
  std::vector<std::pair<long, fs::path>> Found;
  std::error_code Ec;
  for (const auto &E : fs::directory_iterator(Dir, Ec)) {
    std::string F = E.path().filename();
    if (F.rfind(Prefix, 0) != 0 || E.path().extension() != ".pb")
      continue;
    std::string Num = F.substr(Prefix.size(), F.size() - Prefix.size() - 3);
    char *End = nullptr;
    long N = std::strtol(Num.c_str(), &End, 10);
    if (!Num.empty() && End && *End == '\0')
      Found.emplace_back(N, E.path());
  }
  std::sort(Found.begin(), Found.end());
  std::vector<fs::path> Out;
  for (auto &[N, P] : Found)
    Out.push_back(P);
  return Out;
}

std::vector<fs::path> dataSets(const fs::path &Dir) {
  std::vector<std::pair<long, fs::path>> Found;
  std::error_code Ec;
  for (const auto &E : fs::directory_iterator(Dir, Ec)) {
    std::string F = E.path().filename();
    if (E.is_directory() && F.rfind("test_data_set_", 0) == 0)
      Found.emplace_back(std::strtol(F.c_str() + 14, nullptr, 10), E.path());
  }
  std::sort(Found.begin(), Found.end());
  std::vector<fs::path> Out;
  for (auto &[N, P] : Found)
    Out.push_back(P);
  return Out;
}

/// ONNX's test data stores bfloat16 tensors as UINT16 bit patterns (numpy
/// has no bfloat16): read them as the bf16 they stand for when the model
/// says bf16.
rt::Tensor asDType(const rt::Tensor &T, DType Want) {
  if (T.dtype() == DType::U16 && Want == DType::BF16)
    return rt::Tensor(T.storage(), T.shape(), T.strides(), T.offset(),
                           DType::BF16);
  return T;
}

/// The index of G's input or output named Name, or -1.
int64_t indexOf(const std::vector<ir::Value *> &Vs, const std::string &Name) {
  for (size_t I = 0; I < Vs.size(); ++I)
    if (Vs[I]->name() == Name)
      return static_cast<int64_t>(I);
  return -1;
}

/// True when every ONNX input and output of Sig is a tensor.
bool allTensors(const frontend::OnnxGraphSignature &Sig) {
  for (const auto *L : {&Sig.Inputs, &Sig.Outputs})
    for (const frontend::OnnxIoBinding &B : *L)
      if (B.Kind != frontend::OnnxValueKind::Tensor)
        return false;
  return true;
}

/// The inputs of one data set, in the order of G's inputs; "" in Why when
/// every graph input got a value. A sequence or optional (Sig says which)
/// is read from its SequenceProto / OptionalProto file and packed into the
/// graph inputs that are its parts.
std::vector<rt::Tensor> readInputs(const ir::Graph &G,
                                   const frontend::OnnxGraphSignature &Sig,
                                   const fs::path &Set, std::string &Why) {
  std::vector<fs::path> InFiles = numberedFiles(Set, "input_");
  const auto &GIns = G.inputs();
  std::vector<rt::Tensor> Ins(GIns.size());
  if (allTensors(Sig)) {
    std::vector<rt::Tensor> Given;
    std::vector<std::string> Names;
    for (const fs::path &P : InFiles) {
      Names.emplace_back();
      Given.push_back(frontend::readOnnxTensorFile(P, &Names.back()));
    }
    // By name when every file names a graph input, else by position.
    bool ByName = !Given.empty();
    for (const std::string &N : Names)
      ByName &= !N.empty() && G.lookup(N) && G.lookup(N)->isInput();
    if (ByName) {
      for (size_t I = 0; I < Given.size(); ++I)
        for (size_t J = 0; J < GIns.size(); ++J)
          if (GIns[J]->name() == Names[I])
            Ins[J] = Given[I];
    } else {
      if (Given.size() != GIns.size()) {
        Why = Set.filename().string() + " has " +
              std::to_string(Given.size()) + " inputs but the model takes " +
              std::to_string(GIns.size());
        return {};
      }
      Ins = Given;
    }
  } else {
    // Sequences and optionals: the files follow the ONNX inputs' order.
    if (InFiles.size() != Sig.Inputs.size()) {
      Why = Set.filename().string() + " has " +
            std::to_string(InFiles.size()) + " inputs but the model takes " +
            std::to_string(Sig.Inputs.size());
      return {};
    }
    for (size_t I = 0; I < InFiles.size(); ++I) {
      const frontend::OnnxIoBinding &B = Sig.Inputs[I];
      int64_t First = indexOf(GIns, B.Parts[0]);
      if (First < 0) // An input that is an initializer: nothing to feed.
        continue;
      const ir::TensorType &T = GIns[First]->type();
      frontend::OnnxValue V = frontend::readOnnxValueFile(InFiles[I], B.Kind);
      std::vector<rt::Tensor> Parts = frontend::packOnnxValue(
          V, T.dtype(), T.hasRank() ? T.rank() : -1);
      for (size_t K = 0; K < Parts.size(); ++K)
        if (int64_t J = indexOf(GIns, B.Parts[K]); J >= 0)
          Ins[J] = Parts[K];
    }
  }
  for (size_t J = 0; J < GIns.size(); ++J)
    if (Ins[J].defined())
      Ins[J] = asDType(Ins[J], GIns[J]->type().dtype());
  for (size_t J = 0; J < GIns.size(); ++J)
    if (!Ins[J].defined()) {
      Why = Set.filename().string() + " gives no value for input '" +
            GIns[J]->name() + "'";
      return {};
    }
  return Ins;
}

/// Compares a sequence or optional output (B says which, and which graph
/// outputs are its parts) with the expected value in File; "" when equal.
std::string compareValue(const ir::Graph &G, const frontend::OnnxIoBinding &B,
                         const std::vector<rt::Tensor> &Outs,
                         const fs::path &File, const Options &O) {
  std::vector<rt::Tensor> Parts;
  for (const std::string &P : B.Parts) {
    int64_t J = indexOf(G.outputs(), P);
    if (J < 0)
      return "output '" + B.Name + "': its part '" + P +
             "' is not a graph output";
    Parts.push_back(Outs[J]);
  }
  std::string What = "output '" + B.Name + "'";
  frontend::OnnxValue Got = frontend::unpackOnnxValue(B.Kind, Parts, What);
  frontend::OnnxValue Want = frontend::readOnnxValueFile(File, B.Kind);
  if (Got.HasElement != Want.HasElement)
    return What + " is " + (Got.HasElement ? "an optional with a value" :
                                             "an empty optional") +
           ", expected " + (Want.HasElement ? "one with a value" :
                                              "an empty one");
  if (Got.Elements.size() != Want.Elements.size())
    return What + " has " + std::to_string(Got.Elements.size()) +
           " elements, expected " + std::to_string(Want.Elements.size());
  bool Seq = B.Kind == frontend::OnnxValueKind::Sequence ||
             B.Kind == frontend::OnnxValueKind::OptionalSequence;
  for (size_t E = 0; E < Got.Elements.size(); ++E) {
    std::string Why = compareTensors(
        Seq ? B.Name + "[" + std::to_string(E) + "]" : B.Name, Got.Elements[E],
        asDType(Want.Elements[E], Got.Elements[E].dtype()), O.Rtol, O.Atol);
    if (!Why.empty())
      return Why;
  }
  return "";
}

/// True when Shape S contradicts the declared type T (rank or a static dim).
bool contradicts(const ir::TensorType &T, const Shape &S) {
  if (!T.hasRank())
    return false;
  if (T.rank() != static_cast<int64_t>(S.rank()))
    return true;
  for (int64_t D = 0; D < T.rank(); ++D)
    if (T.dim(D).isStatic() && T.dim(D).value() != S[D])
      return true;
  return false;
}

/// A few of ONNX 1.12's test models declare an input shape their own data
/// contradicts (CastLike's 'like' is declared [3,4] and given as [1]; only
/// its dtype matters). ONNX's test runner never checks declared shapes, so
/// the declaration is relaxed to the data's rank with unknown dims, the
/// graph typed again, and the relaxation named in the test's line. Returns
/// that note, "" when nothing was relaxed.
std::string relaxContradictedInputs(ir::Graph &G,
                                    const frontend::OnnxGraphSignature &Sig,
                                    const std::vector<fs::path> &Sets) {
  std::string Note;
  for (const fs::path &Set : Sets) {
    std::string Why;
    std::vector<rt::Tensor> Ins = readInputs(G, Sig, Set, Why);
    for (size_t J = 0; J < Ins.size(); ++J) {
      ir::Value *V = G.inputs()[J];
      if (!contradicts(V->type(), Ins[J].shape()))
        continue;
      Note += std::string(Note.empty() ? "" : "; ") + "input '" + V->name() +
              "' is declared " + V->type().toString() + " but " +
              Set.filename().string() + " gives shape " +
              Ins[J].shape().toString();
      V->setType(ir::TensorType(
          V->type().dtype(),
          std::vector<ir::Dim>(Ins[J].shape().rank(), ir::Dim::unknown())));
    }
  }
  if (Note.empty())
    return "";
  ir::inferTypes(G);
  return "test-data quirk: " + Note +
         " (the declaration was relaxed to unknown dims)";
}

/// True when V depends on random draws: a node with the Random trait, or
/// one random in training (Dropout) whose training_mode input is present
/// and not a constant false, is among its producers (regions not entered:
/// a node with regions counts as its captures, which are its inputs).
bool dependsOnRandom(const ir::Value *V) {
  std::vector<const ir::Value *> Work{V};
  std::unordered_set<const ir::Value *> Seen;
  while (!Work.empty()) {
    const ir::Value *X = Work.back();
    Work.pop_back();
    if (!X || !Seen.insert(X).second || !X->producer())
      continue;
    const ir::Node &N = *X->producer();
    if (ir::hasTrait(N.op(), ir::OpTrait::Random))
      return true;
    if (ir::hasTrait(N.op(), ir::OpTrait::RandomInTraining) &&
        N.numInputs() > 2 && N.input(2)) {
      const rt::Tensor *T = ir::constantValue(N.input(2));
      if (!T || T->getFlatInt(0) != 0)
        return true;
    }
    for (size_t I = 0; I < N.numInputs(); ++I)
      Work.push_back(N.input(I));
  }
  return false;
}

/// The loose check of an output that depends on random draws, whose
/// values no two generators share (ONNX's were numpy's): the same dtype
/// and shape; the values within the range the expected ones span, widened
/// by half that span (exactly within it for integers and bools); the mean
/// within 4 standard errors of the expected mean, and the standard
/// deviations within a factor of 2 (or both about 0). "" when it passes.
std::string compareRandom(const std::string &Name, const rt::Tensor &Got,
                          const rt::Tensor &Want) {
  std::string Out = "output '" + Name + "' (random: checked loosely)";
  if (Got.dtype() != Want.dtype())
    return Out + " has dtype " + std::string(dtypeName(Got.dtype())) +
           ", expected " + std::string(dtypeName(Want.dtype()));
  if (Got.shape() != Want.shape())
    return Out + " has shape " + Got.shape().toString() + ", expected " +
           Want.shape().toString();
  std::vector<double> G = Got.toDoubleVector(), W = Want.toDoubleVector();
  if (W.empty())
    return "";
  auto Moments = [](const std::vector<double> &V) {
    double M = 0, S = 0;
    for (double X : V)
      M += X;
    M /= static_cast<double>(V.size());
    for (double X : V)
      S += (X - M) * (X - M);
    return std::pair{M, std::sqrt(S / static_cast<double>(V.size()))};
  };
  double Lo = *std::min_element(W.begin(), W.end());
  double Hi = *std::max_element(W.begin(), W.end());
  double Widen = isFloatingPoint(Want.dtype()) ? (Hi - Lo) / 2 : 0;
  char Buf[256];
  for (size_t I = 0; I < G.size(); ++I)
    if (!(G[I] >= Lo - Widen && G[I] <= Hi + Widen)) {
      std::snprintf(Buf, sizeof(Buf),
                    " value %.9g at index %zu is outside [%.9g, %.9g]", G[I],
                    I, Lo - Widen, Hi + Widen);
      return Out + Buf;
    }
  auto [MG, SG] = Moments(G);
  auto [MW, SW] = Moments(W);
  double N = static_cast<double>(W.size());
  double Tol = 4 * std::sqrt((SG * SG + SW * SW) / N) + 1e-6 * (1 + std::fabs(MW));
  if (std::fabs(MG - MW) > Tol) {
    std::snprintf(Buf, sizeof(Buf), " has mean %.6g, expected %.6g +- %.3g",
                  MG, MW, Tol);
    return Out + Buf;
  }
  double Eps = 1e-6 * (1 + std::fabs(MW));
  if ((SG > Eps || SW > Eps) && (SG > 2 * SW + Eps || SW > 2 * SG + Eps)) {
    std::snprintf(Buf, sizeof(Buf),
                  " has standard deviation %.6g, expected %.6g (within a "
                  "factor of 2)",
                  SG, SW);
    return Out + Buf;
  }
  return "";
}

/// Runs one data set; "" when every output matches. An output that
/// depends on random draws and differs is checked loosely (compareRandom)
/// and named in Loose.
std::string runDataSet(const ir::Graph &G,
                       const frontend::OnnxGraphSignature &Sig,
                       backends::Executable &Exe, const fs::path &Set,
                       const Options &O, std::set<std::string> &Loose) {
  std::vector<fs::path> OutFiles = numberedFiles(Set, "output_");
  std::string Why;
  std::vector<rt::Tensor> Ins = readInputs(G, Sig, Set, Why);
  if (!Why.empty())
    return Why;
  std::vector<rt::Tensor> Outs = Exe.run(Ins);
  if (!allTensors(Sig)) {
    if (Sig.Outputs.size() != OutFiles.size())
      return "the model has " + std::to_string(Sig.Outputs.size()) +
             " outputs; " + Set.filename().string() + " expects " +
             std::to_string(OutFiles.size());
    for (size_t I = 0; I < OutFiles.size(); ++I) {
      Why = compareValue(G, Sig.Outputs[I], Outs, OutFiles[I], O);
      if (!Why.empty())
        return Why;
    }
    return "";
  }
  if (Outs.size() != OutFiles.size())
    return "the model produced " + std::to_string(Outs.size()) + " outputs; " +
           Set.filename().string() + " expects " +
           std::to_string(OutFiles.size());
  for (size_t I = 0; I < Outs.size(); ++I) {
    rt::Tensor Expected =
        asDType(frontend::readOnnxTensorFile(OutFiles[I]), Outs[I].dtype());
    const ir::Value *V = G.outputs()[I];
    std::string Why =
        compareTensors(V->name(), Outs[I], Expected, O.Rtol, O.Atol);
    if (!Why.empty() && dependsOnRandom(V)) {
      Why = compareRandom(V->name(), Outs[I], Expected);
      Loose.insert(V->name());
    }
    if (!Why.empty())
      return Why;
  }
  return "";
}

/// Runs one test in this process.
Outcome runTest(const TestCase &T, const SkipList &Skips, const Options &O) {
  auto Start = std::chrono::steady_clock::now();
  Outcome R;
  try {
    fs::path Model = fs::path(T.Dir) / "model.onnx";
    for (const std::string &Op : frontend::onnxModelOperators(Model))
      if (auto It = Skips.find(Op); It != Skips.end()) {
        R.S = Status::Skip;
        R.Message = It->second;
        return R;
      }
    for (const std::string &F : frontend::onnxModelFeatures(Model))
      if (auto It = Skips.find("feature:" + F); It != Skips.end()) {
        R.S = Status::Skip;
        R.Message = It->second;
        return R;
      }
    std::unique_ptr<ir::Graph> G;
    frontend::OnnxGraphSignature Sig;
    frontend::OnnxImportOptions IO;
    IO.Signature = &Sig;
    if (O.Pipeline.empty()) {
      G = frontend::importOnnx(Model, IO);
    } else {
      try {
        G = frontend::importOnnx(Model, IO);
      } catch (const std::exception &E) {
        R.S = Status::Skip;
        R.Message = "import failed: " + oneLine(E.what());
        return R;
      }
      R.NodesBefore = static_cast<long>(G->numNodes());
      passes::PassManager PM;
      PM.addPipeline(passes::resolvePipeline(O.Pipeline, O.Backend));
      PM.run(*G);
      R.NodesAfter = static_cast<long>(G->numNodes());
    }
    std::vector<fs::path> Sets = dataSets(T.Dir);
    if (Sets.empty())
      fail(ErrorKind::IO, "no test_data_set_* folder in '", T.Dir, "'");
    std::string Note = relaxContradictedInputs(*G, Sig, Sets);
    std::unique_ptr<backends::Executable> Exe =
        backends::getBackend(O.Backend).compile(*G);
    std::set<std::string> Loose;
    for (const fs::path &Set : Sets) {
      std::string Why = runDataSet(*G, Sig, *Exe, Set, O, Loose);
      if (!Why.empty()) {
        R.Message =
            (Sets.size() > 1 ? Set.filename().string() + ": " : "") + Why;
        break;
      }
    }
    R.S = R.Message.empty() ? Status::Pass : Status::Fail;
    if (R.S == Status::Pass) {
      std::string Random;
      for (const std::string &V : Loose)
        Random += (Random.empty() ? "'" : ", '") + V + "'";
      if (!Random.empty())
        Note += (Note.empty() ? "" : "; ") +
                std::string("random outputs checked loosely (dtype, shape, "
                            "range, mean, standard deviation): ") +
                Random;
      R.Message = Note;
    }
  } catch (const std::exception &E) {
    R.S = Status::Fail;
    R.Message = oneLine(E.what());
  }
  R.Seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  return R;
}

} // namespace nng::tools::conformance
