//===- Formats.cpp - Weight-file format dispatch by extension -------------===//
//
// Picks .pt, safetensors or .npz from a path's extension and forwards to
// the per-format readers and writers (Pt.cpp, Safetensors.cpp, Npz.cpp).
// A .pt state dict is written as a dict of tensors, which the .pt writer
// stores as the OrderedDict torch.save writes for model.state_dict().
// Runtime only: no nng::Tensor, no nn::.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <cctype>

namespace nng::weights {

namespace {

/// The lower-cased extension of Path's file name including the dot, or "".
std::string extensionOf(const std::string &Path) {
  size_t Slash = Path.find_last_of('/');
  size_t Start = Slash == std::string::npos ? 0 : Slash + 1;
  size_t Dot = Path.find_last_of('.');
  if (Dot == std::string::npos || Dot < Start || Dot == Start)
    return "";
  std::string Ext = Path.substr(Dot);
  std::transform(Ext.begin(), Ext.end(), Ext.begin(),
                 [](unsigned char C) { return std::tolower(C); });
  return Ext;
}

} // namespace

Format formatForPath(const std::string &Path) {
  std::string Ext = extensionOf(Path);
  if (Ext == ".pt" || Ext == ".pth" || Ext == ".bin" || Ext == ".ckpt")
    return Format::Pt;
  if (Ext == ".safetensors")
    return Format::Safetensors;
  if (Ext == ".npz")
    return Format::Npz;
  fail(ErrorKind::InvalidArgument, "'", Path, "': ",
       Ext.empty() ? std::string("the file name has no extension")
                   : "unknown weight-file extension '" + Ext + "'",
       "; use .pt/.pth/.bin/.ckpt (PyTorch torch.save), .safetensors or "
       ".npz (numpy.savez, MLX save_weights)");
}

const char *formatName(Format F) {
  switch (F) {
  case Format::Pt:
    return "pt";
  case Format::Safetensors:
    return "safetensors";
  case Format::Npz:
    return "npz";
  }
  return "unknown";
}

Object readObject(const std::string &Path) {
  switch (formatForPath(Path)) {
  case Format::Pt:
    return readPt(Path);
  case Format::Safetensors:
    return toObject(readSafetensors(Path));
  case Format::Npz:
    return toObject(readNpz(Path));
  }
  fail(ErrorKind::Internal, "readObject: unhandled format for '", Path, "'");
}

TensorMap readStateDict(const std::string &Path, const std::string &KeyPath,
                        std::vector<std::string> *Skipped) {
  Format F = formatForPath(Path);
  if (F == Format::Pt) {
    Object Root = readPt(Path);
    try {
      return selectTensors(Root, KeyPath, Skipped);
    } catch (Error &E) {
      E.addContext("in '" + Path + "'");
      throw;
    }
  }
  if (!KeyPath.empty())
    fail(ErrorKind::InvalidArgument, "'", Path, "': a key path ('", KeyPath,
         "') selects a sub-dict of a .pt checkpoint, but ", formatName(F),
         " files hold one flat state dict; drop the key path");
  if (F == Format::Safetensors)
    return readSafetensors(Path);
  return readNpz(Path);
}

void writeStateDict(const std::string &Path, const TensorMap &Tensors) {
  switch (formatForPath(Path)) {
  case Format::Pt:
    writePt(Path, toObject(Tensors));
    return;
  case Format::Safetensors:
    writeSafetensors(Path, Tensors);
    return;
  case Format::Npz:
    writeNpz(Path, Tensors);
    return;
  }
}

} // namespace nng::weights
