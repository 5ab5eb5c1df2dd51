#!/usr/bin/env python3
"""PyTorch side of the GPT-2 test (tests/zoo/GPT2Test.cpp).

  gpt2_reference.py DIR

DIR/config.json (written by the C++ test) holds the GPT-2 sizes
(vocab_size, n_positions, n_embd, n_layer, n_head, layer_norm_epsilon),
the number of greedy steps and the prompt as a raw tensor file; DIR/state.pt
is the C++ model's state dict (nng::weights::saveWeights). The script builds
the same GPT-2 architecture in plain torch (the transformers package is not
needed: the model below follows GPT2LMHeadModel's module names, Conv1D
weights [in, out], gelu with the tanh approximation, lm_head tied to wte),
loads state.pt with torch.load(weights_only=True) and
load_state_dict(strict=True), and decodes greedily with a key/value cache:
step 0 runs the prompt from an empty cache, each later step the previous
step's token with the cache the step before returned. It writes
DIR/torch.json: the tokens ([N, steps]) and the logits of every step as raw
files (step 0: [N, T, V], then [N, 1, V]).

Exit status 77: torch cannot be imported (the test SKIPs).
Tensor files are raw little-endian with nngraph's dtype names (f32, i64).
"""
import json
import math
import os
import sys

try:
    import numpy as np
    import torch
    from torch import nn
except Exception as e:  # pragma: no cover - depends on the machine
    print(f"cannot import torch and numpy with {sys.executable}: {e}")
    sys.exit(77)

NP_DTYPES = {"f32": np.float32, "i64": np.int64}
NAMES = {torch.float32: "f32", torch.int64: "i64"}


class Conv1D(nn.Module):
    """GPT-2's projection: weight [nx, nf], y = x @ weight + bias."""

    def __init__(self, nf, nx):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(nx, nf).normal_(std=0.02))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        return torch.addmm(self.bias, x.reshape(-1, x.size(-1)),
                           self.weight).view(*x.shape[:-1], -1)


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.n_embd, self.n_head = cfg["n_embd"], cfg["n_head"]
        self.c_attn = Conv1D(3 * self.n_embd, self.n_embd)
        self.c_proj = Conv1D(self.n_embd, self.n_embd)

    def forward(self, x, past_key, past_value, future):
        n, t, _ = x.shape
        dh = self.n_embd // self.n_head
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q, k, v = (y.view(n, t, self.n_head, dh).transpose(1, 2)
                   for y in (q, k, v))
        if past_key is not None:
            k = torch.cat([past_key, k], dim=2)
            v = torch.cat([past_value, v], dim=2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(dh)
        scores = scores.masked_fill(future, float("-inf"))
        out = scores.softmax(-1) @ v
        out = out.transpose(1, 2).reshape(n, t, self.n_embd)
        return self.c_proj(out), k, v


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["n_embd"]
        self.c_fc = Conv1D(4 * d, d)
        self.act = nn.GELU(approximate="tanh")
        self.c_proj = Conv1D(d, 4 * d)

    def forward(self, x):
        return self.c_proj(self.act(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, eps = cfg["n_embd"], cfg["layer_norm_epsilon"]
        self.ln_1 = nn.LayerNorm(d, eps=eps)
        self.attn = Attention(cfg)
        self.ln_2 = nn.LayerNorm(d, eps=eps)
        self.mlp = MLP(cfg)

    def forward(self, x, past_key, past_value, future):
        a, k, v = self.attn(self.ln_1(x), past_key, past_value, future)
        x = x + a
        return x + self.mlp(self.ln_2(x)), k, v


class GPT2Model(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["n_embd"]
        self.wte = nn.Embedding(cfg["vocab_size"], d)
        self.wpe = nn.Embedding(cfg["n_positions"], d)
        self.h = nn.ModuleList(Block(cfg) for _ in range(cfg["n_layer"]))
        self.ln_f = nn.LayerNorm(d, eps=cfg["layer_norm_epsilon"])

    def forward(self, ids, past):
        t = ids.size(1)
        p = 0 if past is None else past[0].size(2)
        pos = torch.arange(p, p + t)
        future = torch.arange(p + t)[None, :] > pos[:, None]
        x = self.wte(ids) + self.wpe(pos)[None]
        presents = []
        for i, block in enumerate(self.h):
            pk = None if past is None else past[2 * i]
            pv = None if past is None else past[2 * i + 1]
            x, k, v = block(x, pk, pv, future)
            presents += [k, v]
        return self.ln_f(x), presents


class GPT2LMHeadModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.transformer = GPT2Model(cfg)
        self.lm_head = nn.Linear(cfg["n_embd"], cfg["vocab_size"], bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # tied

    def forward(self, ids, past=None):
        h, presents = self.transformer(ids, past)
        return self.lm_head(h), presents


def save_raw(t, folder, file):
    t = t.detach().contiguous()
    t.numpy().tofile(os.path.join(folder, file))
    return {"file": file, "dtype": NAMES[t.dtype], "shape": list(t.shape)}


def load_raw(ref, folder):
    arr = np.fromfile(os.path.join(folder, ref["file"]),
                      dtype=NP_DTYPES[ref["dtype"]])
    return torch.from_numpy(arr.reshape(ref["shape"]).copy())


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    torch.set_num_threads(2)
    folder = sys.argv[1]
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    model = GPT2LMHeadModel(cfg)
    sd = torch.load(os.path.join(folder, "state.pt"), weights_only=True)
    model.load_state_dict(sd, strict=True)
    if list(sd.keys()) != list(model.state_dict().keys()):
        print(f"key order differs: C++ {list(sd.keys())[:6]}..., "
              f"torch {list(model.state_dict().keys())[:6]}...")
        return 1
    model.eval()
    ids = load_raw(cfg["prompt"], folder)
    tokens, logits_refs, past = [], [], None
    with torch.no_grad():
        for step in range(cfg["steps"]):
            logits, past = model(ids, past)
            logits_refs.append(save_raw(logits, folder, f"logits{step}.bin"))
            ids = logits[:, -1].argmax(-1, keepdim=True)
            tokens.append(ids)
    out = {"torch": torch.__version__,
           "tokens": torch.cat(tokens, 1).tolist(), "logits": logits_refs}
    with open(os.path.join(folder, "torch.json"), "w") as f:
        json.dump(out, f)
    print(f"gpt2: {cfg['steps']} greedy steps, tokens {out['tokens']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
