"""A hostile ``cache/lexical.npz`` is refused: it neither raises nor is trusted.

Found by an outside probe: each case keeps the file a valid .npz with the four arrays a
save writes, so only restore()'s own checks stand between it and ``citegraph related``.
On 7215fbd the first six raised out of restore() (a traceback from every ``citegraph
related`` until the file was deleted) and the others were taken and changed the answers.
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
        "counts huge", "gram ids repeated", "zip bomb",
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
    elif damage == "counts huge":
        parts["counts"] = np.full_like(parts["counts"], 1e308)
    elif damage == "gram ids repeated":
        parts["ids"] = parts["ids"].copy()
        parts["ids"][1] = parts["ids"][0]
    elif damage == "lengths shifted between papers":
        parts["lengths"] = parts["lengths"].copy()
        parts["lengths"][0] += 3
        parts["lengths"][1] -= 3
    if damage == "zip bomb":  # 64 MB of zeros that compress to ~64 kB, past the size bound
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
            for k in ("meta", "lengths", "counts"):
                z.writestr(f"{k}.npy", _npy(parts[k]))
            z.writestr("ids.npy", _npy(np.zeros(8 * 2**20, dtype=np.int64)))
        other = LexicalIndex()
        assert not other.restore(path, max_bytes=16 * 2**20)
        assert len(other) == 0
        return
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
