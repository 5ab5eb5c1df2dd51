#!/usr/bin/env python3
"""Exports small transformer models whose attention fuse-attention must find.

Used by tests/frontend/TorchAttentionTest.cpp. With a fixed seed (random
weights, eval mode, opset 13, as bench/dynamic/export_models.py exports its
models, only smaller), writes into OUT_DIR:

  encoder.onnx         nn.TransformerEncoder, 2 layers of d_model 32, 4 heads,
                       batch_first; input f32[N,S,32], N and S dynamic
  encoder_mask.onnx    the same called with a float causal mask [S,S]
                       (an input, so torch's baddbmm exports the Add)
  decoder.onnx         a GPT-2-style step with a KV cache: 2 blocks of
                       d_model 32, 4 heads; inputs x f32[N,T,32] and
                       past.L.key/value f32[N,4,P,8]; outputs y and
                       present.L.key/value f32[N,4,P+T,8]

Exits with status 77 and a line "SKIP: <reason>" when torch cannot be
imported.

Usage: export_attention.py OUT_DIR
"""

import math
import os
import sys
import warnings

SKIP_STATUS = 77
D, HEADS, LAYERS = 32, 4, 2


def encoder(torch, nn):
    layer = nn.TransformerEncoderLayer(d_model=D, nhead=HEADS,
                                       dim_feedforward=64, batch_first=True,
                                       dropout=0.0)
    model = nn.TransformerEncoder(layer, num_layers=LAYERS,
                                  enable_nested_tensor=False)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 2:
                bound = 1 / math.sqrt(p.shape[1])
                p.uniform_(-bound, bound)
    return model.eval()


def decoder(torch, nn):
    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(D, 3 * D)
            self.c_proj = nn.Linear(D, D)

        def forward(self, x, past_k, past_v):
            n, t, _ = x.shape
            q, k, v = self.c_attn(x).split(D, dim=2)
            heads = lambda y: y.view(n, t, HEADS, D // HEADS).transpose(1, 2)
            q, k, v = heads(q), heads(k), heads(v)
            k = torch.cat([past_k, k], dim=2)
            v = torch.cat([past_v, v], dim=2)
            att = (q @ k.transpose(-2, -1)) / math.sqrt(D // HEADS)
            att = att.softmax(dim=-1)
            y = (att @ v).transpose(1, 2).reshape(n, t, D)
            return self.c_proj(y), k, v

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(D)
            self.attn = Attention()

        def forward(self, x, past_k, past_v):
            a, k, v = self.attn(self.ln(x), past_k, past_v)
            return x + a, k, v

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.h = nn.ModuleList(Block() for _ in range(LAYERS))

        def forward(self, x, *past):
            present = []
            for i, block in enumerate(self.h):
                x, k, v = block(x, past[2 * i], past[2 * i + 1])
                present += [k, v]
            return (x, *present)

    return Decoder().eval()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: export_attention.py OUT_DIR")
    out = sys.argv[1]
    try:
        import torch
        from torch import nn
    except Exception as e:  # noqa: BLE001 - any import failure skips
        print(f"SKIP: cannot import torch: {e}")
        sys.exit(SKIP_STATUS)
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        enc = encoder(torch, nn)
        x = torch.rand(2, 5, D) * 2 - 1
        axes = {"x": {0: "N", 1: "S"}, "y": {0: "N", 1: "S"}}
        torch.onnx.export(enc, (x,), os.path.join(out, "encoder.onnx"),
                          opset_version=13, input_names=["x"],
                          output_names=["y"], dynamic_axes=axes,
                          do_constant_folding=True)

        class Masked(nn.Module):
            def __init__(self, enc):
                super().__init__()
                self.enc = enc

            def forward(self, x, mask):
                return self.enc(x, mask=mask)

        mask = torch.triu(torch.full((5, 5), -1e4), diagonal=1)
        axes_m = dict(axes, mask={0: "S", 1: "S"})
        torch.onnx.export(Masked(enc).eval(), (x, mask),
                          os.path.join(out, "encoder_mask.onnx"),
                          opset_version=13, input_names=["x", "mask"],
                          output_names=["y"], dynamic_axes=axes_m,
                          do_constant_folding=True)

        dec = decoder(torch, nn)
        past = [torch.rand(2, HEADS, 3, D // HEADS) for _ in range(2 * LAYERS)]
        names = []
        for i in range(LAYERS):
            names += [f"past.{i}.key", f"past.{i}.value"]
        outs = ["y"] + [n.replace("past", "present") for n in names]
        axes_d = {"x": {0: "N", 1: "T"}, "y": {0: "N", 1: "T"}}
        for n in names:
            axes_d[n] = {0: "N", 2: "P"}
            axes_d[n.replace("past", "present")] = {0: "N", 2: "P1"}
        with torch.no_grad():
            torch.onnx.export(dec, (torch.rand(2, 1, D), *past),
                              os.path.join(out, "decoder.onnx"),
                              opset_version=13, input_names=["x"] + names,
                              output_names=outs, dynamic_axes=axes_d,
                              do_constant_folding=True)
    print("exported encoder.onnx, encoder_mask.onnx, decoder.onnx")


if __name__ == "__main__":
    main()
