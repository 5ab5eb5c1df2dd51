"""How the corpus tests compare nngraph's outputs with ONNX Runtime's:
elementwise within rtol/atol (as numpy.allclose; integers exactly), and
detections (boxes, labels, scores) matched after sorting by score."""

import numpy as np


def max_abs_diff(a, b):
    if a.size == 0:
        return 0.0
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))


def compare_plain(ours, theirs, rtol, atol, max_off=0.0):
    """Problems (strings) of outputs `ours` against `theirs` (dicts of name
    to array), and the max abs diff of each output. A float output may
    have up to max_off (a fraction of its values) outside rtol/atol: a
    quantized network where a 1-ulp difference flips a few roundings."""
    problems, diffs = [], {}
    for name, want in theirs.items():
        got = ours.get(name)
        if got is None:
            problems.append(f"output '{name}' missing")
            continue
        if got.shape != want.shape:
            problems.append(f"'{name}': shape {got.shape}, ONNX Runtime "
                            f"{want.shape}")
            continue
        diffs[name] = max_abs_diff(got, want)
        if want.dtype.kind in "iub":
            if not np.array_equal(got, want):
                problems.append(f"'{name}': {int(np.sum(got != want))} of "
                                f"{want.size} integers differ")
        elif not np.allclose(got, want, rtol=rtol, atol=atol):
            bad = int((~np.isclose(got, want, rtol=rtol, atol=atol)).sum())
            if bad > max_off * want.size:
                problems.append(
                    f"'{name}': {bad} of {want.size} values off (max abs "
                    f"diff {diffs[name]:.3g}, rtol {rtol}, atol {atol}"
                    + (f", at most {max_off:g} of them may be" if max_off
                       else "") + ")")
    return problems, diffs


def _sorted(d):
    order = np.argsort(-d["scores"], kind="stable")
    return d["boxes"][order], d["labels"][order], d["scores"][order]


def compare_detections(ours, theirs, score_tol, box_tol, top):
    """Matches each of ONNX Runtime's `top` best detections (by descending
    score) with an unused one of ours of the same label, score within
    score_tol and box corners within box_tol (pixels). Greedy NMS and the
    final top-k keep a detection by the detections scored above it only,
    so the best ones do not depend on rounding further down. A detection
    left unmatched at the cut (its score within score_tol of the lowest one
    compared, where either of two near equals may make the top) is counted
    apart and allowed. Returns problems (strings) and a summary dict: the
    counts, matched, at the cut, max score and box diffs of the matches."""
    bt, lt, st = _sorted(theirs)
    bo, lo, so = _sorted(ours)
    n = min(top, len(st))
    floor = st[n - 1] if n else 0.0
    used = np.zeros(len(so), bool)
    matched, at_cut, unmatched = 0, 0, 0
    max_ds, max_db = 0.0, 0.0
    for i in range(n):
        ok = (~used) & (lo == lt[i]) & (np.abs(so - st[i]) <= score_tol)
        if ok.any():
            ok &= np.abs(bo - bt[i]).max(axis=1) <= box_tol
        if ok.any():
            j = int(np.flatnonzero(ok)[np.argmin(np.abs(so[ok] - st[i]))])
            used[j] = True
            matched += 1
            max_ds = max(max_ds, float(abs(so[j] - st[i])))
            max_db = max(max_db, float(np.abs(bo[j] - bt[i]).max()))
        elif st[i] - floor <= score_tol:
            at_cut += 1
        else:
            unmatched += 1
    extra = int(np.sum(~used & (so > floor + score_tol)))
    problems = []
    if n == 0:
        problems.append("ONNX Runtime found no detections to compare")
    if unmatched or extra:
        problems.append(f"{unmatched} of ONNX Runtime's {n} best detections "
                        f"have no match in nngraph's, and {extra} of "
                        "nngraph's scored above the last of them none in "
                        f"ONNX Runtime's (score tolerance {score_tol}, box "
                        f"tolerance {box_tol} px)")
    summary = {"count": (len(so), len(st)), "compared": n,
               "matched": matched, "at_cut": at_cut,
               "max_score_diff": max_ds, "max_box_diff": max_db}
    return problems, summary
