"""Probe repro (h-probe): a hostile ``cache/lexical.npz`` must be refused, not raise or be trusted.

Each case keeps the file a valid .npz with the four arrays a save writes, so only
restore()'s own checks stand between it and ``citegraph related``. All fail on 7215fbd:
the first six raise out of restore() (a traceback from every ``citegraph related`` until
the file is deleted); the last three are taken and silently change the answers.
"""

from __future__ import annotations

import io
import json
import random
import zipfile
from pathlib import Path

import numpy as np
import pytest

from graph.lexical import LexicalIndex
from tests.unit.test_lexical import _paper, _store


def _meta(x: object) -> np.ndarray:
    return np.frombuffer(json.dumps(x).encode(), dtype=np.uint8)


def _npy(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


@pytest.mark.parametrize(
    "damage",
    [
        "meta is a list", "meta is a string", "paper entries too short", "paper entries ints",
        "lengths are floats", "ids claim 10**12 elements",
        "counts NaN", "counts negative", "lengths shifted between papers",
    ],
)
def test_a_hostile_saved_index_is_refused(tmp_path: Path, damage: str) -> None:
    papers = [_paper(i, random.Random(3)) for i in range(20)]
    index = LexicalIndex()
    index.sync(_store(papers))
    path = tmp_path / "lexical.npz"
    index.save(path)
    with np.load(path) as f:
        parts = {k: f[k] for k in f.files}
    meta = json.loads(bytes(parts["meta"]).decode())
    if damage == "meta is a list":
        parts["meta"] = _meta([1, 2])
    elif damage == "meta is a string":
        parts["meta"] = _meta("x")
    elif damage == "paper entries too short":
        parts["meta"] = _meta({**meta, "papers": [["x"]] * len(meta["papers"])})
    elif damage == "paper entries ints":
        parts["meta"] = _meta({**meta, "papers": [1] * len(meta["papers"])})
    elif damage == "lengths are floats":
        parts["lengths"] = parts["lengths"].astype(float)
    elif damage == "counts NaN":
        parts["counts"] = np.full_like(parts["counts"], np.nan)
    elif damage == "counts negative":
        parts["counts"] = -parts["counts"]
    elif damage == "lengths shifted between papers":
        parts["lengths"] = parts["lengths"].copy()
        parts["lengths"][0] += 3
        parts["lengths"][1] -= 3
    if damage == "ids claim 10**12 elements":
        head = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            head, {"descr": "<i8", "fortran_order": False, "shape": (10**12,)}
        )
        with zipfile.ZipFile(path, "w") as z:
            for k in ("meta", "lengths", "counts"):
                z.writestr(f"{k}.npy", _npy(parts[k]))
            z.writestr("ids.npy", head.getvalue() + b"\0" * 64)
    else:
        np.savez(path, **parts)
    other = LexicalIndex()
    assert not other.restore(path)
    assert len(other) == 0
