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

import os as _os


def _openmp_spin_default():
    """libgomp (OpenMP, which the extension's oneDNN runs on) reads how long
    its idle threads spin once, when it is loaded; its default burns a core
    for milliseconds after every run. Before the extension loads it, and
    only when nothing has loaded it yet, set the spin nngraph's programs use
    (OpenMPSpinDefault in runtime/OpenMPStart.h); a value the user set is
    kept."""
    if "GOMP_SPINCOUNT" in _os.environ or "OMP_WAIT_POLICY" in _os.environ:
        return
    try:
        with open("/proc/self/maps") as maps:
            if "libgomp" in maps.read():
                return
    except OSError:
        return
    # OpenMPSpinDefault; the extension's _openmp_spin_default (tests check).
    _os.environ["GOMP_SPINCOUNT"] = "20000"


_openmp_spin_default()

from ._nngraph import (  # noqa: E402
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
