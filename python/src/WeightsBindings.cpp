//===- WeightsBindings.cpp - State dicts as dicts of NumPy arrays ---------===//
//
// load_state_dict / save_state_dict: the three weight-file formats of
// frontend/weights (PyTorch .pt read with the restricted unpickler,
// safetensors memory-mapped, .npz) by extension, as dicts of NumPy arrays
// in the file's order. safetensors arrays view a private copy-on-write
// mapping of the file (no copy; a write to an array never reaches the
// file); writing is atomic.
//
//===----------------------------------------------------------------------===//

#include "Arrays.h"
#include "Bindings.h"

#include "nngraph/frontend/weights/Formats.h"

namespace nng::python {

void bindWeights(py::module_ &M) {
  M.def(
      "load_state_dict",
      [](py::handle PathObj, const std::string &KeyPath) {
        std::string Path = pathArg(PathObj, "load_state_dict");
        weights::TensorMap Map;
        {
          py::gil_scoped_release NoGil;
          Map = weights::readStateDict(Path, KeyPath);
        }
        return dictFromTensorMap(Map, Sharing::Writable);
      },
      py::arg("path"), py::arg("key_path") = "",
      "Reads a state dict: .pt/.pth/.bin/.ckpt (torch.save's format; "
      "nothing in the file is executed), .safetensors or .npz. Returns "
      "{name: numpy array} in the file's order (bfloat16 widened to "
      "float32; safetensors arrays are copy-on-write views of the file). "
      "key_path selects a sub-dict of a .pt checkpoint, e.g. "
      "'model_state_dict' or 'ema/model'.");
  M.def(
      "save_state_dict",
      [](py::handle PathObj, py::handle StateDict) {
        std::string Path = pathArg(PathObj, "save_state_dict");
        weights::TensorMap Map = tensorMapFromDict(StateDict, "state_dict");
        py::gil_scoped_release NoGil;
        weights::writeStateDict(Path, Map);
      },
      py::arg("path"), py::arg("state_dict"),
      "Writes a dict of name -> array (a torch state_dict() works as it is) "
      "as .pt (torch.load(weights_only=True) reads it), .safetensors or "
      ".npz, by extension, atomically.");
}

} // namespace nng::python
