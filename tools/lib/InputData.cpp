//===- InputData.cpp - Model inputs and outputs as .npz files ------------===//
//
// Reads an .npz of model inputs and checks it against a graph's inputs
// (names, dtypes, ranks, static and symbolic dims), splits it into batches
// along dim 0, and writes a run's outputs by graph output name. Every
// message names the file and the input, and says what to change.
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/InputData.h"
#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/runtime/DTypeNames.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <map>

namespace nng::tools {
namespace {

/// "'a', 'b', 'c'".
std::string quotedList(const std::vector<std::string> &Names) {
  std::string R;
  for (const std::string &N : Names)
    R += (R.empty() ? "'" : ", '") + N + "'";
  return R;
}


/// Fails unless every graph input has an array and every array feeds a
/// graph input.
void checkNames(const weights::TensorMap &Arrays, const ir::Graph &G,
                const std::string &Where) {
  std::vector<std::string> Missing, Inputs;
  for (const ir::Value *V : G.inputs()) {
    Inputs.push_back(V->name());
    if (!Arrays.contains(V->name()))
      Missing.push_back(V->name());
  }
  // A file (.npz) or arrays given in memory (a Python dict).
  bool File = Where.size() > 5 && Where.ends_with(".npz'");
  if (!Missing.empty())
    fail(ErrorKind::InvalidArgument, Where, ": no array for graph input",
         Missing.size() == 1 ? " " : "s ", quotedList(Missing),
         File ? " (the file " : " (it ",
         Arrays.empty() ? std::string("holds no arrays")
                        : "holds " + quotedList(Arrays.keys()),
         File ? "); save one array per graph input under the input's name, "
                "e.g. numpy.savez(FILE, **{'"
              : "); give one array per graph input under the input's name, "
                "e.g. {'",
         Missing.front(), File ? "': array})" : "': array}");

  std::vector<std::string> Unknown, Initializers;
  for (const auto &[Key, T] : Arrays) {
    if (std::find(Inputs.begin(), Inputs.end(), Key) != Inputs.end())
      continue;
    Unknown.push_back(Key);
    if (const ir::Value *V = G.lookup(Key); V && V->isInitializer())
      Initializers.push_back(Key);
  }
  if (Unknown.empty())
    return;
  std::string Note;
  if (!Initializers.empty())
    Note = "; " + quotedList(Initializers) +
           (Initializers.size() == 1 ? " is an initializer"
                                     : " are initializers") +
           ", which the model holds itself";
  fail(ErrorKind::InvalidArgument, Where, ": ",
       Unknown.size() == 1 ? "array " : "arrays ", quotedList(Unknown),
       Unknown.size() == 1 ? " names" : " name",
       " no graph input (the graph's inputs: ",
       Inputs.empty() ? std::string("none") : quotedList(Inputs), Note,
       "); remove ", Unknown.size() == 1 ? "it" : "them",
       " or name each array after the input it feeds");
}

} // namespace

InputData matchInputData(const weights::TensorMap &Arrays, const ir::Graph &G,
                         const std::string &Source) {
  const std::string Where = "'" + Source + "'";
  checkNames(Arrays, G, Where);

  InputData D;
  D.Source = Source;
  for (const ir::Value *V : G.inputs()) {
    const std::string &Name = V->name();
    const rt::Tensor &A = Arrays.at(Name);
    const ir::TensorType &T = V->type();
    const std::string What =
        Where + ": input '" + Name + "' (" + T.toString() + ")";
    if (A.dtype() != T.dtype()) {
      const char *Np = numpyName(T.dtype());
      fail(ErrorKind::ShapeMismatch, What, ": the array is ",
           dtypeName(A.dtype()), " but the input is ", dtypeName(T.dtype()),
           Np ? std::string("; convert it, e.g. array.astype(numpy.") + Np + ")"
              : std::string("; numpy has no such dtype, so this input cannot "
                            "come from an .npz file"));
    }
    if (T.hasRank()) {
      if (static_cast<int64_t>(A.rank()) != T.rank())
        fail(ErrorKind::ShapeMismatch, What, ": the array has rank ", A.rank(),
             " (shape ", A.shape().toString(), ") but the input has rank ",
             T.rank(), "; reshape the array to the input's shape");
      for (int64_t Axis = 0; Axis < T.rank(); ++Axis) {
        const ir::Dim &Dim = T.dim(Axis);
        int64_t Got = A.shape()[static_cast<size_t>(Axis)];
        if (Dim.isStatic() && Dim.value() != Got)
          fail(ErrorKind::ShapeMismatch, What, ", axis ", Axis, ": expected ",
               Dim.value(), ", got ", Got, " (array shape ",
               A.shape().toString(), ")");
        if (!Dim.isSymbolic())
          continue;
        const std::string &Sym = Dim.symbol();
        auto It = D.Dims.find(Sym);
        if (It == D.Dims.end()) {
          D.Dims.emplace(Sym, Got);
          D.DimOrigins.emplace(Sym, "input '" + Name + "', axis " +
                                        std::to_string(Axis));
        } else if (It->second != Got) {
          fail(ErrorKind::ShapeMismatch, What, ", axis ", Axis, " (", Sym,
               "): expected ", It->second, " (the size ", Sym, " took in ",
               D.DimOrigins.at(Sym), "), got ", Got, " (array shape ",
               A.shape().toString(), "); every use of ", Sym,
               " needs the same size");
        }
      }
    }
    D.Names.push_back(Name);
    D.Tensors.push_back(A.contiguous()); // .npy in Fortran order is strided.
  }
  return D;
}

InputData loadInputData(const std::string &Path, const ir::Graph &G) {
  return matchInputData(weights::readNpz(Path), G, Path);
}

int64_t sampleCount(const InputData &Data) {
  const std::string Where = "'" + Data.Source + "'";
  NNG_CHECK(!Data.Tensors.empty(), Where,
            ": the graph has no inputs, so there are no samples to split");
  int64_t N = -1;
  for (size_t I = 0; I < Data.Tensors.size(); ++I) {
    const rt::Tensor &T = Data.Tensors[I];
    NNG_CHECK_KIND(T.rank() > 0, ShapeMismatch, Where, ": input '",
                   Data.Names[I],
                   "' is a scalar (rank 0); samples go along "
                   "dim 0, so every input needs a dim 0");
    if (I == 0) {
      N = T.shape()[0];
      continue;
    }
    NNG_CHECK_KIND(T.shape()[0] == N, ShapeMismatch, Where, ": inputs '",
                   Data.Names[0], "' and '", Data.Names[I],
                   "' hold different numbers of samples along dim 0 (", N,
                   " and ", T.shape()[0],
                   "); give every input the same dim-0 size");
  }
  return N;
}

std::vector<std::vector<rt::Tensor>> splitBatches(const InputData &Data,
                                                  int64_t BatchSize) {
  NNG_CHECK(BatchSize >= 1, "'", Data.Source, "': batch size ", BatchSize,
            " is not a positive number of samples; use 1 or more");
  int64_t N = sampleCount(Data);
  NNG_CHECK(N > 0, "'", Data.Source, "': no samples (dim 0 of input '",
            Data.Names.front(), "' is 0); give at least one sample");
  std::vector<std::vector<rt::Tensor>> Batches;
  for (int64_t Start = 0; Start < N; Start += BatchSize) {
    int64_t End = std::min(N, Start + BatchSize);
    std::vector<rt::Tensor> Batch;
    Batch.reserve(Data.Tensors.size());
    for (const rt::Tensor &T : Data.Tensors)
      Batch.push_back(T.slice(0, Start, End));
    Batches.push_back(std::move(Batch));
  }
  return Batches;
}

void bindDimsFromData(const InputData &Data, DimBindings &Dims) {
  for (const auto &[Sym, Size] : Data.Dims) {
    auto It = Dims.find(Sym);
    if (It != Dims.end() && It->second != Size)
      fail(ErrorKind::InvalidArgument, "--dim ", Sym, "=", It->second,
           " contradicts --inputs '", Data.Source, "', whose ",
           Data.DimOrigins.at(Sym), " has size ", Size,
           "; drop the --dim (the arrays bind ", Sym, ") or change the data");
    Dims[Sym] = Size;
  }
}

std::vector<rt::Tensor> inputsInGraphOrder(const ir::Graph &G,
                                           const InputData &Data) {
  std::vector<rt::Tensor> Inputs;
  for (const ir::Value *V : G.inputs()) {
    auto It = std::find(Data.Names.begin(), Data.Names.end(), V->name());
    if (It == Data.Names.end())
      fail(ErrorKind::Internal, "the optimized graph has an input '", V->name(),
           "' that the model had not; run with -O0");
    Inputs.push_back(
        Data.Tensors[static_cast<size_t>(It - Data.Names.begin())]);
  }
  return Inputs;
}

std::vector<std::string> npzEntryNames(const std::vector<std::string> &Names) {
  std::vector<std::string> Keys;
  std::map<std::string, std::string> Owner; // Entry -> the name it holds.
  for (const std::string &Name : Names) {
    std::string Key = Name;
    if (!weights::isNpzKey(Name)) {
      Key.clear();
      for (size_t I = 0; I < Name.size(); ++I) {
        char C = Name[I];
        bool DotDot = C == '.' && Name.compare(I, 2, "..") == 0 &&
                      (I == 0 || Name[I - 1] == '/') &&
                      (I + 2 == Name.size() || Name[I + 2] == '/');
        if (DotDot) {
          Key += "%2E%2E";
          ++I;
        } else if (C == '%') {
          Key += "%25";
        } else if (C == '/' && I == 0) {
          Key += "%2F";
        } else if (C == '\\') {
          Key += "%5C";
        } else if (C == '\0') {
          Key += "%00";
        } else {
          Key += C;
        }
      }
      if (Key.empty())
        Key = "%"; // An empty name.
    }
    auto [It, New] = Owner.emplace(Key, Name);
    NNG_CHECK(New || It->second == Name, "outputs '", It->second, "' and '",
              Name, "' would both be saved as .npz entry '", Key,
              "'; rename one");
    Keys.push_back(std::move(Key));
  }
  return Keys;
}

void saveOutputsNpz(const std::string &Path,
                    const std::vector<std::string> &Names,
                    const std::vector<rt::Tensor> &Tensors) {
  const std::string Suffix = ".npz";
  NNG_CHECK(
      Path.size() > Suffix.size() &&
          Path.compare(Path.size() - Suffix.size(), Suffix.size(), Suffix) == 0,
      "'", Path,
      "': outputs are saved as an .npz archive; name the "
      "file FILE.npz");
  NNG_CHECK_KIND(Names.size() == Tensors.size(), Internal, "writing '", Path,
                 "': ", Names.size(), " output names for ", Tensors.size(),
                 " tensors");
  std::vector<std::string> Keys = npzEntryNames(Names);
  weights::TensorMap M;
  for (size_t I = 0; I < Names.size(); ++I) {
    NNG_CHECK(Tensors[I].defined(), "writing '", Path, "': output '", Names[I],
              "' has no value");
    if (const rt::Tensor *Old = M.find(Keys[I])) {
      NNG_CHECK(Old->equals(Tensors[I]), "writing '", Path,
                "': two different outputs are named '", Names[I],
                "'; an .npz file needs unique names, so rename one");
      continue; // The same graph output listed twice.
    }
    M.insert(Keys[I], Tensors[I]);
  }
  weights::writeNpz(Path, M);
}

} // namespace nng::tools
