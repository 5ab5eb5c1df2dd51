#!/usr/bin/env python3
"""Exports the -O2 benchmark models to ONNX (tests/passes/run_o2_models.sh).

Writes resnet18, resnet34, resnet50, mobilenet_v2, vgg11_bn (torchvision,
eval mode, batch 1, 3xSIZExSIZE; vgg11_bn always 3x224x224) and a 4-layer nn.TransformerEncoder
(d_model 256, nhead 4, seq 128, batch_first) and the benchmarks' 3-layer MLP
(784-1024-1024-10, ReLU) as MODEL.onnx into OUT_DIR.
Weights are random with a fixed seed; nothing is downloaded. Exits 3 with
"SKIPPED: reason" when torch or torchvision cannot be imported.

Usage: export_models.py OUT_DIR [--size N] [--opset N] [--only NAME,...]
"""
import argparse
import os
import sys

os.environ.setdefault("OPENBLAS_CORETYPE", "SkylakeX")

try:
    import torch
    import torchvision
except Exception as E:  # ImportError, or a broken BLAS at import time.
    print(f"SKIPPED: cannot import torch/torchvision ({E})")
    sys.exit(3)

VISION = ["resnet18", "resnet34", "resnet50", "mobilenet_v2", "vgg11_bn"]


def visionModel(Name):
    """A torchvision classifier with random weights (no download)."""
    return getattr(torchvision.models, Name)(weights=None)


def transformerModel():
    """A 4-layer encoder, d_model 256, 4 heads, batch-first."""
    Layer = torch.nn.TransformerEncoderLayer(
        d_model=256, nhead=4, dim_feedforward=1024, batch_first=True)
    return torch.nn.TransformerEncoder(Layer, num_layers=4,
                                       enable_nested_tensor=False)


def mlpModel():
    """The benchmarks' MLP: 784-1024-1024-10 with ReLU."""
    return torch.nn.Sequential(
        torch.nn.Linear(784, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 10))


def main():
    P = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    P.add_argument("out_dir")
    P.add_argument("--size", type=int, default=224,
                   help="image height and width of the vision models")
    P.add_argument("--opset", type=int, default=17)
    P.add_argument("--only", default="",
                   help="comma-separated subset of the models")
    A = P.parse_args()
    os.makedirs(A.out_dir, exist_ok=True)
    Names = VISION + ["transformer_encoder", "mlp"]
    if A.only:
        Names = [N for N in Names if N in A.only.split(",")]
    for Name in Names:
        torch.manual_seed(0)
        if Name == "transformer_encoder":
            Model = transformerModel()
            Example = torch.randn(1, 128, 256)
        elif Name == "mlp":
            Model = mlpModel()
            Example = torch.randn(1, 784)
        else:
            Model = visionModel(Name)
            # VGG's AdaptiveAvgPool2d((7, 7)) exports only when 7 divides
            # the feature map (224 / 32 = 7), so VGG keeps 224x224.
            Size = 224 if Name.startswith("vgg") else A.size
            Example = torch.randn(1, 3, Size, Size)
        Model.eval()
        Path = os.path.join(A.out_dir, Name + ".onnx")
        # Grad stays enabled: in eval mode under no_grad, torch 1.13 takes
        # the encoder's fused fast path (aten::_transformer_encoder_layer_fwd),
        # which has no ONNX export; eval mode already disables dropout.
        torch.onnx.export(Model, Example, Path, opset_version=A.opset,
                          input_names=["input"], output_names=["output"],
                          do_constant_folding=False)
        print(f"exported {Path}")


if __name__ == "__main__":
    main()
