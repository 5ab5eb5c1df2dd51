//===- OnnxExport.cpp - ir::Graph -> ONNX ModelProto ---------------------===//
//
// Export lowers a copy of the graph (OnnxLowering.cpp), then writes it 1:1:
// inputs, initializers (by name, raw_data, or external data in a side file
// when the weights would pass protobuf's 2 GB limit), nodes with their
// attributes (leaf-module calls in the custom domain ai.nngraph.module, with
// a warning), value_info for every typed intermediate value, outputs.
// Regions (If's branches, Loop's body) are written as GRAPH attributes the
// same way, reading outer values by name (their captures are not written;
// a region output that no node of the region makes gets an Identity; a
// region's own value named like a value of an enclosing graph, which the
// text format allows and ONNX does not, is renamed). Also
// the ONNX checker + strict shape inference wrapper used by tests and by
// OnnxExportOptions::Check.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/onnx/OnnxExport.h"
#include "OnnxLowering.h"
#include "OnnxProto.h"
#include "OnnxSequences.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/runtime/Error.h"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

namespace fs = std::filesystem;

namespace nng::frontend {
namespace onnxio {
namespace {

using ::onnx::ModelProto;

/// Alignment of tensors in the external-data file.
constexpr uint64_t ExternalAlign = 64;
/// Protobuf's hard limit on a message.
constexpr uint64_t ProtobufLimit = (uint64_t(1) << 31) - 1;

/// The IR version that goes with an opset (ONNX's versioning table).
int64_t irVersionFor(int Opset) { return Opset <= 14 ? 7 : 8; }

/// Where external data goes: the side file's path, its name relative to the
/// model, and the tensors written so far.
struct ExternalWriter {
  std::string FilePath;
  std::string Location;
  std::ofstream Out;
  uint64_t Offset = 0;
  bool Committed = false;

  ~ExternalWriter() {
    if (Out.is_open() || (!FilePath.empty() && !Committed)) {
      Out.close();
      std::remove((FilePath + ".tmp").c_str());
    }
  }

  void open() {
    Out.open(FilePath + ".tmp", std::ios::binary | std::ios::trunc);
    if (!Out)
      fail(ErrorKind::IO, "cannot create the external data file '", FilePath,
           ".tmp': ", std::strerror(errno));
  }

  /// Appends T and points P at it.
  void write(const rt::Tensor &T, ::onnx::TensorProto &P) {
    uint64_t Pad = (ExternalAlign - Offset % ExternalAlign) % ExternalAlign;
    static const char Zeros[ExternalAlign] = {};
    Out.write(Zeros, static_cast<std::streamsize>(Pad));
    Offset += Pad;
    rt::Tensor C = T.contiguous();
    Out.write(static_cast<const char *>(C.rawData()),
              static_cast<std::streamsize>(C.nbytes()));
    if (!Out)
      fail(ErrorKind::IO, "cannot write the external data file '", FilePath,
           ".tmp'");
    P.set_data_type(dtypeToOnnx(T.dtype()));
    for (int64_t D : T.shape())
      P.add_dims(D);
    P.set_data_location(::onnx::TensorProto::EXTERNAL);
    auto Add = [&](const char *K, std::string V) {
      auto *E = P.add_external_data();
      E->set_key(K);
      E->set_value(std::move(V));
    };
    Add("location", Location);
    Add("offset", std::to_string(Offset));
    Add("length", std::to_string(C.nbytes()));
    Offset += C.nbytes();
  }

  void commit() {
    Out.flush();
    Out.close();
    if (!Out)
      fail(ErrorKind::IO, "cannot write the external data file '", FilePath,
           ".tmp'");
    if (std::rename((FilePath + ".tmp").c_str(), FilePath.c_str()) != 0)
      fail(ErrorKind::IO, "cannot rename '", FilePath, ".tmp' to '", FilePath,
           "': ", std::strerror(errno));
    Committed = true;
  }
};

void addValueInfo(const ir::Value *V, ::onnx::ValueInfoProto &P) {
  P.set_name(V->name());
  typeToProto(V->type(), *P.mutable_type());
}

/// Renames the values of G's regions (recursively) named like a value of an
/// enclosing graph: ONNX forbids shadowing. Outer holds the enclosing
/// graphs' names.
void unshadowRegions(ir::Graph &G, std::set<std::string> Outer) {
  auto Note = [&](const ir::Value *V) { Outer.insert(V->name()); };
  for (const ir::Value *V : G.inputs())
    Note(V);
  for (const ir::Value *V : G.initializers())
    Note(V);
  for (const auto &N : G.nodes())
    for (const ir::Value *V : N->outputs())
      Note(V);
  for (const auto &N : G.nodes())
    for (ir::Graph *R : N->regions()) {
      std::vector<ir::Value *> Own(R->inputs());
      Own.insert(Own.end(), R->initializers().begin(),
                 R->initializers().end());
      for (const auto &RN : R->nodes())
        Own.insert(Own.end(), RN->outputs().begin(), RN->outputs().end());
      for (ir::Value *V : Own) {
        if (!Outer.count(V->name()))
          continue;
        std::string Name = V->name();
        for (int K = 1; Outer.count(Name) || R->lookup(Name); ++K)
          Name = V->name() + "." + std::to_string(K);
        R->rename(V, Name);
      }
      unshadowRegions(*R, Outer);
    }
}

/// What writing a graph needs besides the graph.
struct WriteState {
  const OnnxExportOptions &O;
  bool UseExternal;
  ExternalWriter *External;
  bool HasModuleCall = false;
  /// Other domains the nodes use (com.microsoft contrib ops): the opset
  /// version each needs.
  std::map<std::string, int> Domains;
};

void writeGraph(const ir::Graph &G, ::onnx::GraphProto &GP, WriteState &W,
                bool IsRegion);

/// Writes region R as the GRAPH attribute Name.
void writeRegion(const std::string &Name, const ir::Graph &R,
                 ::onnx::AttributeProto &P, WriteState &W) {
  P.set_name(Name);
  P.set_type(::onnx::AttributeProto::GRAPH);
  ::onnx::GraphProto &Sub = *P.mutable_g();
  Sub.set_name(R.name().empty() ? Name : R.name());
  writeGraph(R, Sub, W, /*IsRegion=*/true);
}

void writeGraph(const ir::Graph &G, ::onnx::GraphProto &GP, WriteState &W,
                bool IsRegion) {
  const OnnxExportOptions &O = W.O;
  for (const ir::Value *V : G.inputs())
    addValueInfo(V, *GP.add_input());
  for (const ir::Value *V : G.initializers()) {
    if (!V->data().defined())
      fail(ErrorKind::Unsupported, "initializer '", V->name(),
           "' has no data (it was elided in the text format); load its "
           "weights before exporting to ONNX");
    ::onnx::TensorProto &T = *GP.add_initializer();
    T.set_name(V->name());
    if (!IsRegion && W.UseExternal &&
        V->data().nbytes() >= O.ExternalDataMinBytes &&
        !isString(V->data().dtype())) // STRING has no external form.
      W.External->write(V->data(), T);
    else
      tensorToProto(V->data(), T);
  }
  for (const auto &NP : G.nodes()) {
    const ir::Node &N = *NP;
    ::onnx::NodeProto &P = *GP.add_node();
    if (isSequenceOp(N.op())) {
      // One sequence value per (data, shapes) pair, with no value_info.
      sequenceNodeToProto(N, P);
      if (!producesSequence(N.op()) && N.output()->type().hasRank() &&
          !G.isOutput(N.output()))
        addValueInfo(N.output(), *GP.add_value_info());
      continue;
    }
    P.set_op_type(std::string(N.schema().Name));
    if (N.op() == ir::OpKind::ModuleCall) {
      P.set_domain(ModuleCallDomain);
      W.HasModuleCall = true;
    } else if (!N.schema().Domain.empty()) {
      std::string D(N.schema().Domain);
      P.set_domain(D);
      int &V = W.Domains[D];
      V = std::max(V, N.schema().SinceVersion);
    }
    if (!N.name().empty())
      P.set_name(N.name());
    size_t NumIn = N.numExplicitInputs(); // Captures are read by name.
    while (NumIn > 0 && !N.input(NumIn - 1))
      --NumIn;
    for (size_t I = 0; I < NumIn; ++I)
      P.add_input(N.input(I) ? N.input(I)->name() : "");
    for (const ir::Value *Out : N.outputs())
      P.add_output(Out->name());
    for (const auto &[Name, A] : N.attrs()) {
      if (A.type() == ir::AttrType::Graph)
        writeRegion(Name, A.g(), *P.add_attribute(), W);
      else
        attributeToProto(Name, A, *P.add_attribute());
    }
    for (const ir::Value *Out : N.outputs())
      if (Out->type().hasRank() && !G.isOutput(Out))
        addValueInfo(Out, *GP.add_value_info());
  }
  if (!IsRegion) {
    for (const ir::Value *V : G.outputs()) // Distinct: see lowerForOnnx().
      addValueInfo(V, *GP.add_output());
    return;
  }
  // A region's outputs must be values its nodes make, each once: others
  // (block arguments, captures, initializers, repeats) go through Identity.
  std::set<const ir::Value *> Seen;
  for (size_t I = 0; I < G.outputs().size(); ++I) {
    const ir::Value *V = G.outputs()[I];
    if (V->producer() && Seen.insert(V).second) {
      addValueInfo(V, *GP.add_output());
      continue;
    }
    std::string Name = G.uniqueName(V->name() + ".out" + std::to_string(I));
    ::onnx::NodeProto &Id = *GP.add_node();
    Id.set_op_type("Identity");
    Id.add_input(V->name());
    Id.add_output(Name);
    ::onnx::ValueInfoProto &VI = *GP.add_output();
    VI.set_name(Name);
    typeToProto(V->type(), *VI.mutable_type());
  }
}

/// Serializes the lowered graph G. External (may be null) receives the
/// initializers of at least MinBytes when UseExternal.
void buildModel(const ir::Graph &G, const OnnxExportOptions &O,
                bool UseExternal, ExternalWriter *External, ModelProto &M) {
  M.set_ir_version(irVersionFor(O.Opset));
  M.set_producer_name("nngraph");
  M.set_producer_version("0.1.0");
  auto *Imp = M.add_opset_import();
  Imp->set_domain("");
  Imp->set_version(O.Opset);
  ::onnx::GraphProto &GP = *M.mutable_graph();
  GP.set_name(G.name().empty() ? "nngraph" : G.name());
  WriteState W{O, UseExternal, External, false, {}};
  writeGraph(G, GP, W, /*IsRegion=*/false);
  if (W.HasModuleCall) {
    auto *Custom = M.add_opset_import();
    Custom->set_domain(ModuleCallDomain);
    Custom->set_version(1);
  }
  for (const auto &[Domain, Version] : W.Domains) {
    auto *Imp = M.add_opset_import();
    Imp->set_domain(Domain);
    Imp->set_version(Version);
  }
}

/// Warns (O.Warnings, or stderr) when the lowered graph G keeps leaf-module
/// calls: the model then needs a custom op to run outside nngraph.
void warnAboutModuleCalls(const ir::Graph &G, const OnnxExportOptions &O,
                          const std::string &Where) {
  std::vector<std::string> Modules;
  for (const auto &N : G.nodes())
    if (N->op() == ir::OpKind::ModuleCall)
      Modules.push_back(N->attrString("module") + " (" +
                        N->attrString("module_type") + ")");
  if (Modules.empty())
    return;
  std::string List;
  for (size_t I = 0; I < Modules.size() && I < 5; ++I)
    List += (I ? ", " : "") + Modules[I];
  if (Modules.size() > 5)
    List += ", ...";
  std::string W = "ONNX export of " + Where + ": " +
                  std::to_string(Modules.size()) + " leaf-module call" +
                  (Modules.size() == 1 ? "" : "s") + " [" + List +
                  "] written as custom op " + ModuleCallDomain +
                  ".ModuleCall; the model needs a custom-op implementation "
                  "to run in ONNX Runtime or elsewhere, and nngraph cannot "
                  "re-import it; trace without leaf modules for a portable "
                  "model";
  if (O.Warnings)
    O.Warnings->push_back(std::move(W));
  else
    std::fprintf(stderr, "nngraph: warning: %s\n", W.c_str());
}

uint64_t initializerBytes(const ir::Graph &G) {
  uint64_t Total = 0;
  for (const ir::Value *V : G.initializers())
    if (V->data().defined())
      Total += V->data().nbytes();
  return Total;
}

std::unique_ptr<ir::Graph> lowered(const ir::Graph &G,
                                   const OnnxExportOptions &O) {
  if (O.Opset < MinExportOpset || O.Opset > MaxOpset)
    fail(ErrorKind::InvalidArgument, "ONNX export: opset ", O.Opset,
         " is not supported; choose ", MinExportOpset, " to ", MaxOpset);
  std::unique_ptr<ir::Graph> L = G.clone();
  try {
    // Types as inference gives them, so that every value_info is right even
    // for a graph whose types were never inferred.
    ir::inferTypes(*L);
    lowerForOnnx(*L, O.Opset);
    unshadowRegions(*L, {});
  } catch (Error &E) {
    E.addContext("while exporting graph '" + G.name() + "' to ONNX");
    throw;
  }
  return L;
}

void checkModelProto(ModelProto &M, const std::string &Name) {
  try {
    ::onnx::checker::check_model(M);
  } catch (const std::exception &E) {
    fail(ErrorKind::Verify, "ONNX checker rejects model '", Name,
         "': ", E.what());
  }
  try {
    ::onnx::ShapeInferenceOptions SO(/*check_type=*/true, /*strict_mode=*/1,
                                     /*data_prop=*/true);
    ::onnx::shape_inference::InferShapes(
        M, ::onnx::OpSchemaRegistry::Instance(), SO);
  } catch (const std::exception &E) {
    fail(ErrorKind::Verify, "ONNX shape inference rejects model '", Name,
         "': ", E.what());
  }
}

} // namespace
} // namespace onnxio

std::string exportOnnxToBytes(const ir::Graph &G, const OnnxExportOptions &O) {
  std::unique_ptr<ir::Graph> L = onnxio::lowered(G, O);
  if (O.ForceExternalData || onnxio::initializerBytes(*L) > O.ExternalDataLimit)
    fail(ErrorKind::Unsupported, "ONNX export of graph '", G.name(),
         "': its weights need external data (", onnxio::initializerBytes(*L),
         " bytes); export to a file with exportOnnx()");
  onnxio::warnAboutModuleCalls(*L, O, "graph '" + G.name() + "'");
  ::onnx::ModelProto M;
  onnxio::buildModel(*L, O, false, nullptr, M);
  if (M.ByteSizeLong() > onnxio::ProtobufLimit)
    fail(ErrorKind::Unsupported, "ONNX export of graph '", G.name(),
         "': the model exceeds protobuf's 2 GB limit");
  if (O.Check)
    onnxio::checkModelProto(M, G.name().empty() ? "<bytes>" : G.name());
  return M.SerializeAsString();
}

void exportOnnx(const ir::Graph &G, const std::string &Path,
                const OnnxExportOptions &O) {
  std::unique_ptr<ir::Graph> L = onnxio::lowered(G, O);
  fs::path P(Path);
  std::string Dir = P.has_parent_path() ? P.parent_path().string() : ".";
  bool UseExternal =
      O.ForceExternalData || onnxio::initializerBytes(*L) > O.ExternalDataLimit;
  onnxio::ExternalWriter External;
  if (UseExternal) {
    External.Location = O.ExternalDataFile.empty()
                            ? P.filename().string() + ".data"
                            : O.ExternalDataFile;
    fs::path Loc(External.Location);
    if (Loc.is_absolute() || Loc.has_parent_path())
      fail(ErrorKind::InvalidArgument, "ONNX export to '", Path,
           "': the external data file '", External.Location,
           "' must be a plain file name (it lives next to the model)");
    External.FilePath = (fs::path(Dir) / Loc).string();
    External.open();
  }
  onnxio::warnAboutModuleCalls(*L, O, "'" + Path + "'");
  ::onnx::ModelProto M;
  onnxio::buildModel(*L, O, UseExternal, &External, M);
  L.reset();
  if (M.ByteSizeLong() > onnxio::ProtobufLimit)
    fail(ErrorKind::Unsupported, "ONNX export to '", Path,
         "': the model exceeds protobuf's 2 GB limit even with its large "
         "initializers in external data");
  if (UseExternal)
    External.commit();
  std::string Bytes = M.SerializeAsString();
  std::string Temp = Path + ".tmp";
  {
    std::ofstream Out(Temp, std::ios::binary | std::ios::trunc);
    Out.write(Bytes.data(), static_cast<std::streamsize>(Bytes.size()));
    Out.close();
    if (!Out) {
      int E = errno;
      std::remove(Temp.c_str());
      fail(ErrorKind::IO, "cannot write ONNX model '", Path,
           "': ", std::strerror(E));
    }
  }
  if (std::rename(Temp.c_str(), Path.c_str()) != 0) {
    std::remove(Temp.c_str());
    fail(ErrorKind::IO, "cannot write ONNX model '", Path,
         "': ", std::strerror(errno));
  }
  if (O.Check)
    checkOnnxModel(Path);
}

void checkOnnxModel(const std::string &Path) {
  try {
    ::onnx::checker::check_model(Path);
  } catch (const std::exception &E) {
    fail(ErrorKind::Verify, "ONNX checker rejects model '", Path,
         "': ", E.what());
  }
  std::ifstream In(Path, std::ios::binary);
  std::string Bytes((std::istreambuf_iterator<char>(In)),
                    std::istreambuf_iterator<char>());
  ::onnx::ModelProto M;
  onnxio::parseModel(Bytes, M, {Path, ""});
  try {
    ::onnx::ShapeInferenceOptions SO(true, 1, true);
    ::onnx::shape_inference::InferShapes(
        M, ::onnx::OpSchemaRegistry::Instance(), SO);
  } catch (const std::exception &E) {
    fail(ErrorKind::Verify, "ONNX shape inference rejects model '", Path,
         "': ", E.what());
  }
}

void checkOnnxModelBytes(std::string_view Bytes, std::string_view ModelName) {
  ::onnx::ModelProto M;
  onnxio::ModelSource Src{std::string(ModelName), ""};
  onnxio::parseModel(Bytes, M, Src);
  onnxio::checkModelProto(M, Src.Name);
}

} // namespace nng::frontend
