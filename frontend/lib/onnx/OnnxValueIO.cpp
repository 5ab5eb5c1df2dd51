//===- OnnxValueIO.cpp - ONNX sequences and optionals as tensor parts ----===//
//
// OnnxValue.h: reading the SequenceProto and OptionalProto files of ONNX's
// test data, and packing such values into the tensor parts that import
// makes of sequence- and optional-typed graph inputs and outputs (and
// unpacking outputs again): a sequence is its (data, shapes) pair, an
// optional its element's parts plus a bool `has` scalar.
//
//===----------------------------------------------------------------------===//

#include "OnnxProto.h"
#include "onnx/onnx-data_pb.h"
#include "nngraph/frontend/onnx/OnnxTensor.h"
#include "nngraph/frontend/onnx/OnnxValue.h"
#include "nngraph/ir/SequenceLayout.h"
#include "nngraph/runtime/Error.h"

#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <google/protobuf/io/coded_stream.h>
#include <sstream>

namespace nng::frontend {
namespace {

std::string readFile(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    fail(ErrorKind::IO, "cannot open ONNX value file '", Path,
         "': ", std::strerror(errno));
  std::ostringstream SS;
  SS << In.rdbuf();
  return SS.str();
}

template <typename Msg> bool parseAll(const std::string &Bytes, Msg &M) {
  if (Bytes.size() > static_cast<size_t>(INT_MAX))
    return false;
  google::protobuf::io::CodedInputStream In(
      reinterpret_cast<const uint8_t *>(Bytes.data()),
      static_cast<int>(Bytes.size()));
  In.SetTotalBytesLimit(INT_MAX);
  return M.ParseFromCodedStream(&In) && In.ConsumedEntireMessage();
}

/// The tensors of a SequenceProto; What names it in messages.
std::vector<rt::Tensor> sequenceTensors(const ::onnx::SequenceProto &S,
                                        const std::string &What) {
  if (S.elem_type() != ::onnx::SequenceProto::TENSOR &&
      S.elem_type() != ::onnx::SequenceProto::UNDEFINED)
    fail(ErrorKind::Unsupported, "'", What,
         "' is a sequence of non-tensors (elem_type ", S.elem_type(),
         "); nngraph supports sequences of tensors only");
  onnxio::ModelSource Src{What, "", "ONNX value file"};
  std::vector<rt::Tensor> Out;
  for (int I = 0; I < S.tensor_values_size(); ++I)
    Out.push_back(onnxio::tensorFromProto(
        S.tensor_values(I), Src, "element " + std::to_string(I)));
  return Out;
}

} // namespace

const char *onnxValueKindName(OnnxValueKind K) {
  switch (K) {
  case OnnxValueKind::Tensor:
    return "tensor";
  case OnnxValueKind::Sequence:
    return "sequence";
  case OnnxValueKind::OptionalTensor:
    return "optional tensor";
  case OnnxValueKind::OptionalSequence:
    return "optional sequence";
  }
  return "?";
}

OnnxValue readOnnxValueFile(const std::string &Path, OnnxValueKind Kind,
                            std::string *Name) {
  OnnxValue V;
  V.Kind = Kind;
  if (Kind == OnnxValueKind::Tensor) {
    V.Elements.push_back(readOnnxTensorFile(Path, Name));
    return V;
  }
  std::string Bytes = readFile(Path);
  if (Kind == OnnxValueKind::Sequence) {
    ::onnx::SequenceProto S;
    if (!parseAll(Bytes, S))
      fail(ErrorKind::Parse, "'", Path,
           "' is not a valid ONNX SequenceProto (truncated or corrupt)");
    if (Name)
      *Name = S.name();
    V.Elements = sequenceTensors(S, Path);
    return V;
  }
  ::onnx::OptionalProto O;
  if (!parseAll(Bytes, O))
    fail(ErrorKind::Parse, "'", Path,
         "' is not a valid ONNX OptionalProto (truncated or corrupt)");
  if (Name)
    *Name = O.name();
  onnxio::ModelSource Src{Path, "", "ONNX value file"};
  if (Kind == OnnxValueKind::OptionalTensor) {
    V.HasElement = O.has_tensor_value();
    if (V.HasElement)
      V.Elements.push_back(
          onnxio::tensorFromProto(O.tensor_value(), Src, "the optional's value"));
    return V;
  }
  V.HasElement = O.has_sequence_value();
  if (V.HasElement)
    V.Elements = sequenceTensors(O.sequence_value(), Path);
  return V;
}

std::vector<rt::Tensor> packOnnxValue(const OnnxValue &V, DType ElemType,
                                      int64_t ElemRank) {
  bool Optional = V.Kind == OnnxValueKind::OptionalTensor ||
                  V.Kind == OnnxValueKind::OptionalSequence;
  bool Seq = V.Kind == OnnxValueKind::Sequence ||
             V.Kind == OnnxValueKind::OptionalSequence;
  std::vector<rt::Tensor> Parts;
  if (!Seq) {
    if (V.HasElement) {
      if (V.Elements.size() != 1)
        fail(ErrorKind::InvalidArgument, "a ", onnxValueKindName(V.Kind),
             " value holds one tensor, not ", V.Elements.size());
      Parts.push_back(V.Elements[0]);
    } else {
      Parts.push_back(rt::Tensor::empty(
          Shape(std::vector<int64_t>(ElemRank < 0 ? 1 : ElemRank, 0)),
          ElemType));
    }
  } else {
    ir::SequenceLayout L;
    DType D = V.Elements.empty() ? ElemType : V.Elements[0].dtype();
    for (const rt::Tensor &E : V.Elements) {
      if (E.dtype() != D)
        fail(ErrorKind::InvalidArgument, "the elements of a sequence must "
             "share one dtype: ", dtypeName(D), " and ", dtypeName(E.dtype()));
      if (isString(D))
        fail(ErrorKind::Unsupported,
             "sequences of str tensors cannot be packed; use numeric tensors");
      L.push(E.shape());
    }
    rt::Tensor Data = rt::Tensor::empty(Shape{L.dataLength()}, D);
    char *Out = static_cast<char *>(Data.rawData());
    for (size_t K = 0; K < V.Elements.size(); ++K) {
      rt::Tensor C = V.Elements[K].contiguous();
      std::memcpy(Out + L.Offsets[K] * C.elementSize(), C.rawData(),
                  C.nbytes());
    }
    std::vector<int64_t> Enc = L.encode();
    Parts.push_back(Data);
    Parts.push_back(rt::Tensor::fromVector(
        Enc, Shape{static_cast<int64_t>(Enc.size())}));
  }
  if (Optional)
    Parts.push_back(rt::Tensor::scalar(V.HasElement));
  return Parts;
}

OnnxValue unpackOnnxValue(OnnxValueKind K, const std::vector<rt::Tensor> &Parts,
                          const std::string &What) {
  size_t Want = K == OnnxValueKind::Tensor             ? 1
                : K == OnnxValueKind::OptionalSequence ? 3
                                                       : 2;
  if (Parts.size() != Want)
    fail(ErrorKind::InvalidArgument, What, ": a ", onnxValueKindName(K),
         " has ", Want, " parts, got ", Parts.size());
  OnnxValue V;
  V.Kind = K;
  bool Optional = K == OnnxValueKind::OptionalTensor ||
                  K == OnnxValueKind::OptionalSequence;
  if (Optional) {
    const rt::Tensor &Has = Parts.back();
    if (Has.dtype() != DType::Bool || Has.numel() != 1)
      fail(ErrorKind::InvalidArgument, What,
           ": an optional's 'has' part must be one bool, got ",
           dtypeName(Has.dtype()), Has.shape().toString());
    V.HasElement = Has.getFlatInt(0) != 0;
    if (!V.HasElement)
      return V;
  }
  if (K == OnnxValueKind::Tensor || K == OnnxValueKind::OptionalTensor) {
    V.Elements.push_back(Parts[0]);
    return V;
  }
  const rt::Tensor &Data = Parts[0], &Shapes = Parts[1];
  std::string Why;
  std::optional<ir::SequenceLayout> L;
  if (Data.rank() == 1 && Shapes.rank() == 1 && Shapes.dtype() == DType::I64)
    L = ir::decodeSequenceShapes(Shapes.toIntVector(), Data.numel(), Why);
  if (!L)
    fail(ErrorKind::InvalidArgument, What,
         ": the (data, shapes) pair of a sequence is malformed",
         Why.empty() ? std::string() : ": " + Why);
  rt::Tensor Flat = Data.contiguous();
  for (size_t E = 0; E < L->size(); ++E)
    V.Elements.push_back(Flat.slice(0, L->Offsets[E], L->Offsets[E + 1])
                             .reshape(L->Shapes[E])
                             .clone());
  return V;
}

} // namespace nng::frontend
