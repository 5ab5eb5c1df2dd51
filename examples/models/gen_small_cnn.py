#!/usr/bin/env python3
"""Generates small_cnn.nng: a small CNN in the nngraph text format.

The architecture is what this PyTorch module would trace to:

    features = Sequential(Conv2d(1, 4, 3, padding=1), BatchNorm2d(4), ReLU(),
                          MaxPool2d(2), Conv2d(4, 8, 3, padding=1),
                          BatchNorm2d(8), ReLU())
    pool = AdaptiveAvgPool2d(1); flatten = Flatten(); fc = Linear(8, 10)

Initializers are named by their state_dict keys. Weights are deterministic
(a fixed seed; Python's own Mersenne Twister, so no numpy is needed) and
rounded to multiples of 1/256, so every value is exact in float32 and prints
the same in any language. Run it from anywhere:

    python3 examples/models/gen_small_cnn.py
"""
import decimal
import math
import os
import random
import struct

RNG = random.Random(20240601)


class Param:
    """A flat list of values with a shape."""

    def __init__(self, shape, values):
        assert math.prod(shape) == len(values)
        self.shape, self.values = shape, values


def dyadic(v):
    """Rounds to a multiple of 1/256: exact in f32, short in text."""
    return round(v * 256.0) / 256.0


def normal(shape, std):
    return Param(shape, [dyadic(RNG.gauss(0.0, std))
                         for _ in range(math.prod(shape))])


def uniform(c, lo, hi, offset=0.0):
    return Param((c,), [dyadic(offset + RNG.uniform(lo, hi))
                        for _ in range(c)])


def fmt(v):
    """The shortest decimal that reads back as the same f32, in fixed
    notation with at least one decimal: how nngraph prints an f32."""
    f32 = struct.unpack("f", struct.pack("f", v))[0]
    for digits in range(1, 10):
        s = "%.*g" % (digits, f32)
        if struct.unpack("f", struct.pack("f", float(s)))[0] == f32:
            break
    s = format(decimal.Decimal(s), "f")
    return s if "." in s else s + ".0"


def ty(shape):
    return "f32[" + ",".join(str(d) for d in shape) + "]"


def init(name, p):
    vals = ", ".join(fmt(v) for v in p.values)
    return f"  init %{name}: {ty(p.shape)} = [{vals}]"


def batchnorm(c):
    return {
        "weight": uniform(c, -0.25, 0.25, offset=1.0),
        "bias": uniform(c, -0.25, 0.25),
        "running_mean": uniform(c, -0.5, 0.5),
        "running_var": uniform(c, 0.5, 1.5),
    }


def main():
    inits = {}
    inits["features.0.weight"] = normal((4, 1, 3, 3), (2.0 / 9) ** 0.5)
    inits["features.0.bias"] = normal((4,), 0.1)
    for k, v in batchnorm(4).items():
        inits[f"features.1.{k}"] = v
    inits["features.4.weight"] = normal((8, 4, 3, 3), (2.0 / 36) ** 0.5)
    inits["features.4.bias"] = normal((8,), 0.1)
    for k, v in batchnorm(8).items():
        inits[f"features.5.{k}"] = v
    inits["fc.weight"] = normal((10, 8), (1.0 / 8) ** 0.5)
    inits["fc.bias"] = normal((10,), 0.1)

    def bn_args(i):
        p = f"%features.{i}."
        return ", ".join(p + k for k in
                         ("weight", "bias", "running_mean", "running_var"))

    conv = "{kernel_shape = [3, 3], pads = [1, 1, 1, 1]}"
    nodes = [
        f'%h0: f32[N,4,28,28] = Conv(%x, %features.0.weight, %features.0.bias) '
        f'{conv} scope("features.0", "Conv2d")',
        f'%h1: f32[N,4,28,28] = BatchNormalization(%h0, {bn_args(1)}) '
        f'scope("features.1", "BatchNorm2d")',
        '%h2: f32[N,4,28,28] = Relu(%h1) scope("features.2", "ReLU")',
        '%h3: f32[N,4,14,14] = MaxPool(%h2) '
        '{kernel_shape = [2, 2], strides = [2, 2]} '
        'scope("features.3", "MaxPool2d")',
        f'%h4: f32[N,8,14,14] = Conv(%h3, %features.4.weight, '
        f'%features.4.bias) {conv} scope("features.4", "Conv2d")',
        f'%h5: f32[N,8,14,14] = BatchNormalization(%h4, {bn_args(5)}) '
        f'scope("features.5", "BatchNorm2d")',
        '%h6: f32[N,8,14,14] = Relu(%h5) scope("features.6", "ReLU")',
        '%h7: f32[N,8,1,1] = GlobalAveragePool(%h6) '
        'scope("pool", "AdaptiveAvgPool2d")',
        '%flat: f32[N,8] = Flatten(%h7) scope("flatten", "Flatten")',
        '%y: f32[N,10] = Gemm(%flat, %fc.weight, %fc.bias) {transB = 1} '
        'scope("fc", "Linear")',
    ]

    lines = ['graph "small_cnn" {', "  input %x: f32[N,1,28,28]"]
    lines += [init(k, v) for k, v in inits.items()]
    lines += ["  " + n for n in nodes]
    lines += ["  output %y", "}"]
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "small_cnn.nng")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
