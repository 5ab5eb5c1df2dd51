#!/usr/bin/python3
# ===- export_models.py - The models of the nngraph cpu vs ORT benchmark ---===#
#
# Exports the five models that bench/cpu_vs_ort/run.py times to ONNX with
# Debian's python3-torch (1.13) and torchvision: random weights
# (torch.manual_seed(0)), eval mode, opset 13, constant folding on, and the
# batch dim of the one input dynamic and named "N":
#
#   mlp           784-1024-1024-10 (Linear, ReLU, Linear, ReLU, Linear),
#                 input f32[N,784]
#   transformer   nn.TransformerEncoder, 4 layers of d_model 256, 4 heads,
#                 feed-forward 1024, batch_first, no dropout; input
#                 f32[N,128,256]
#   resnet18, mobilenet_v2, resnet50
#                 torchvision.models with weights=None; input f32[N,3,224,224]
#
# A model whose file exists already is skipped unless --force. Run it with
# /usr/bin/python3 (Debian's torch); run.py calls it.
#
# Usage: /usr/bin/python3 bench/cpu_vs_ort/export_models.py OUT_DIR
#            [--models mlp,transformer,...] [--force]
#
# ===----------------------------------------------------------------------===#

import argparse
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from sidebyside import export_all  # noqa: E402

# name -> (input shape after the batch dim)
MODELS = {
    "mlp": (784,),
    "transformer": (128, 256),
    "resnet18": (3, 224, 224),
    "mobilenet_v2": (3, 224, 224),
    "resnet50": (3, 224, 224),
}
# Exported on request only (--models), not part of the cpu vs ORT table:
# the pruning benchmark (bench/prune/run.py) uses them too.
EXTRA_MODELS = {
    "vgg11_bn": (3, 224, 224),
    "efficientnet_b0": (3, 224, 224),  # squeeze-excitation, depthwise, SiLU
}
SHAPES = {**MODELS, **EXTRA_MODELS}


def build_model(name):
    import torch
    from torch import nn

    if name == "mlp":
        return nn.Sequential(nn.Linear(784, 1024), nn.ReLU(),
                             nn.Linear(1024, 1024), nn.ReLU(),
                             nn.Linear(1024, 10))
    if name == "transformer":
        layer = nn.TransformerEncoderLayer(d_model=256, nhead=4,
                                           dim_feedforward=1024,
                                           batch_first=True, dropout=0.0)
        # enable_nested_tensor only matters with a padding mask; off, so
        # that torch does not warn about it.
        return nn.TransformerEncoder(layer, num_layers=4,
                                     enable_nested_tensor=False)
    import torchvision
    return getattr(torchvision.models, name)(weights=None)


def export(name, path):
    import torch

    torch.manual_seed(0)
    model = build_model(name).eval()
    example = torch.rand((2,) + SHAPES[name]) * 2 - 1
    tmp = path + ".tmp"
    # Not under torch.no_grad(): with autograd off, an eval-mode
    # TransformerEncoderLayer takes its fused fast path
    # (aten::_transformer_encoder_layer_fwd), which has no ONNX export.
    with warnings.catch_warnings():
        # torch 1.13 warns about dynamic shapes in traced code and the like;
        # none of it changes the export.
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (example,), tmp, opset_version=13,
                          input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {0: "N"},
                                        "output": {0: "N"}},
                          do_constant_folding=True)
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser(
        description="Export the models of the nngraph cpu vs ORT benchmark.")
    parser.add_argument("out_dir", help="folder for the .onnx files")
    parser.add_argument("--models", default=",".join(MODELS),
                        help="comma-separated list; default: all of "
                        + ", ".join(MODELS) + "; also: "
                        + ", ".join(EXTRA_MODELS))
    parser.add_argument("--force", action="store_true",
                        help="export again even when the file exists")
    args = parser.parse_args()

    names = [m for m in args.models.split(",") if m]
    unknown = [m for m in names if m not in SHAPES]
    if unknown:
        sys.exit(f"export_models: unknown model(s) {', '.join(unknown)}; "
                 f"known: {', '.join(SHAPES)}")
    export_all("export_models", names, args.out_dir, args.force, export)

if __name__ == "__main__":
    main()
