#!/usr/bin/env python3
"""Exports a randomly initialized torchvision resnet18 to ONNX with reference data.

Used by tests/frontend/TorchResnetTest.cpp. Builds resnet18 with a fixed seed
(no pretrained weights, nothing downloaded), gives its batch norms non-trivial
running statistics and affine parameters (also seeded), puts it in eval mode
and exports it with torch.onnx.export at opset 17 with a dynamic batch axis
("N"). Writes into OUT_DIR:

  resnet18.onnx                the model
  input_b1.pb, output_b1.pb    a deterministic batch-1 input and PyTorch's output
  input_b2.pb, output_b2.pb    the same for batch 2

Tensors are ONNX TensorProto files (the ONNX test-data format). Exits with
status 77 and a line "SKIP: <reason>" when torch, torchvision or onnx cannot
be imported.

Usage: export_resnet18.py OUT_DIR [--size PIXELS] [--opset N]
"""

import argparse
import os
import sys
import time

SKIP_STATUS = 77


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--size", type=int, default=224,
                        help="input height and width (default 224)")
    parser.add_argument("--opset", type=int, default=17)
    args = parser.parse_args()

    try:
        import torch
        import torchvision
        from onnx import numpy_helper
    except Exception as exc:  # ImportError, or a broken install
        print(f"SKIP: cannot import torch/torchvision/onnx with {sys.executable}: "
              f"{type(exc).__name__}: {exc}")
        return SKIP_STATUS

    start = time.time()
    torch.manual_seed(0)
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    model = torchvision.models.resnet18(weights=None)
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                c = module.num_features
                module.running_mean.copy_(0.1 * torch.randn(c, generator=gen))
                module.running_var.copy_(0.5 + torch.rand(c, generator=gen))
                module.weight.copy_(0.5 + torch.rand(c, generator=gen))
                module.bias.copy_(0.1 * torch.randn(c, generator=gen))
    model.eval()

    os.makedirs(args.out_dir, exist_ok=True)
    x2 = torch.randn(2, 3, args.size, args.size, generator=gen)
    x1 = x2[:1].clone()
    torch.onnx.export(model, x1, os.path.join(args.out_dir, "resnet18.onnx"),
                      opset_version=args.opset, input_names=["input"],
                      output_names=["logits"],
                      dynamic_axes={"input": {0: "N"}, "logits": {0: "N"}},
                      do_constant_folding=True)

    def save(tensor, name):
        proto = numpy_helper.from_array(tensor.detach().numpy(), name)
        with open(os.path.join(args.out_dir, name + ".pb"), "wb") as f:
            f.write(proto.SerializeToString())

    with torch.no_grad():
        for batch, x in ((1, x1), (2, x2)):
            y = model(x)
            save(x, f"input_b{batch}")
            save(y, f"output_b{batch}")
            print(f"batch {batch}: output {tuple(y.shape)}, "
                  f"max |y| {y.abs().max().item():.4g}")
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}: "
          f"exported resnet18 ({args.size}x{args.size}, opset {args.opset}) "
          f"in {time.time() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
