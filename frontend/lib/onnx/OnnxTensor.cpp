//===- OnnxTensor.cpp - TensorProto and TypeProto conversions ------------===//
//
// TensorProto -> rt::Tensor from raw_data, from the typed fields (with the
// ONNX spec's packing: int32_data carries i8/u8/i16/u16/bool and the bits of
// f16/bf16, uint64_data carries u32/u64; string_data carries STRING, which
// has no raw_data or external form) or from external data, whose path
// must stay inside the model's folder and whose offset/length must lie
// inside the file; the reverse direction writes raw_data (string_data for
// str tensors, whose elements are interned on import). Also
// TypeProto <-> TensorType, ModelProto parsing and the public TensorProto
// file helpers of OnnxTensor.h.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/onnx/OnnxTensor.h"
#include "OnnxProto.h"
#include "nngraph/runtime/Error.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <charconv>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace nng::frontend {
namespace onnxio {

using ::onnx::TensorProto;

void modelError(ErrorKind K, const ModelSource &Src, const std::string &Msg) {
  fail(K, Src.Kind, " '", Src.Name, "': ", Msg);
}

std::string onnxDataTypeName(int DataType) {
  if (TensorProto::DataType_IsValid(DataType))
    return TensorProto::DataType_Name(
        static_cast<TensorProto::DataType>(DataType));
  return "type " + std::to_string(DataType);
}

DType dtypeForOnnx(int DataType, const ModelSource &Src,
                   std::string_view What) {
  if (auto T = dtypeFromOnnx(DataType))
    return *T;
  modelError(DataType == 0 ? ErrorKind::Parse : ErrorKind::Unsupported, Src,
             std::string(What) + " has data type " +
                 onnxDataTypeName(DataType) +
                 (DataType == 0 ? " (the type is missing)"
                                : ", which nngraph does not support"));
}

namespace {

/// The shape of P, checked (non-negative dims, element count fits).
Shape protoShape(const TensorProto &P, const ModelSource &Src,
                 std::string_view What) {
  Shape S;
  for (int64_t D : P.dims()) {
    if (D < 0)
      modelError(ErrorKind::Parse, Src,
                 std::string(What) + " has a negative dimension " +
                     std::to_string(D));
    S.push_back(D);
  }
  try {
    S.validate();
  } catch (const Error &E) {
    modelError(ErrorKind::Parse, Src, std::string(What) + ": " + E.message());
  }
  return S;
}

bool parseUnsigned(const std::string &S, uint64_t &Out) {
  if (S.empty())
    return false;
  auto [P, Ec] = std::from_chars(S.data(), S.data() + S.size(), Out);
  return Ec == std::errc() && P == S.data() + S.size();
}

/// Reads the external data of P: location confined to Src.BaseDir,
/// offset/length inside the file.
rt::Tensor readExternal(const TensorProto &P, const Shape &S, DType T,
                         const ModelSource &Src, std::string_view What) {
  std::string W(What);
  std::string Location;
  uint64_t Offset = 0, Length = 0;
  bool HasLength = false;
  for (const auto &KV : P.external_data()) {
    if (KV.key() == "location") {
      Location = KV.value();
    } else if (KV.key() == "offset") {
      if (!parseUnsigned(KV.value(), Offset))
        modelError(ErrorKind::Parse, Src,
                   W + ": external data offset '" + KV.value() +
                       "' is not a non-negative integer");
    } else if (KV.key() == "length") {
      HasLength = true;
      if (!parseUnsigned(KV.value(), Length))
        modelError(ErrorKind::Parse, Src,
                   W + ": external data length '" + KV.value() +
                       "' is not a non-negative integer");
    }
  }
  if (Location.empty())
    modelError(ErrorKind::Parse, Src, W + ": external data has no 'location'");
  if (Src.BaseDir.empty())
    modelError(ErrorKind::InvalidArgument, Src,
               W + ": external data '" + Location +
                   "' cannot be resolved: the model was not loaded from a "
                   "file (load it with importOnnx(path) or set BaseDir)");
  fs::path Rel(Location);
  if (Rel.is_absolute() || Location.find('\\') != std::string::npos)
    modelError(ErrorKind::InvalidArgument, Src,
               W + ": external data location '" + Location +
                   "' is absolute; it must be relative to the model's folder");
  for (const fs::path &Part : Rel)
    if (Part == "..")
      modelError(ErrorKind::InvalidArgument, Src,
                 W + ": external data location '" + Location +
                     "' leaves the model's folder ('..' is not allowed)");
  std::error_code Ec;
  fs::path Base = fs::weakly_canonical(fs::path(Src.BaseDir), Ec);
  fs::path Full = fs::weakly_canonical(fs::path(Src.BaseDir) / Rel, Ec);
  auto [BaseEnd, FullIt] =
      std::mismatch(Base.begin(), Base.end(), Full.begin(), Full.end());
  if (Ec || BaseEnd != Base.end())
    modelError(ErrorKind::InvalidArgument, Src,
               W + ": external data location '" + Location +
                   "' resolves outside the model's folder (through a "
                   "symbolic link)");
  if (!fs::is_regular_file(Full, Ec))
    modelError(ErrorKind::IO, Src,
               W + ": external data file '" + Full.string() +
                   "' does not exist or is not a regular file");
  uint64_t FileSize = fs::file_size(Full, Ec);
  if (Ec)
    modelError(ErrorKind::IO, Src,
               W + ": cannot read the size of '" + Full.string() + "'");
  uint64_t Need = static_cast<uint64_t>(S.numel()) * dtypeSize(T);
  if (HasLength && Length != Need)
    modelError(ErrorKind::Parse, Src,
               W + ": external data length " + std::to_string(Length) +
                   " does not match its type " + std::string(dtypeName(T)) +
                   S.toString() + " (" + std::to_string(Need) + " bytes)");
  if (Offset > FileSize || Need > FileSize - Offset)
    modelError(ErrorKind::Parse, Src,
               W + ": external data needs " + std::to_string(Need) +
                   " bytes at offset " + std::to_string(Offset) + " but '" +
                   Location + "' has only " + std::to_string(FileSize) +
                   " bytes");
  if (Need == 0)
    return rt::Tensor::empty(S, T);
  auto Store = Storage::mapFile(Full.string(), Offset, Need);
  if (reinterpret_cast<uintptr_t>(Store->data()) % dtypeSize(T) == 0)
    return rt::Tensor(Store, S, contiguousStrides(S), 0, T);
  // Misaligned for the element type: copy.
  rt::Tensor R = rt::Tensor::empty(S, T);
  std::memcpy(R.rawData(), Store->data(), Need);
  return R;
}

template <typename Field>
void checkCount(const Field &F, int64_t N, const ModelSource &Src,
                std::string_view What, const char *FieldName) {
  if (static_cast<int64_t>(F.size()) != N)
    modelError(ErrorKind::Parse, Src,
               std::string(What) + " has " + std::to_string(F.size()) +
                   " values in " + FieldName + " but its shape needs " +
                   std::to_string(N));
}

template <typename T, typename Field>
void copyField(const Field &F, rt::Tensor &R) {
  T *P = static_cast<T *>(R.rawData());
  for (int I = 0; I < F.size(); ++I)
    P[I] = static_cast<T>(F.Get(I));
}

} // namespace

rt::Tensor tensorFromProto(const TensorProto &P, const ModelSource &Src,
                            std::string_view What) {
  std::string W(What);
  if (P.has_segment())
    modelError(ErrorKind::Unsupported, Src,
               W + " is segmented, which nngraph does not support");
  DType T = dtypeForOnnx(P.data_type(), Src, What);
  Shape S = protoShape(P, Src, What);
  int64_t N = S.numel();
  if (T == DType::String) {
    if (P.data_location() == TensorProto::EXTERNAL || P.has_raw_data())
      modelError(ErrorKind::Parse, Src,
                 W + " is a STRING tensor with " +
                     (P.has_raw_data() ? "raw_data" : "external data") +
                     "; STRING tensors keep their elements in string_data");
    checkCount(P.string_data(), N, Src, What, "string_data");
    return rt::Tensor::fromStrings(
        {P.string_data().begin(), P.string_data().end()}, S);
  }
  if (P.data_location() == TensorProto::EXTERNAL)
    return readExternal(P, S, T, Src, What);
  if (P.has_raw_data()) {
    size_t Need = static_cast<size_t>(N) * dtypeSize(T);
    if (P.raw_data().size() != Need)
      modelError(ErrorKind::Parse, Src,
                 W + " has " + std::to_string(P.raw_data().size()) +
                     " bytes of raw_data but its type " +
                     std::string(dtypeName(T)) + S.toString() + " needs " +
                     std::to_string(Need));
    rt::Tensor R = rt::Tensor::empty(S, T);
    if (Need)
      std::memcpy(R.rawData(), P.raw_data().data(), Need);
    return R;
  }
  switch (P.data_type()) {
  case TensorProto::FLOAT:
    checkCount(P.float_data(), N, Src, What, "float_data");
    break;
  case TensorProto::DOUBLE:
    checkCount(P.double_data(), N, Src, What, "double_data");
    break;
  case TensorProto::INT64:
    checkCount(P.int64_data(), N, Src, What, "int64_data");
    break;
  case TensorProto::UINT32:
  case TensorProto::UINT64:
    checkCount(P.uint64_data(), N, Src, What, "uint64_data");
    break;
  default:
    checkCount(P.int32_data(), N, Src, What, "int32_data");
    break;
  }
  rt::Tensor R = rt::Tensor::empty(S, T);
  switch (T) {
  case DType::F32:
    copyField<float>(P.float_data(), R);
    break;
  case DType::F64:
    copyField<double>(P.double_data(), R);
    break;
  case DType::I64:
    copyField<int64_t>(P.int64_data(), R);
    break;
  case DType::U32:
    copyField<uint32_t>(P.uint64_data(), R);
    break;
  case DType::U64:
    copyField<uint64_t>(P.uint64_data(), R);
    break;
  case DType::I32:
    copyField<int32_t>(P.int32_data(), R);
    break;
  case DType::I16:
    copyField<int16_t>(P.int32_data(), R);
    break;
  case DType::U16:
  case DType::F16: // The bits, in the low 16 bits of each int32.
  case DType::BF16:
    copyField<uint16_t>(P.int32_data(), R);
    break;
  case DType::I8:
    copyField<int8_t>(P.int32_data(), R);
    break;
  case DType::U8:
    copyField<uint8_t>(P.int32_data(), R);
    break;
  case DType::Bool: {
    bool *B = static_cast<bool *>(R.rawData());
    for (int I = 0; I < P.int32_data_size(); ++I)
      B[I] = P.int32_data(I) != 0;
    break;
  }
  case DType::String: // Read above.
    break;
  }
  return R;
}

void tensorToProto(const rt::Tensor &T, TensorProto &P) {
  NNG_CHECK(T.defined(), "tensorToProto: undefined tensor");
  P.set_data_type(dtypeToOnnx(T.dtype()));
  P.clear_dims();
  for (int64_t D : T.shape())
    P.add_dims(D);
  rt::Tensor C = T.contiguous();
  if (C.dtype() == DType::String) {
    P.clear_string_data();
    for (const std::string &E : C.toStrings())
      P.add_string_data(E);
    return;
  }
  if (C.dtype() == DType::Bool) {
    // Normalize to 0/1 bytes.
    std::string Bytes(static_cast<size_t>(C.numel()), '\0');
    const bool *B = static_cast<const bool *>(C.rawData());
    for (size_t I = 0; I < Bytes.size(); ++I)
      Bytes[I] = B[I] ? 1 : 0;
    P.set_raw_data(std::move(Bytes));
    return;
  }
  P.set_raw_data(static_cast<const char *>(C.rawData()), C.nbytes());
}

ir::TensorType typeFromProto(const ::onnx::TypeProto &T, const ModelSource &Src,
                             std::string_view What) {
  if (!T.has_tensor_type()) {
    const char *Kind = T.has_sequence_type()        ? "a sequence"
                       : T.has_map_type()           ? "a map"
                       : T.has_optional_type()      ? "an optional"
                       : T.has_sparse_tensor_type() ? "a sparse tensor"
                                                    : "no type";
    modelError(T.value_case() == ::onnx::TypeProto::VALUE_NOT_SET
                   ? ErrorKind::Parse
                   : ErrorKind::Unsupported,
               Src,
               std::string(What) + " has " + Kind +
                   " type; nngraph supports dense tensors only");
  }
  const auto &TT = T.tensor_type();
  DType D = dtypeForOnnx(TT.elem_type(), Src, What);
  if (!TT.has_shape())
    return ir::TensorType(D);
  std::vector<ir::Dim> Dims;
  for (const auto &Dim : TT.shape().dim()) {
    if (Dim.has_dim_value()) {
      if (Dim.dim_value() < 0)
        modelError(ErrorKind::Parse, Src,
                   std::string(What) + " has a negative dimension " +
                       std::to_string(Dim.dim_value()));
      Dims.push_back(ir::Dim(Dim.dim_value()));
    } else if (Dim.has_dim_param() && !Dim.dim_param().empty()) {
      Dims.push_back(ir::Dim::symbol(Dim.dim_param()));
    } else {
      Dims.push_back(ir::Dim::unknown());
    }
  }
  return ir::TensorType(D, std::move(Dims));
}

void typeToProto(const ir::TensorType &T, ::onnx::TypeProto &P) {
  auto *TT = P.mutable_tensor_type();
  TT->set_elem_type(dtypeToOnnx(T.dtype()));
  if (!T.hasRank())
    return;
  auto *S = TT->mutable_shape();
  for (const ir::Dim &D : T.dims()) {
    auto *PD = S->add_dim();
    if (D.isStatic())
      PD->set_dim_value(D.value());
    else if (D.isSymbolic())
      PD->set_dim_param(D.symbol());
  }
}

namespace {
/// Why a ModelProto did not parse. Protobuf reads at most 100 levels of
/// nested messages, and each If/Loop body takes three (node, attribute,
/// graph): a model nesting bodies deeper fails like a corrupt one.
constexpr const char *NotAModel =
    "not a valid ONNX ModelProto (the protobuf data is truncated or corrupt, "
    "or nests graphs too deep: protobuf reads at most 100 levels of messages, "
    "about 30 levels of If/Loop/Scan bodies)";

template <typename Msg> bool parseBytes(std::string_view Bytes, Msg &M) {
  if (Bytes.size() > static_cast<size_t>(INT_MAX))
    return false;
  google::protobuf::io::CodedInputStream In(
      reinterpret_cast<const uint8_t *>(Bytes.data()),
      static_cast<int>(Bytes.size()));
  In.SetTotalBytesLimit(INT_MAX);
  return M.ParseFromCodedStream(&In) && In.ConsumedEntireMessage();
}
} // namespace

void parseModel(std::string_view Bytes, ::onnx::ModelProto &M,
                const ModelSource &Src) {
  if (Bytes.empty())
    modelError(ErrorKind::Parse, Src, "the file is empty");
  if (Bytes.size() > static_cast<size_t>(INT_MAX))
    modelError(ErrorKind::Parse, Src,
               "the model is " + std::to_string(Bytes.size()) +
                   " bytes; a protobuf message cannot exceed 2 GB (store the "
                   "weights as external data)");
  if (!parseBytes(Bytes, M))
    modelError(ErrorKind::Parse, Src, NotAModel);
}

void parseModelFile(const std::string &Path, ::onnx::ModelProto &M,
                    const ModelSource &Src) {
  std::error_code Ec;
  if (std::filesystem::is_directory(Path, Ec))
    fail(ErrorKind::IO, "cannot read ONNX model '", Path,
         "': it is a directory");
  int Fd = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC);
  if (Fd < 0)
    fail(ErrorKind::IO, "cannot open ONNX model '", Path,
         "': ", std::strerror(errno));
  struct Closer {
    int Fd;
    ~Closer() { ::close(Fd); }
  } Close{Fd};
  struct stat St {};
  if (::fstat(Fd, &St) != 0)
    fail(ErrorKind::IO, "cannot read ONNX model '", Path,
         "': ", std::strerror(errno));
  if (St.st_size == 0)
    modelError(ErrorKind::Parse, Src, "the file is empty");
  if (St.st_size > static_cast<off_t>(INT_MAX))
    modelError(ErrorKind::Parse, Src,
               "the model is " + std::to_string(St.st_size) +
                   " bytes; a protobuf message cannot exceed 2 GB (store the "
                   "weights as external data)");
  google::protobuf::io::FileInputStream File(Fd);
  bool Ok;
  {
    google::protobuf::io::CodedInputStream In(&File);
    In.SetTotalBytesLimit(INT_MAX);
    Ok = M.ParseFromCodedStream(&In) && In.ConsumedEntireMessage();
  }
  if (File.GetErrno() != 0)
    fail(ErrorKind::IO, "cannot read ONNX model '", Path,
         "': ", std::strerror(File.GetErrno()));
  if (!Ok)
    modelError(ErrorKind::Parse, Src, NotAModel);
}

std::unordered_set<std::string> namesIn(const ::onnx::GraphProto &G) {
  std::unordered_set<std::string> Names;
  for (const auto &T : G.initializer())
    Names.insert(T.name());
  for (const auto *List : {&G.input(), &G.value_info(), &G.output()})
    for (const auto &V : *List)
      Names.insert(V.name());
  for (const auto &N : G.node()) {
    Names.insert(N.name());
    Names.insert(N.input().begin(), N.input().end());
    Names.insert(N.output().begin(), N.output().end());
  }
  return Names;
}

} // namespace onnxio

//===----------------------------------------------------------------------===//
// Public TensorProto helpers (OnnxTensor.h)
//===----------------------------------------------------------------------===//

rt::Tensor onnxTensorFromBytes(std::string_view Bytes, std::string_view What,
                                std::string *Name) {
  onnxio::ModelSource Src{std::string(What), "", "ONNX tensor file"};
  ::onnx::TensorProto P;
  if (!onnxio::parseBytes(Bytes, P))
    fail(ErrorKind::Parse, "'", What,
         "' is not a valid ONNX TensorProto (truncated or corrupt)");
  if (Name)
    *Name = P.name();
  return onnxio::tensorFromProto(
      P, Src, P.name().empty() ? "tensor" : "tensor '" + P.name() + "'");
}

rt::Tensor readOnnxTensorFile(const std::string &Path, std::string *Name) {
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    fail(ErrorKind::IO, "cannot open ONNX tensor file '", Path,
         "': ", std::strerror(errno));
  std::ostringstream SS;
  SS << In.rdbuf();
  return onnxTensorFromBytes(SS.str(), Path, Name);
}

std::string onnxTensorToBytes(const rt::Tensor &T, const std::string &Name) {
  ::onnx::TensorProto P;
  P.set_name(Name);
  onnxio::tensorToProto(T, P);
  return P.SerializeAsString();
}

} // namespace nng::frontend
