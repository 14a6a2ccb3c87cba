"""Test support: puts the client's src/ first on sys.path (so the tests run
the code of this checkout, not an installed copy) and finds the repository's
cross-language vectors."""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, os.pardir, "src")
REPO = os.path.normpath(os.path.join(HERE, os.pardir, os.pardir, os.pardir))

if SRC not in sys.path:
    sys.path.insert(0, SRC)


def vectors(name):
    """vectors reads receiver/testdata/<name> of the repository."""
    with open(os.path.join(REPO, "receiver", "testdata", name), encoding="utf-8") as f:
        return json.load(f)
