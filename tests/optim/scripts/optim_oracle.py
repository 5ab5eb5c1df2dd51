#!/usr/bin/env python3
"""PyTorch oracle for tests/optim: runs named cases of torch.optim and
writes what each did to OUT_DIR/CASE.txt, a text file that OracleCase.h
reads.

usage: optim_oracle.py OUT_DIR [CASE...]   (no CASE: every case)

Optimizer cases: three float32 parameters (shapes [3, 4], [5], [2, 3]) and
five steps of per-step gradients from a seeded generator; parameter 1 has no
gradient on step 2 (the step must skip it). The file holds the initial
parameters, the gradients, the parameters after every step and the final
optimizer.state_dict(). Scheduler cases: 30 epochs of learning rates (and
the optional lr changes made by other code) plus both state_dicts.

Exits with status 77 when torch cannot be imported (the test then SKIPs).
"""
import os
import sys

try:
    import torch
except Exception as e:  # noqa: BLE001
    print("SKIPPED: cannot import torch with %s: %s" % (sys.executable, e))
    sys.exit(77)

STEPS = 5
SHAPES = [(3, 4), (5,), (2, 3)]

# name -> (optimizer class, defaults, groups as lists of (param indices,
# overrides) or None for one group of all parameters)
OPTIMIZER_CASES = {
    "sgd_plain": ("SGD", dict(lr=0.1), None),
    "sgd_momentum": ("SGD", dict(lr=0.05, momentum=0.9), None),
    "sgd_dampening_wd": ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3,
                                     weight_decay=0.01), None),
    "sgd_nesterov": ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True,
                                 weight_decay=0.02), None),
    "sgd_maximize": ("SGD", dict(lr=0.05, momentum=0.5, maximize=True), None),
    "sgd_groups": ("SGD", dict(lr=0.1, momentum=0.9),
                   [([0, 1], {}), ([2], dict(lr=0.01, momentum=0.5))]),
    "adam": ("Adam", dict(lr=0.01), None),
    "adam_amsgrad_wd": ("Adam", dict(lr=0.01, betas=(0.8, 0.99),
                                     weight_decay=0.05, amsgrad=True), None),
    "adam_maximize": ("Adam", dict(lr=0.01, eps=1e-6, maximize=True), None),
    "adam_groups": ("Adam", dict(lr=0.01),
                    [([0], {}), ([1, 2], dict(lr=0.001, weight_decay=0.1))]),
    "adamw": ("AdamW", dict(lr=0.01), None),
    "adamw_amsgrad": ("AdamW", dict(lr=0.02, weight_decay=0.1, amsgrad=True),
                      None),
    "adamw_groups": ("AdamW", dict(lr=0.01),
                     [([0, 2], dict(weight_decay=0.0)), ([1], dict(lr=0.05))]),
}

# name -> (scheduler, kwargs, group lrs, {epoch: {group: new lr}} set by
# "other code" before that epoch's step, resume: initial_lr and last_epoch)
SCHEDULER_CASES = {
    "steplr": ("StepLR", dict(step_size=7, gamma=0.5), [0.1, 0.05], {}, None),
    "steplr_external": ("StepLR", dict(step_size=3, gamma=0.9), [0.1],
                        {10: {0: 0.2}}, None),
    "cosine": ("CosineAnnealingLR", dict(T_max=10, eta_min=0.001),
               [0.1, 0.05], {}, None),
    "cosine_external": ("CosineAnnealingLR", dict(T_max=7, eta_min=0.0),
                        [0.1], {5: {0: 0.02}, 17: {0: 0.3}}, None),
    "cosine_resume": ("CosineAnnealingLR", dict(T_max=10, eta_min=0.0),
                      [0.1], {}, 4),
}


def fmt(x):
    return repr(float(x))


def tensor_line(t):
    t = t.detach().contiguous()
    dims = list(t.shape)
    vals = t.reshape(-1).tolist()
    return " ".join([str(len(dims))] + [str(d) for d in dims] +
                    [fmt(v) for v in vals])


def value_line(v):
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "bool %d" % int(v)
    if isinstance(v, int):
        return "int %d" % v
    if isinstance(v, float):
        return "float " + fmt(v)
    if isinstance(v, (tuple, list)):
        return "tuple %d %s" % (len(v), " ".join(fmt(x) for x in v))
    raise TypeError("unexpected option value %r" % (v,))


def write_optimizer_state(out, opt):
    sd = opt.state_dict()
    for g, group in enumerate(sd["param_groups"]):
        out.append("group %d %s" % (g, " ".join(
            [str(len(group["params"]))] + [str(i) for i in group["params"]])))
        for key, value in group.items():
            if key != "params":
                out.append("option %d %s %s" % (g, key, value_line(value)))
    for index, state in sd["state"].items():
        for key, value in state.items():
            if isinstance(value, torch.Tensor):
                out.append("state %d %s tensor %s" % (index, key,
                                                      tensor_line(value)))
            elif value is None:
                out.append("state %d %s none" % (index, key))
            else:
                out.append("state %d %s number %s" % (index, key, fmt(value)))


def run_optimizer_case(name):
    cls, defaults, groups = OPTIMIZER_CASES[name]
    gen = torch.Generator().manual_seed(1234)
    params = [torch.randn(s, generator=gen).requires_grad_() for s in SHAPES]
    grads = [[None if (step == 2 and i == 1) else torch.randn(s, generator=gen)
              for i, s in enumerate(SHAPES)] for step in range(STEPS)]
    out = []
    for i, p in enumerate(params):
        out.append("param %d %s" % (i, tensor_line(p)))
    if groups is None:
        arg = params
    else:
        arg = [dict(params=[params[i] for i in idx], **over)
               for idx, over in groups]
    opt = getattr(torch.optim, cls)(arg, **defaults)
    for step in range(STEPS):
        for i, p in enumerate(params):
            p.grad = grads[step][i]
            out.append("grad %d %d %s" % (step, i, "none" if grads[step][i] is None
                                          else tensor_line(grads[step][i])))
        opt.step()
        for i, p in enumerate(params):
            out.append("after %d %d %s" % (step, i, tensor_line(p)))
    write_optimizer_state(out, opt)
    return out


def run_scheduler_case(name):
    cls, kwargs, lrs, external, resume = SCHEDULER_CASES[name]
    params = [torch.zeros(2, requires_grad=True) for _ in lrs]
    groups = [dict(params=[p], lr=lr) for p, lr in zip(params, lrs)]
    if resume is not None:
        for g in groups:
            g["initial_lr"] = g["lr"]
    opt = torch.optim.SGD(groups, lr=lrs[0])
    last_epoch = -1 if resume is None else resume
    sched = getattr(torch.optim.lr_scheduler, cls)(opt, last_epoch=last_epoch,
                                                   **kwargs)
    out = ["lr 0 " + " ".join(fmt(x) for x in sched.get_last_lr())]
    for epoch in range(1, 31):
        for g, lr in external.get(epoch, {}).items():
            opt.param_groups[g]["lr"] = lr
        opt.step()  # No gradients: a no-op that keeps the call order.
        sched.step()
        out.append("lr %d %s" % (epoch, " ".join(fmt(x) for x in
                                                  sched.get_last_lr())))
    for key, value in sched.state_dict().items():
        out.append("sched %s %s" % (key, value_line(value)))
    write_optimizer_state(out, opt)
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: optim_oracle.py OUT_DIR [CASE...]")
    out_dir = sys.argv[1]
    names = sys.argv[2:] or list(OPTIMIZER_CASES) + list(SCHEDULER_CASES)
    torch.set_num_threads(1)
    for name in names:
        if name in OPTIMIZER_CASES:
            lines = run_optimizer_case(name)
        elif name in SCHEDULER_CASES:
            lines = run_scheduler_case(name)
        else:
            sys.exit("unknown case %r; known: %s" % (
                name, ", ".join(list(OPTIMIZER_CASES) + list(SCHEDULER_CASES))))
        with open(os.path.join(out_dir, name + ".txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
    print("torch %s: wrote %d cases to %s" % (torch.__version__, len(names),
                                              out_dir))


if __name__ == "__main__":
    main()
