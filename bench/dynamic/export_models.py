#!/usr/bin/python3
# ===- export_models.py - The models of the dynamic-shape benchmark --------===#
#
# Exports, with Debian's python3-torch (1.13), random weights
# (torch.manual_seed(0)), eval mode, opset 13:
#
#   encoder   nn.TransformerEncoder, 6 layers of d_model 384, 6 heads,
#             feed-forward 1536, batch_first; input f32[N,S,384] with both
#             the batch N and the sequence length S dynamic.
#   decoder   a GPT-2-style decoder step (8 blocks of d_model 512, 8 heads,
#             MLP 2048, GELU, vocabulary 16384, 1024 positions) with a KV
#             cache: inputs input_ids i64[N,1] and past.L.key/past.L.value
#             f32[N,8,P,64] per block L; outputs logits f32[N,1,16384] and
#             present.L.key/present.L.value f32[N,8,P+1,64] (torch's Concat
#             of past and new keys). The position of the new token is P,
#             read from the cache's shape in the graph.
#
# A model whose file exists already is skipped unless --force. run.py calls
# it.
#
# Usage: /usr/bin/python3 bench/dynamic/export_models.py OUT_DIR
#            [--models encoder,decoder] [--force]
#
# ===----------------------------------------------------------------------===#

import argparse
import math
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from sidebyside import export_all  # noqa: E402

D_MODEL, HEADS, LAYERS, VOCAB, POSITIONS = 512, 8, 8, 16384, 1024


def build_encoder():
    from torch import nn

    import torch

    layer = nn.TransformerEncoderLayer(d_model=384, nhead=6,
                                       dim_feedforward=1536,
                                       batch_first=True, dropout=0.0)
    model = nn.TransformerEncoder(layer, num_layers=6,
                                  enable_nested_tensor=False)
    # The layers are deep copies of one: draw each its own weights, or the
    # exporter stores one set for all six.
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 2:
                bound = 1 / math.sqrt(p.shape[1])
                p.uniform_(-bound, bound)
    return model


def build_decoder():
    import torch
    from torch import nn

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(D_MODEL, 3 * D_MODEL)
            self.c_proj = nn.Linear(D_MODEL, D_MODEL)

        def forward(self, x, past_k, past_v):
            n, t, _ = x.shape
            q, k, v = self.c_attn(x).split(D_MODEL, dim=2)
            heads = lambda y: y.view(n, t, HEADS, D_MODEL // HEADS) \
                .transpose(1, 2)
            q, k, v = heads(q), heads(k), heads(v)
            k = torch.cat([past_k, k], dim=2)
            v = torch.cat([past_v, v], dim=2)
            att = (q @ k.transpose(-2, -1)) / math.sqrt(D_MODEL // HEADS)
            att = att.softmax(dim=-1)
            y = (att @ v).transpose(1, 2).reshape(n, t, D_MODEL)
            return self.c_proj(y), k, v

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(D_MODEL)
            self.attn = Attention()
            self.ln_2 = nn.LayerNorm(D_MODEL)
            self.mlp = nn.Sequential(nn.Linear(D_MODEL, 4 * D_MODEL),
                                     nn.GELU(),
                                     nn.Linear(4 * D_MODEL, D_MODEL))

        def forward(self, x, past_k, past_v):
            a, k, v = self.attn(self.ln_1(x), past_k, past_v)
            x = x + a
            return x + self.mlp(self.ln_2(x)), k, v

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(VOCAB, D_MODEL)
            self.wpe = nn.Embedding(POSITIONS, D_MODEL)
            self.h = nn.ModuleList(Block() for _ in range(LAYERS))
            self.ln_f = nn.LayerNorm(D_MODEL)
            self.lm_head = nn.Linear(D_MODEL, VOCAB, bias=False)

        def forward(self, ids, *past):
            start = past[0].shape[2]
            pos = torch.arange(start, start + ids.shape[1])
            x = self.wte(ids) + self.wpe(pos)
            present = []
            for i, block in enumerate(self.h):
                x, k, v = block(x, past[2 * i], past[2 * i + 1])
                present += [k, v]
            return (self.lm_head(self.ln_f(x)), *present)

    model = Decoder()
    # Larger embeddings than nn.Embedding's N(0, 1) would make every
    # logit the same few tokens; GPT-2's init is N(0, 0.02).
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 2:
                p.normal_(0.0, 0.02)
    return model


def past_names():
    names = []
    for i in range(LAYERS):
        names += [f"past.{i}.key", f"past.{i}.value"]
    return names


def export(name, path):
    import torch

    torch.manual_seed(0)
    tmp = path + ".tmp"
    with warnings.catch_warnings():
        # torch 1.13 warns about dynamic shapes in traced code and the like;
        # none of it changes the export.
        warnings.simplefilter("ignore")
        if name == "encoder":
            model = build_encoder().eval()
            example = torch.rand(2, 16, 384) * 2 - 1
            # Not under no_grad: the encoder's fused fast path has no export.
            torch.onnx.export(model, (example,), tmp, opset_version=13,
                              input_names=["input"], output_names=["output"],
                              dynamic_axes={"input": {0: "N", 1: "S"},
                                            "output": {0: "N", 1: "S"}},
                              do_constant_folding=True)
        else:
            model = build_decoder().eval()
            ids = torch.zeros(2, 1, dtype=torch.int64)
            past = [torch.rand(2, HEADS, 5, D_MODEL // HEADS)
                    for _ in range(2 * LAYERS)]
            inputs = ["input_ids"] + past_names()
            outputs = ["logits"] + [n.replace("past", "present")
                                    for n in past_names()]
            axes = {"input_ids": {0: "N"}, "logits": {0: "N"}}
            for n in past_names():
                axes[n] = {0: "N", 2: "P"}
                axes[n.replace("past", "present")] = {0: "N", 2: "P1"}
            with torch.no_grad():
                torch.onnx.export(model, (ids, *past), tmp, opset_version=13,
                                  input_names=inputs, output_names=outputs,
                                  dynamic_axes=axes, do_constant_folding=True)
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser(
        description="Export the models of the dynamic-shape benchmark.")
    parser.add_argument("out_dir", help="folder for the .onnx files")
    parser.add_argument("--models", default="encoder,decoder",
                        help="comma-separated: encoder, decoder")
    parser.add_argument("--force", action="store_true",
                        help="export again even when the file exists")
    args = parser.parse_args()
    names = [m for m in args.models.split(",") if m]
    unknown = [m for m in names if m not in ("encoder", "decoder")]
    if unknown:
        sys.exit(f"export_models: unknown model(s) {', '.join(unknown)}; "
                 "known: encoder, decoder")
    export_all("export_models", names, args.out_dir, args.force, export)

if __name__ == "__main__":
    main()
