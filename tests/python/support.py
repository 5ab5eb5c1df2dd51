"""What the Python tests share: where the checkout and the build are, a
test case with a scratch directory, and how a test says SKIPPED (a missing optional package) so that ctest reports it
as skipped, never as passed.

The tests run under ctest with the build's package on PYTHONPATH
(tests/CMakeLists.txt); NNGRAPH_SOURCE_DIR and NNGRAPH_BUILD_DIR name the
checkout and the build tree.
"""

import importlib
import os
import sys
import tempfile
import unittest

SOURCE_DIR = os.environ.get(
    "NNGRAPH_SOURCE_DIR",
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BUILD_DIR = os.environ.get("NNGRAPH_BUILD_DIR", os.path.join(SOURCE_DIR, "build"))
SMALL_CNN = os.path.join(SOURCE_DIR, "examples", "models", "small_cnn.nng")


def skip(reason):
    """Ends the test as skipped (ctest matches "SKIPPED:")."""
    print(f"SKIPPED: {reason}")
    sys.exit(0)


def require(module, package):
    """Imports module, or skips the test naming the Debian package."""
    try:
        return importlib.import_module(module)
    except ImportError:
        skip(f"Python module '{module}' not found: install {package} "
             "(bash scripts/setup.sh --tests)")


class TempDirTestCase(unittest.TestCase):
    """A test case with a fresh scratch directory per test (self.tmp.name),
    removed afterwards; self.path(name) is a file in it."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)
