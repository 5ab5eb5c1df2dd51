"""nngraph: neural-network models as graphs, from Python.

Load a model (ONNX or nngraph's text format), optimize, prune or quantize
it, compile it on a backend and run it with NumPy arrays; read and write
PyTorch (.pt), safetensors and .npz state dicts as dicts of NumPy arrays;
turn a torchvision state_dict into a graph (from_zoo). See docs/python.md.

    import nngraph, numpy as np
    model = nngraph.load("model.onnx")
    model.optimize("O2")
    session = model.compile("cpu")
    (y,) = session.run(None, {"x": np.zeros((1, 3, 224, 224), np.float32)})

Errors raise nngraph.Error (a RuntimeError) carrying the C++ message.
"""

from ._nngraph import (
    Error,
    InferenceSession,
    Model,
    ValueInfo,
    __version__,
    backends,
    from_zoo,
    get_num_threads,
    load,
    load_state_dict,
    loads,
    num_threads_origin,
    passes,
    save_state_dict,
    set_num_threads,
    zoo_names,
)

# Errors and types print as nngraph.X, not as the extension's.
for _t in (Error, InferenceSession, Model, ValueInfo):
    _t.__module__ = __name__
del _t

__all__ = [
    "Error",
    "InferenceSession",
    "Model",
    "ValueInfo",
    "__version__",
    "backends",
    "from_zoo",
    "get_num_threads",
    "load",
    "load_state_dict",
    "loads",
    "num_threads_origin",
    "passes",
    "save_state_dict",
    "set_num_threads",
    "zoo_names",
]
