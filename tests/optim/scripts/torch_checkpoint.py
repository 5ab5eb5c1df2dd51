#!/usr/bin/env python3
"""torch_checkpoint.py - resumes training in PyTorch from an nngraph checkpoint.

Usage: torch_checkpoint.py KIND DIR

DIR/model.pt holds {'w', 'b', 'x', 'y'} (written by nngraph's weights::writePt)
and DIR/opt.pt what nngraph's optim::save wrote for the optimizer KIND (sgd,
adam, adamw) with a StepLR(step_size=2, gamma=0.5): {'optimizer': ...,
'scheduler': ...}. The script builds the same optimizer and scheduler over w
and b, loads both state dicts with PyTorch's own load_state_dict, takes 3
steps of loss = mean((x @ w + b - y)^2), saves DIR/mid.pt as a PyTorch
training script would ({'model': {'w', 'b'}, 'optimizer': ..., 'scheduler':
...}), takes 2 more steps and saves DIR/final.pt ({'w', 'b', 'lr'}).
Exits 77 when torch is missing.
"""
import sys

try:
    import torch
except ImportError as e:  # The caller SKIPs with this reason.
    print(f"cannot import torch: {e}")
    sys.exit(77)


def make(kind, params):
    if kind == "sgd":
        return torch.optim.SGD(params, lr=0.1, momentum=0.9)
    if kind == "adam":
        return torch.optim.Adam(params, lr=0.01)
    if kind == "adamw":
        return torch.optim.AdamW(params, lr=0.01, weight_decay=0.1)
    raise SystemExit(f"unknown optimizer kind {kind}")


def main():
    kind, folder = sys.argv[1], sys.argv[2]
    model = torch.load(f"{folder}/model.pt")
    w = model["w"].clone().requires_grad_()
    b = model["b"].clone().requires_grad_()
    x, y = model["x"], model["y"]
    opt = make(kind, [w, b])
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    ckpt = torch.load(f"{folder}/opt.pt")
    opt.load_state_dict(ckpt["optimizer"])
    sched.load_state_dict(ckpt["scheduler"])

    def step():
        opt.zero_grad()
        loss = ((x @ w + b - y) ** 2).mean()
        loss.backward()
        opt.step()
        sched.step()

    for _ in range(3):
        step()
    torch.save({"model": {"w": w.detach(), "b": b.detach()},
                "optimizer": opt.state_dict(),
                "scheduler": sched.state_dict()}, f"{folder}/mid.pt")
    for _ in range(2):
        step()
    torch.save({"w": w.detach(), "b": b.detach(),
                "lr": torch.tensor(sched.get_last_lr(), dtype=torch.float64)},
               f"{folder}/final.pt")


if __name__ == "__main__":
    main()
