"""The corpus test of one model (ctest corpus.NAME): runs it on nngraph's
reference and cpu backends and in ONNX Runtime (onnxruntime-node) on the
same inputs and compares the outputs (tests/corpus/compare.py); a streaming
model runs chunk by chunk with its state fed back, on each engine. Prints
one line per backend and input set with the max abs differences, and
"SKIPPED: reason" when a prerequisite is missing (the npm package, torch,
node or onnxruntime-node).

Usage: python3 tests/corpus/test_corpus.py NAME [--backends reference,cpu]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
import corpus  # noqa: E402
import support  # noqa: E402
from compare import compare_detections, compare_plain  # noqa: E402

# Detections: the best TOP_DETECTIONS of ONNX Runtime's are compared, with
# these score and box-corner tolerances (pixels of the 320x320 input).
TOP_DETECTIONS = 25
SCORE_TOL = 1e-3
BOX_TOL = 0.05


class Scratch:
    """What support.run_ort needs of a test case: a scratch folder."""

    def __init__(self, folder):
        self.folder = folder

    def path(self, name):
        return os.path.join(self.folder, name)

    def assertEqual(self, a, b, msg=None):
        if a != b:
            raise AssertionError(msg or f"{a} != {b}")


def stream_args(stream, chunk):
    """run_stream.mjs's options for a stream in chunks of `chunk`."""
    args = ["--chunk", f"{stream.input}={chunk}"]
    for o, i in stream.feedback.items():
        args += ["--feedback", f"{o}={i}"]
    return args


def ort_stream(scratch, model_path, feeds, stream):
    """ONNX Runtime's outputs of a streaming run (tests/ort/run_stream.mjs)."""
    import shutil
    node = os.environ.get("NNGRAPH_NODE") or shutil.which("node")
    if not node:
        support.skip("node is not installed (bash scripts/setup.sh --tests)")
    chunk = feeds[stream.input].shape[-1] // stream.chunks
    support.write_tensor_dir(scratch.path("in"), feeds)
    cmd = [node, os.path.join(support.SOURCE_DIR, "tests", "ort",
                              "run_stream.mjs"), model_path,
           scratch.path("in"), scratch.path("out")] + stream_args(stream, chunk)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode == 77:
        support.skip(r.stdout.strip() or r.stderr.strip())
    if r.returncode != 0:
        raise RuntimeError(f"run_stream.mjs failed: {r.stderr.strip()}")
    return support.read_tensor_dir(scratch.path("out"))


def nngraph_stream(session, feeds, stream):
    """Like ort_stream, on an nngraph session: non-fed-back outputs stacked
    over the chunks, fed-back ones of the last chunk."""
    import numpy as np
    names = [o.name for o in session.get_outputs()]
    x = feeds[stream.input]
    chunk = x.shape[-1] // stream.chunks
    run_feeds = dict(feeds)
    per_chunk = {n: [] for n in names}
    for k in range(stream.chunks):
        run_feeds[stream.input] = x[..., k * chunk:(k + 1) * chunk]
        outs = dict(zip(names, session.run(None, run_feeds)))
        for o, i in stream.feedback.items():
            run_feeds[i] = outs[o]
        for n in names:
            per_chunk[n].append(outs[n])
    return {n: (v[-1] if n in stream.feedback else np.stack(v))
            for n, v in per_chunk.items()}


def run_nngraph(nngraph, model_path, backend, feeds, stream):
    session = nngraph.InferenceSession(model_path, backend=backend)
    if stream:
        return nngraph_stream(session, feeds, stream)
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(None, feeds)))


def off_counts(got, want, model):
    """{output: how many of its values are outside the model's rtol/atol},
    the float outputs that have some (what max_off allows)."""
    import numpy as np
    off = {}
    for k, w in want.items():
        g = got.get(k)
        if (g is None or g.shape != w.shape or w.dtype.kind not in "fc"):
            continue
        n = int((~np.isclose(g, w, rtol=model.rtol, atol=model.atol)).sum())
        if n:
            off[k] = n
    return off


def describe(feeds):
    return ", ".join(f"{k} {list(v.shape)}" + (f"={v.item()}" if v.size == 1
                                                else "")
                     for k, v in feeds.items())


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("name", choices=sorted(corpus.MODELS))
    p.add_argument("--backends", default="reference,cpu")
    args = p.parse_args()
    model = corpus.MODELS[args.name]
    support.require("numpy", "python3-numpy")
    if model.source[0] == "torch":
        support.require("torch", "python3-torch")
        support.require("torchvision", "python3-torchvision")
        if model.source[1] == "convtasnet":
            support.require("torchaudio", "python3-torchaudio")
    try:
        t0 = time.perf_counter()
        path = model.path()
        took = time.perf_counter() - t0
    except FileNotFoundError as e:
        support.skip(str(e))
    backends = [b for b in args.backends.split(",") if b]
    if backends:
        import nngraph
    print(f"{model.name}: {model.summary}\n  {path} "
          f"({os.path.getsize(path) / 2**20:.1f} MiB"
          + (f", made in {took:.1f} s" if took > 0.5 else "") + ")")
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for c, feeds in enumerate(model.cases()):
            scratch = Scratch(os.path.join(tmp, f"case{c}"))
            os.makedirs(scratch.folder)
            if model.stream:
                want = ort_stream(scratch, path, feeds, model.stream)
            else:
                want = support.run_ort(scratch, path, feeds)
            print(f"  inputs {describe(feeds)}"
                  + (f" in {model.stream.chunks} chunks" if model.stream
                     else ""))
            for backend in backends:
                t0 = time.perf_counter()
                try:
                    got = run_nngraph(nngraph, path, backend, feeds,
                                      model.stream)
                except nngraph.Error as e:
                    print(f"  {backend}: FAILED: {e}")
                    failures += 1
                    continue
                took = time.perf_counter() - t0
                if model.compare == "detection":
                    problems, s = compare_detections(got, want, SCORE_TOL,
                                                     BOX_TOL, TOP_DETECTIONS)
                    detail = (f"{s['count'][0]} detections (ONNX Runtime "
                              f"{s['count'][1]}), best {s['compared']}: "
                              f"{s['matched']} matched, "
                              f"{s['at_cut']} at the cut; max score diff "
                              f"{s['max_score_diff']:.3g}, max box diff "
                              f"{s['max_box_diff']:.3g} px")
                else:
                    problems, diffs = compare_plain(got, want, model.rtol,
                                                    model.atol, model.max_off)
                    detail = "max abs diff " + ", ".join(
                        f"{k} {v:.3g}" for k, v in diffs.items())
                    off = off_counts(got, want, model)
                    if off:
                        detail += (f"; outside rtol {model.rtol} atol "
                                   f"{model.atol}: " + ", ".join(
                                       f"{k} {n} of {want[k].size}"
                                       for k, n in off.items()))
                status = "MISMATCH" if problems else "ok"
                print(f"  {backend}: {status} ({took:.2f} s): {detail}")
                for msg in problems:
                    print(f"    {msg}")
                failures += bool(problems)
    print("FAILED" if failures else "OK")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
