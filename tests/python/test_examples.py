"""The documented way in, end to end: a fresh virtualenv (python3 -m venv
--system-site-packages, so that Debian's NumPy and PyTorch are seen), the
package installed into it with `cmake --install BUILD --component python
--prefix VENV`, `import nngraph` from there (not from the build tree) with
its package metadata, and
then the documentation's code run verbatim in an empty folder with the
virtualenv's python:

    test_examples.py docs     every ```python block of docs/python.md, in order
    test_examples.py readme   the ```python block of README.md (needs torch
                              and torchvision: SKIPPED without them)
"""

import os
import re
import subprocess
import sys
import tempfile

import support


def code_blocks(path):
    with open(path, encoding="utf-8") as f:
        return re.findall(r"```python\n(.*?)```", f.read(), re.S)


def run(cmd, **kw):
    print("$", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, **kw)
    print(r.stdout, end="", flush=True)
    if r.returncode != 0:
        sys.exit(f"FAILED: exit status {r.returncode}")
    return r.stdout


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "docs"
    if mode == "readme":
        support.require("torch", "python3-torch")
        support.require("torchvision", "python3-torchvision")
        blocks = code_blocks(os.path.join(support.SOURCE_DIR, "README.md"))
        if len(blocks) != 1:
            sys.exit(f"FAILED: README.md has {len(blocks)} python blocks, expected 1")
    elif mode == "docs":
        support.require("numpy", "python3-numpy")
        blocks = code_blocks(os.path.join(support.SOURCE_DIR, "docs", "python.md"))
        if not blocks:
            sys.exit("FAILED: docs/python.md has no python blocks")
    else:
        sys.exit(f"usage: {sys.argv[0]} docs|readme")
    cmake = os.environ.get("CMAKE_COMMAND", "cmake")

    with tempfile.TemporaryDirectory() as tmp:
        venv = os.path.join(tmp, "venv")
        # --without-pip: nothing is downloaded or needed from ensurepip.
        run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv])
        run([cmake, "--install", support.BUILD_DIR, "--component", "python",
             "--prefix", venv])
        python = os.path.join(venv, "bin", "python")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        out = run([python, "-c", "import nngraph, sys, importlib.metadata as m; "
                   "print(nngraph.__file__); "
                   "print(m.version('nngraph') == nngraph.__version__, "
                   "nngraph.__file__.startswith(sys.prefix))"], env=env, cwd=tmp)
        if not out.rstrip().endswith("True True"):
            sys.exit("FAILED: nngraph was not imported from the virtualenv, "
                     "or its metadata (nngraph-VERSION.dist-info) is missing")
        if mode == "docs":
            # A prefix that is no virtualenv and has Debian's dist-packages
            # (as /usr/local has) gets the package there.
            prefix = os.path.join(tmp, "usr-local")
            dist = os.path.join(prefix, "lib", "python%d.%d" % sys.version_info[:2],
                                "dist-packages")
            os.makedirs(dist)
            run([cmake, "--install", support.BUILD_DIR, "--component", "python",
                 "--prefix", prefix])
            if not os.path.exists(os.path.join(dist, "nngraph", "__init__.py")):
                sys.exit(f"FAILED: nothing installed into {dist}")
        work = os.path.join(tmp, "work")
        os.mkdir(work)
        script = os.path.join(tmp, "example.py")
        with open(script, "w", encoding="utf-8") as f:
            f.write("\n".join(blocks))
        out = run([python, script], env=env, cwd=work)
        if mode == "readme":
            m = re.search(r"max \|nngraph - torch\| = (\S+)", out)
            if not m or not float(m.group(1)) <= 1e-4:
                sys.exit("FAILED: the README example's outputs differ from torch's")
            if not os.path.exists(os.path.join(work, "resnet18.onnx")):
                sys.exit("FAILED: the README example wrote no resnet18.onnx")
    print("OK")


if __name__ == "__main__":
    main()
