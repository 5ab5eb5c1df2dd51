//===- Formats.h - Reading and writing .pt, safetensors and .npz --*- C++ -*-===//
//
// The three weight-file formats and the dispatch by file extension:
//  - .pt / .pth: the zip archive torch.save writes (data.pkl + data/N
//    storages), read with a restricted unpickler that only rebuilds tensors
//    and plain containers (like torch.load(weights_only=True)) and never
//    executes anything; written so torch.load(weights_only=True) loads it;
//  - .safetensors: JSON header + raw data, read memory-mapped (the tensors
//    alias the mapping; no copy);
//  - .npz: a zip of .npy arrays, one per key (numpy.savez / MLX's
//    save_weights).
// Every reader checks every offset, size and count against the file before
// touching memory; errors are nng::Error naming the file, the entry or key,
// the problem and what to do. Every writer goes through rt::writeFileAtomic
// (runtime/FileIO.h), so a failed write never leaves a partial file or
// touches an existing one. The *FromBytes readers exist for fuzzing and
// tests.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/weights/Object.h"
#include "nngraph/frontend/weights/TensorMap.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nng::weights {

// --- .pt ---------------------------------------------------------------------
/// The object torch.save stored in Path.
Object readPt(const std::string &Path);
/// readPt on bytes in memory (Name appears in messages).
Object readPtFromBytes(std::string_view Bytes, const std::string &Name);
/// Writes Root (tensors, containers and scalars) as torch.save would:
/// dicts whose values are all tensors as collections.OrderedDict, views of
/// one storage as one storage (they alias again when loaded), a lone
/// non-contiguous view as a compact copy. Tensors must be f32, f64, f16,
/// bf16, i64, i32, i16, i8, u8 or bool. Floats (Object::floating) are
/// pickled as BINFLOAT, which torch 1.13's weights_only loader refuses (as
/// it refuses torch.save's own floats); torch >= 2.0 loads them.
void writePt(const std::string &Path, const Object &Root);

// --- safetensors -------------------------------------------------------------
/// The "__metadata__" string map of a safetensors header.
using Metadata = std::vector<std::pair<std::string, std::string>>;
/// The tensors of Path, in header order; they alias a read-only mapping of
/// the file. *Meta receives the metadata when given.
TensorMap readSafetensors(const std::string &Path, Metadata *Meta = nullptr);
TensorMap readSafetensorsFromBytes(std::string_view Bytes,
                                   const std::string &Name,
                                   Metadata *Meta = nullptr);
void writeSafetensors(const std::string &Path, const TensorMap &Tensors,
                      const Metadata &Meta = {});

// --- .npz --------------------------------------------------------------------
TensorMap readNpz(const std::string &Path);
TensorMap readNpzFromBytes(std::string_view Bytes, const std::string &Name);
void writeNpz(const std::string &Path, const TensorMap &Tensors);
/// True when Key can name an .npz entry: not empty, no leading '/', no ".."
/// component, no backslash or NUL (zip readers refuse those).
bool isNpzKey(const std::string &Key);

// --- By extension --------------------------------------------------------------
enum class Format { Pt, Safetensors, Npz };
/// .pt/.pth/.bin/.ckpt -> Pt, .safetensors -> Safetensors, .npz -> Npz;
/// anything else is an error listing the supported extensions.
Format formatForPath(const std::string &Path);
const char *formatName(Format F);
/// The whole content: a .pt file's object, or a dict of the flat formats'
/// tensors.
Object readObject(const std::string &Path);
/// The state dict in Path; KeyPath selects a sub-dict of a .pt checkpoint
/// (see selectTensors) and must be empty for the flat formats.
TensorMap readStateDict(const std::string &Path, const std::string &KeyPath = "",
                        std::vector<std::string> *Skipped = nullptr);
/// Writes Tensors in the format of Path's extension.
void writeStateDict(const std::string &Path, const TensorMap &Tensors);

} // namespace nng::weights
