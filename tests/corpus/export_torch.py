"""Exports the corpus's PyTorch models (torchvision's detectors, a
torchaudio Conv-TasNet) to ONNX with Debian's python3-torch 1.13, at test
time, into a cache folder (the build tree's corpus/models): a file that
exists is reused. Random weights (weights=None, weights_backbone=None,
torch.manual_seed(0)), eval mode.

Random weights leave torchvision's detectors with degenerate features (the
BatchNorm layers' running statistics are the defaults, so every proposal
scores about 1/91 and the ranking is all ties); export() therefore first
sets those statistics from two batches of random images through the
backbone (train mode, cumulative average), as calibrating a model would,
and the class logits of RetinaNet and SSDlite are scaled (by 10 and 30) so
that their scores spread out: with torchvision's initialization RetinaNet's
scores stay below its threshold and SSDlite's within 0.003 of each other. The detectors' score thresholds are torchvision's except
Faster R-CNN's (0.0: its best random-weight scores are far below 0.05).

Usage: /usr/bin/python3 tests/corpus/export_torch.py OUT_DIR [NAME...]
"""

import os
import sys
import tempfile
import warnings

NAMES = ["fasterrcnn_mobilenet_v3_large_320_fpn", "retinanet_resnet50_fpn",
         "ssdlite320_mobilenet_v3_large", "convtasnet"]
DETECTOR_SIZE = 320


def _calibrate(model):
    """Sets the backbone's BatchNorm statistics from random images."""
    import torch
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.momentum = None  # a cumulative average
            m.reset_running_stats()
    model.backbone.train()
    with torch.no_grad():
        for _ in range(2):
            model.backbone(torch.randn(4, 3, DETECTOR_SIZE, DETECTOR_SIZE))
    model.eval()


def build(name):
    """(model, example inputs, input names, output names, opset)."""
    import torch
    torch.manual_seed(0)
    if name == "convtasnet":
        from torchaudio.models import ConvTasNet
        model = ConvTasNet(num_sources=2, enc_kernel_size=16,
                           enc_num_feats=128, msk_kernel_size=3,
                           msk_num_feats=64, msk_num_hidden_feats=128,
                           msk_num_layers=4, msk_num_stacks=2).eval()
        return (model, (torch.randn(1, 1, 16000),), ["mixture"],
                ["sources"], 13)
    from torchvision.models import detection
    size = dict(min_size=DETECTOR_SIZE, max_size=DETECTOR_SIZE)
    if name == "fasterrcnn_mobilenet_v3_large_320_fpn":
        model = detection.fasterrcnn_mobilenet_v3_large_320_fpn(
            weights=None, weights_backbone=None, box_score_thresh=0.0)
    elif name == "retinanet_resnet50_fpn":
        model = detection.retinanet_resnet50_fpn(
            weights=None, weights_backbone=None, **size)
    elif name == "ssdlite320_mobilenet_v3_large":
        model = detection.ssdlite320_mobilenet_v3_large(
            weights=None, weights_backbone=None)
    else:
        raise KeyError(f"unknown model '{name}'; known: {', '.join(NAMES)}")
    model.eval()
    _calibrate(model)
    with torch.no_grad():
        if name == "retinanet_resnet50_fpn":
            model.head.classification_head.cls_logits.weight.mul_(10)
        if name == "ssdlite320_mobilenet_v3_large":
            for layer in model.head.classification_head.module_list:
                layer[1].weight.mul_(30)
    image = torch.rand(3, DETECTOR_SIZE, DETECTOR_SIZE)
    # The outputs in the order of the detector's result dict.
    names = (["boxes", "labels", "scores"] if name.startswith("fasterrcnn")
             else ["boxes", "scores", "labels"])
    return model, ([image],), ["image"], names, 11


def export(name, out_dir):
    """The path of NAME's export in out_dir, exporting it when missing
    (written under a temporary name and renamed, so a concurrent or
    interrupted export never leaves half a file)."""
    path = os.path.join(out_dir, name + ".onnx")
    if os.path.exists(path):
        return path
    import torch
    os.makedirs(out_dir, exist_ok=True)
    model, args, inputs, outputs, opset = build(name)
    fd, tmp = tempfile.mkstemp(suffix=".onnx", dir=out_dir)
    os.close(fd)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, args, tmp, opset_version=opset,
                              input_names=inputs, output_names=outputs)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for n in sys.argv[2:] or NAMES:
        print(export(n, sys.argv[1]))
