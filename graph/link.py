"""Edges between papers and between concepts.

* SIMILAR_TO: each paper's k best among its 100 nearest papers by cosine (above a
  minimum cosine), scored b(i, j) = cos(i, j) + 2 x words(i, j), with words the cosine
  of the two texts' word 1-2-gram vectors (plurals folded, saturated tf, each gram
  weighted by a fixed general-English rarity, not an IDF: it depends on the two texts
  alone, never on N; :func:`graph.lexical.word_vectors`), and ranked by CSLS
  (Conneau et al. 2018): b(i, j) - 0.5 r_j, where r_j is the mean b of j's own plain
  top-k. A paper close to everything (a hub) is discounted, so no paper sits in 8 x k
  lists (docs/benchmarks.md). The edge keeps the raw cosine as its score and the word
  overlap as ``words``; the source's rank-1 edge keeps its r and pool floor (``hub``,
  ``floor``) so :func:`update_csls` recomputes only the rows an add or remove can
  change. Computed in row blocks so no N x N matrix is ever held (memory O(block x N));
  scores in float64, rounded to 6 decimals, so an incremental update and a full rebuild
  agree exactly.
* SHARES_TERM: papers sharing concepts/datasets, weighted by the summed rarity
  ln(e x 1000 / df) of the shared terms (:func:`term_weight`: no N in it, so an add
  rewrites only edges whose terms it touches); terms in more than ``max_df`` of the
  papers (or more than ``MAX_TERM_PAPERS``) link nothing; each paper keeps its
  ``top_k`` strongest partners (an edge stays if either end keeps it, and says which in
  ``kept_by``). A sparse product in row blocks: at 30,000 synthetic papers 26 s and
  ~0.5 GiB, where pair dictionaries ran out of memory. :func:`update_shared_terms`
  recomputes only the papers an add or remove touches.
* RELATED_TO: concepts mentioned together by at least two papers, weighted by that
  count; each concept keeps its 10 strongest (ties: the partner in fewer papers first,
  the order NPMI gives, computed without N).
* CITES: graph.citations (references to corpus papers and to outside works).
"""

from __future__ import annotations

import itertools
import math
import operator
from collections import Counter, defaultdict
from collections.abc import (
    Callable,
    Collection,
    Iterable,
    Iterator,
    Mapping,
    MutableMapping,
    Sequence,
)
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import numpy as np

from graph import halfdot
from graph.lexical import WORD_VECTOR_VERSION
from graph.model import (
    CountAttrs,
    Edge,
    MentionAttrs,
    NodeKind,
    RankAttrs,
    RelType,
    TermAttrs,
)
from graph.overlay import DeltaSet, Overlay

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from graph.extract import PaperTerm

class Near(NamedTuple):
    """One SIMILAR_TO neighbour: its id, the cosine, and the word overlap (:func:`word_vectors`)."""

    id: str
    score: float
    words: float


Neighbours = dict[str, list[Near]]
class Hub(NamedTuple):
    """A paper's plain top-k and pool: r (the mean b, CSLS's r), the pool's floor (the
    cosine a paper needs to enter it), the mean cosine of that top-k (related()'s hub) and
    the b of its k-th (None: fewer than k; lets an add that only reaches the pool keep the
    list without ranking the pool again)."""

    r: float
    floor: float
    cos: float
    kth: float | None = None


Hubs = dict[str, Hub]
# the float32 block product of _blocks: ~300-500 rows keep BLAS's product at its best
# (80 rows took ~1.6x the time a row at 100k papers, 1024 ~1.5x at 30k: a one-off script,
# bench/similar_block.py in git history), and its rows x N x 4 bytes stay near 128 MB
BLOCK_ROWS = 384
BLOCK_CELLS = 32_000_000
SPARSE_BLOCK_ROWS = 512
# A term in more papers than this links none of them (its weight is low, and the pairs it
# would make grow with the square of its document frequency).
MAX_TERM_PAPERS = 1000
# C in a term's SHARES_TERM weight ln(C / g(df)): fixed, so no stored weight depends on N
TERM_WEIGHT_REFERENCE = math.e * MAX_TERM_PAPERS
TERM_RELS = (RelType.MENTIONS, RelType.USES, RelType.INTRODUCES)
_TERM_RELS = TERM_RELS
_QUARTER_OCTAVE = math.log(2) / 4
SCORE_DECIMALS = 6
HUB_DECIMALS = 9
# SIMILAR_TO ranks b(i, j) - CSLS_WEIGHT x r_j: row i's order under CSLS's 2 b - r_i - r_j
CSLS_WEIGHT = 0.5
# b(i, j) = cos(i, j) + WORD_WEIGHT x words(i, j); chosen on the Cora tune half
# (docs/benchmarks.md, "SIMILAR_TO with word overlap")
WORD_WEIGHT = 2.0
# the papers a row ranks: its SIMILAR_POOL nearest by cosine (and ties), so the word
# overlap is computed for POOL pairs a row, never N
SIMILAR_POOL = 100
# how far a float32 cosine of unit vectors may be from the float64 one, with room to
# spare (as graph.query.vectors: d x 2^-24 x 2 ~ 4.6e-5 at d = 384, plus rounding)
FLOAT32_SLACK = 1e-4
PAIR_ENTRIES = 2_000_000  # word-vector entries per batch of pairs (_WordDots.pairs)
POOL_ENTRIES = 500_000  # ... and per group of rows (_WordDots.pools)
PRODUCT_PER_PAIR_ENTRY = 4  # _WordDots.rows_against: a block's product when it costs less
PRODUCT_MIN_ROWS = 32  # ... and has at least this many rows (else the setup outweighs it)
_DF_BUCKETS = 1 << 20
TIE_SLACK = 1e-9  # a probe this close to a threshold recomputes the row: never misses a tie


@dataclass(frozen=True)
class PaperVectors:
    """What SIMILAR_TO ranks by, one row per paper: the unit embedding (``matrix``) and the
    L2-normalised word vector (``words``, :func:`graph.lexical.word_vectors`; None: no
    word overlap). ``pool``, ``word_weight`` and the word vectors' version are stored on
    the edges, so a graph built with other values is recomputed rather than updated."""

    ids: Sequence[str]
    matrix: NDArray[np.float32]
    words: Any = None  # scipy.sparse CSR, rows aligned with ids
    pool: int = SIMILAR_POOL
    word_weight: float = WORD_WEIGHT
    # the derived arrays kept for these rows (the region state's), or None: made anew
    arrays: ScoringArrays | None = None


def folded_df(cols: NDArray[Any]) -> NDArray[np.int64]:
    """How many word-vector entries fall in each of 2^20 column buckets (column mod 2^20)."""
    return np.bincount(np.asarray(cols, dtype=np.int64) & (_DF_BUCKETS - 1),
                       minlength=_DF_BUCKETS).astype(np.int64)


class _Room:
    """Arrays with spare rows at the end, shared by a :class:`ScoringArrays` and the one
    grown from it: growing writes past the parent's end only, so the parent's rows (a
    committed state's) never move. Only the last array grown from a parent is valid: a
    change computed and dropped (its write failed) leaves rows that the next one overwrites."""

    def __init__(self, arrays: dict[str, NDArray[Any]]) -> None:
        self.arrays = arrays

    @staticmethod
    def make(filled: dict[str, NDArray[Any]], used: int, need: int) -> _Room:
        cap = need + need // 4 + 64
        out = {}
        for name, a in filled.items():
            b = np.zeros((cap, *a.shape[1:]), dtype=a.dtype)
            b[:used] = a[:used]
            out[name] = b
        return _Room(out)

    def fit(self, used: int, need: int) -> _Room:
        """This room when it holds ``need`` rows, else a bigger copy of its first ``used``."""
        if need <= len(next(iter(self.arrays.values()))):
            return self
        return _Room.make(self.arrays, used, need)


class ScoringArrays:
    """What :class:`_Scorer` derives from a :class:`PaperVectors` (the rows as float64, their
    largest norm, the word vectors' int64 columns, row x width + column keys and the
    folded column dfs), kept by the region state (graph.region) between writes: an add
    appends its papers' rows (:meth:`grown`), where deriving them from all N again cost
    ~0.2 s an add at 30k papers and ~0.7 s at 100k. The values are those :class:`_Scorer`
    and :class:`_WordDots` make from the whole matrices, to the bit (each is per row, or a
    max or an integer count). Removing a paper or changing a vector makes them anew
    (:meth:`of`), as the matrices are copied then anyway."""

    def __init__(self, n: int, nnz: int, dim: int, width: int | None, norm: float,
                 rows: _Room, entries: _Room | None, df: NDArray[np.int64] | None) -> None:
        self.n, self.nnz, self.dim, self.width, self.norm = n, nnz, dim, width, norm
        self._rows, self._entries, self._df = rows, entries, df

    @classmethod
    def of(cls, matrix: NDArray[np.float32], words: Any) -> ScoringArrays:
        """The arrays of ``matrix`` (rows) and ``words`` (CSR, rows aligned; or None)."""
        m32 = np.asarray(matrix, dtype=np.float32)
        n = len(m32)
        dim = int(m32.shape[1]) if m32.ndim == 2 else 0
        f64 = m32.astype(np.float64)
        norm = float(np.sqrt((f64**2).sum(axis=1)).max()) if f64.size else 1.0
        filled: dict[str, NDArray[Any]] = {"f32": m32.reshape(n, dim), "f64": f64.reshape(n, dim)}
        width: int | None = None
        entries: _Room | None = None
        df: NDArray[np.int64] | None = None
        nnz = 0
        if words is not None:
            w = words.tocsr()
            w.sort_indices()
            width = int(w.shape[1])
            nnz = int(w.nnz)
            indptr = w.indptr.astype(np.int64)
            filled["indptr"] = indptr[1:]  # row i ends at indptr[i] (the start, 0, is implied)
            cols = w.indices.astype(np.int64)
            owner = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
            entries = _Room.make({
                "cols": cols, "cols32": w.indices.astype(np.int32),
                "data": w.data.astype(np.float64), "keys": owner * max(width, 1) + cols,
            }, nnz, nnz)
            df = folded_df(cols)
        return cls(n, nnz, dim, width, norm, _Room.make(filled, n, n), entries, df)

    def grown(self, rows: NDArray[Any], words: Any) -> ScoringArrays:
        """These arrays with ``rows`` (vectors) and ``words`` (their word vectors, CSR;
        None when these have none) appended, sharing this one's spare room."""
        k = len(rows)
        if k == 0:
            return self
        n2 = self.n + k
        room = self._rows.fit(self.n, n2)
        a = room.arrays
        new32 = np.asarray(rows, dtype=np.float32).reshape(k, self.dim)
        new64 = new32.astype(np.float64)
        a["f32"][self.n : n2] = new32
        a["f64"][self.n : n2] = new64
        norm = max(self.norm, float(np.sqrt((new64**2).sum(axis=1)).max())) if k else self.norm
        if self._entries is None or self.width is None:
            return ScoringArrays(n2, 0, self.dim, None, norm, room, None, None)
        w = words.tocsr()
        w.sort_indices()
        m = int(w.nnz)
        nnz2 = self.nnz + m
        a["indptr"][self.n : n2] = self.nnz + w.indptr[1:].astype(np.int64)
        ent = self._entries.fit(self.nnz, nnz2)
        e = ent.arrays
        cols = w.indices.astype(np.int64)
        owner = np.repeat(np.arange(self.n, n2, dtype=np.int64), np.diff(w.indptr))
        e["cols"][self.nnz : nnz2] = cols
        e["cols32"][self.nnz : nnz2] = w.indices
        e["data"][self.nnz : nnz2] = w.data
        e["keys"][self.nnz : nnz2] = owner * max(self.width, 1) + cols
        assert self._df is not None
        df = self._df + folded_df(cols)
        return ScoringArrays(n2, nnz2, self.dim, self.width, norm, room, ent, df)

    @property
    def matrix(self) -> NDArray[np.float32]:
        """The rows, float32 (a view)."""
        return self._rows.arrays["f32"][: self.n]

    @property
    def full(self) -> NDArray[np.float64]:
        """The rows, float64 (a view)."""
        return self._rows.arrays["f64"][: self.n]

    def _indptr(self) -> NDArray[np.int64]:
        return np.concatenate(([0], self._rows.arrays["indptr"][: self.n])).astype(np.int64)

    @property
    def words(self) -> Any:
        """The word vectors, a CSR matrix over views of these arrays (None: none)."""
        if self._entries is None or self.width is None:
            return None
        import scipy.sparse as sp

        e = self._entries.arrays
        return sp.csr_matrix(
            (e["data"][: self.nnz], e["cols32"][: self.nnz], self._indptr().astype(np.int32)),
            shape=(self.n, self.width),
        )

    def dots_arrays(self) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.int64],
                                   NDArray[np.int64], NDArray[np.int64]]:
        """What :class:`_WordDots` makes from the word vectors: indptr, data, columns, keys,
        folded dfs (views)."""
        assert self._entries is not None and self._df is not None
        e = self._entries.arrays
        return (self._indptr(), e["data"][: self.nnz], e["cols"][: self.nnz],
                e["keys"][: self.nnz], self._df)


class _WordDots:
    """Dot products of one word vector with many, exactly the same whichever others are
    asked for at once (each sum runs over one pair's own entries, in column order).

    Row i's columns are matched by a binary search in its own sorted columns, not through
    a buffer over the corpus's compacted columns: building that compaction cost O(nnz log
    nnz) per write, and a region update (graph.region) asks for a few hundred rows."""

    def __init__(
        self, words: Any, kept: tuple[NDArray[np.int64], NDArray[np.float64], NDArray[Any],
                                      NDArray[np.int64], NDArray[np.int64]] | None = None,
    ) -> None:
        # kept (:class:`ScoringArrays`): indptr, data, columns, keys and column dfs made
        # already, views of the region state's arrays; else all made here from ``words``
        if kept is not None:
            self.indptr, self.data, self.cols, keys, df = kept
            self.width = max(int(words.shape[1]), 1)
            self._keys: NDArray[np.int64] | None = keys
            self._df: NDArray[np.int64] | None = df
        else:
            w = words.tocsr()
            w.sort_indices()
            self.indptr = w.indptr.astype(np.int64)
            self.data = w.data.astype(np.float64)
            self.cols = w.indices.astype(np.int64)
            self.width = max(int(w.shape[1]), 1)
            self._keys = None  # row x width + column, made on first use
            self._df = None  # each folded column's df (:meth:`rows_against`), made on first use
        # each entry's column numbered among the columns in use, and a buffer over them
        # (:meth:`pools`; made on first use)
        self._cid: NDArray[np.intp] | None = None
        self._buf: NDArray[np.float64] | None = None

    def row_against(self, i: int, others: NDArray[np.intp]) -> NDArray[np.float64]:
        """words(i, j) for j in ``others``, rounded to SCORE_DECIMALS."""
        a, b = self.indptr[i], self.indptr[i + 1]
        starts = self.indptr[others]
        lens = self.indptr[others + 1] - starts
        total = int(lens.sum())
        if a == b or total == 0:
            return np.zeros(len(others))
        shift = np.repeat(starts - np.concatenate(([0], np.cumsum(lens)[:-1])), lens)
        at = shift + np.arange(total)
        mine_cols = self.cols[a:b]
        cols = self.cols[at]
        pos = np.minimum(np.searchsorted(mine_cols, cols), b - a - 1)
        mine = np.where(mine_cols[pos] == cols, self.data[a:b][pos], 0.0)
        prod = self.data[at] * mine
        sums = np.bincount(np.repeat(np.arange(len(others)), lens), weights=prod,
                           minlength=len(others))
        return np.round(sums, SCORE_DECIMALS)

    def rows_against(
        self, wanted: Sequence[tuple[int, NDArray[np.intp]]]
    ) -> list[NDArray[np.float64]]:
        """:meth:`row_against` of many rows, to the bit. When it is cheaper (each row's
        columns' document frequencies summed, against the entries its others hold), as
        one sparse product of those rows with every row: for each pair it adds the same
        products (a x b, all positive) in the same order (ascending column) from 0, as
        scipy's CSR product accumulates row by row (``tests/unit/test_region_links.py``)."""
        if not wanted:
            return []
        if len(wanted) < PRODUCT_MIN_ROWS:
            return [self.row_against(i, o) for i, o in wanted]
        if self._df is None:
            self._df = folded_df(self.cols)
        # a row's product work: its columns' document frequencies summed, estimated with
        # the columns folded into 2^20 buckets (an upper bound; a bincount over the 2^24
        # hashed columns would cost more than the product it decides on)
        rows = np.asarray([i for i, _ in wanted], dtype=np.intp)
        entries = np.concatenate(
            [np.arange(self.indptr[i], self.indptr[i + 1]) for i in rows.tolist()])
        by_product = int(self._df[self.cols[entries] & (_DF_BUCKETS - 1)].sum())
        by_pairs = int(sum(int((self.indptr[o + 1] - self.indptr[o]).sum()) for _, o in wanted))
        # an entry of the product costs about a quarter of a pair's entry (one C loop
        # against several array passes), plus a few passes over the whole matrix to
        # narrow it to the rows' columns (measured on ICLR 2021's word vectors)
        by_product += 2 * len(self.cols)
        if by_product >= PRODUCT_PER_PAIR_ENTRY * by_pairs:
            return [self.row_against(i, o) for i, o in wanted]
        import scipy.sparse as sp

        # only the columns these rows hold count: every row restricted to them, renumbered
        # in the same (ascending) order, so no corpus-wide transpose over 2^24 columns
        mine = np.unique(self.cols[entries])
        if not len(mine):
            return [np.zeros(len(o)) for _, o in wanted]
        pos = np.minimum(np.searchsorted(mine, self.cols), len(mine) - 1)
        keep = mine[pos] == self.cols
        owner = np.repeat(np.arange(len(self.indptr) - 1), np.diff(self.indptr))[keep]
        n_rows = len(self.indptr) - 1
        indptr = np.concatenate(([0], np.cumsum(np.bincount(owner, minlength=n_rows))))
        narrow = sp.csr_matrix((self.data[keep], pos[keep], indptr), shape=(n_rows, len(mine)))
        dense = (narrow[rows] @ narrow.T.tocsr()).toarray()
        return [np.round(dense[bi][o], SCORE_DECIMALS) for bi, (_, o) in enumerate(wanted)]

    def pools(
        self, rows: Sequence[int], others: Sequence[NDArray[np.intp]]
    ) -> NDArray[np.float64]:
        """:meth:`row_against` of each ``rows[b]`` and ``others[b]``, end to end, to the bit
        (each pair's products in the other's column order, summed from 0 in that order by
        one bincount), for the build, which asks for every row once: a row's entries go
        into a dense buffer over the corpus's columns (numbered once, O(nnz log nnz)), so
        an entry's partner is one gather, not a binary search, and a row costs three array
        calls instead of a dozen. A matrix with a column twice in a row (not made by
        graph.lexical) goes through :meth:`rows_against`."""
        if self._cid is None:
            owner = np.repeat(np.arange(len(self.indptr) - 1), np.diff(self.indptr))
            twice = (np.diff(self.cols) == 0) & (np.diff(owner) == 0)
            if bool(twice.any()):
                got = self.rows_against(list(zip(rows, others, strict=True)))
                return np.concatenate(got) if got else np.zeros(0)
            uniq, cid = np.unique(self.cols, return_inverse=True)
            self._cid = cid.astype(np.intp)
            self._buf = np.zeros(len(uniq))
        cid, buf = self._cid, self._buf
        assert buf is not None
        right = np.concatenate(others) if len(others) else np.zeros(0, dtype=np.intp)
        out = np.zeros(len(right))
        starts_all = self.indptr[right]
        counts_all = self.indptr[right + 1] - starts_all
        # row b's pairs are ``pair[b]:pair[b + 1]``, their entries ``cut[b]:cut[b + 1]``;
        # rows go in groups of about POOL_ENTRIES entries, so the temporaries stay ~30 MB
        pair = np.concatenate(([0], np.cumsum([len(o) for o in others]))).astype(np.int64)
        cut = np.concatenate(([0], np.cumsum(counts_all)))[pair]
        groups = np.searchsorted(cut, np.arange(POOL_ENTRIES, int(cut[-1]), POOL_ENTRIES))
        bounds = [0, *sorted({int(g) for g in groups} - {0, len(rows)}), len(rows)]
        for lo, hi in itertools.pairwise(bounds):
            p0, p1, e0, total = pair[lo], pair[hi], cut[lo], int(cut[hi] - cut[lo])
            if total == 0:
                continue
            starts, counts = starts_all[p0:p1], counts_all[p0:p1]
            at = np.repeat(starts - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
            at += np.arange(total)
            want = cid[at]
            partner = np.empty(total)
            for b in range(lo, hi):
                i = rows[b]
                a, z = self.indptr[i], self.indptr[i + 1]
                mine = cid[a:z]
                buf[mine] = self.data[a:z]
                partner[cut[b] - e0 : cut[b + 1] - e0] = buf[want[cut[b] - e0 : cut[b + 1] - e0]]
                buf[mine] = 0.0
            partner *= self.data[at]
            out[p0:p1] = np.bincount(np.repeat(np.arange(p1 - p0), counts), weights=partner,
                                     minlength=p1 - p0)
        return np.round(out, SCORE_DECIMALS)

    def pairs(self, left: NDArray[np.intp], right: NDArray[np.intp]) -> NDArray[np.float64]:
        """words(left[p], right[p]) for every p, to the bit what :meth:`row_against` gives
        (each pair's products in right's column order, summed in that order), in a few
        array passes instead of one Python call per row: a row's columns are found by one
        binary search over every (row, column) key of the matrix, which is sorted."""
        out = np.zeros(len(left))
        if not len(left):
            return out
        if self._keys is None:
            rows = np.repeat(np.arange(len(self.indptr) - 1, dtype=np.int64),
                             np.diff(self.indptr))
            self._keys = rows * self.width + self.cols
        keys = self._keys
        starts_all = self.indptr[right]
        lens_all = self.indptr[right + 1] - starts_all
        # chunks of about PAIR_ENTRIES entries: the temporaries stay a few tens of MB
        ends = np.cumsum(lens_all)
        cuts = np.searchsorted(ends, np.arange(PAIR_ENTRIES, int(ends[-1]), PAIR_ENTRIES))
        bounds = [0, *sorted({int(c) + 1 for c in cuts} - {0}), len(left)]
        for lo, hi in itertools.pairwise(bounds):
            if lo >= hi:
                continue
            starts, lens = starts_all[lo:hi], lens_all[lo:hi]
            total = int(lens.sum())
            if total == 0:
                continue
            shift = np.repeat(starts - np.concatenate(([0], np.cumsum(lens)[:-1])), lens)
            at = shift + np.arange(total)
            want = np.repeat(np.asarray(left[lo:hi], dtype=np.int64), lens) * self.width
            want += self.cols[at]
            pos = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
            mine = np.where(keys[pos] == want, self.data[pos], 0.0)
            prod = self.data[at] * mine
            out[lo:hi] = np.bincount(np.repeat(np.arange(hi - lo), lens), weights=prod,
                                     minlength=hi - lo)
        return np.round(out, SCORE_DECIMALS)


class _Scorer:
    """b(i, j) = cos + word_weight x words over one set of papers, so every caller
    computes a pair exactly alike."""

    def __init__(self, vec: PaperVectors, *, every_row: bool = False) -> None:
        self.vec = vec
        # a pass over every row (a build, a warm-up) is worth a bfloat16 copy of the
        # matrix (:meth:`near_block`; ~35 ms at 100k papers, more than an add's blocks save)
        self._every_row = every_row
        kept = vec.arrays
        self._full: NDArray[np.float64] | None
        if kept is not None:
            self._full = kept.full
            self.m32 = kept.matrix
            norm = kept.norm
        else:
            given: NDArray[Any] = np.asarray(vec.matrix)
            self.m32 = np.asarray(given, dtype=np.float32)
            # float32 vectors (a build's): no float64 copy of the matrix (300 MB at 100k
            # papers); a pool's exact cosines come from its rows made float64, the same
            # numbers (:meth:`near`), and the copy is made only if an add's step needs it
            self._full = given if given.dtype == np.float64 else None
            norm = 1.0
            if self.m32.size:  # the longest vector, a block of rows at a time
                norm = float(np.sqrt(max(
                    float((self.m32[at : at + 4096].astype(np.float64) ** 2).sum(axis=1).max())
                    for at in range(0, len(self.m32), 4096)
                )))
        # |float32 a.b - float64 a.b rounded| <= d x 2^-24 x |a| |b| + 5e-7, twice over
        # (FLOAT32_SLACK holds it for unit vectors; longer ones widen it)
        self.slack = FLOAT32_SLACK * max(1.0, norm * norm)
        self._norm = norm
        self._half: halfdot.HalfMatrix | None = None  # made by the first near_block
        self._all_finite: bool | None = None
        self.w = vec.word_weight if vec.words is not None else 0.0
        self._dots = None
        if vec.words is not None:
            self._dots = _WordDots(vec.words, kept.dots_arrays()
                                   if kept is not None and kept.width is not None else None)
        # a row's pool is the same in the plain and the CSLS pass: its overlaps once
        self._seen: dict[int, tuple[NDArray[np.intp], NDArray[np.float64]]] = {}

    @property
    def full(self) -> NDArray[np.float64]:
        """The vectors as float64 (the exact cosines' operands)."""
        if self._full is None:
            self._full = self.m32.astype(np.float64)
        return self._full

    def _rows64(self, rows: Any) -> NDArray[np.float64]:
        """Some rows of :attr:`full`, without making all of it: float32 to float64 is
        exact, so these are the same numbers."""
        if self._full is not None:
            got: NDArray[np.float64] = self._full[rows]
        else:
            got = self.m32[rows].astype(np.float64)
        return got

    def cos(self, rows: NDArray[np.float64]) -> NDArray[np.float64]:
        """Rounded cosines of ``rows`` (vectors) against every paper."""
        return np.round(rows @ self.full.T, SCORE_DECIMALS)

    def rough(self, rows: Sequence[int]) -> NDArray[np.float32]:
        """float32 cosines of the papers at ``rows`` against every paper, each one's own
        left out (-inf): a prefilter, within ``slack`` of :meth:`cos`."""
        got: NDArray[np.float32] = self.m32[rows] @ self.m32.T
        got[np.arange(len(rows)), rows] = -np.inf
        return got

    def near(
        self, i: int, rough: NDArray[np.float32], size: int, min_score: float,
        also: float | None = None,
    ) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
        """The papers that may be in row i's pool of ``size`` at or above ``min_score``
        (and, given ``also``, every one whose cosine may reach it), ascending, with their
        exact cosines (:meth:`cos`'s, below ``min_score``: -inf). From the float32 row:
        every paper within ``slack`` of the (size+1)-th best, so none the float64 row
        would rank in is missed (vector search does the same: graph.query.vectors.UnitMatrix)."""
        ok = np.flatnonzero(rough >= min_score - self.slack)
        return self._rescored(i, ok, rough[ok], self.slack, size, min_score, also)

    def near_block(
        self, block: Sequence[int], size: int, min_score: float,
        product: NDArray[np.float32] | None = None,
    ) -> list[tuple[NDArray[np.intp], NDArray[np.float64]]]:
        """:meth:`near` of every row of ``block`` (no ``also``), the same papers and
        cosines, from a bfloat16 product in a pass over every row where that is faster
        (:mod:`graph.halfdot`: every paper within twice its error bound of the cut is
        rescored). ``product``: the block's float32 rows against every paper, when the
        caller made them already (a copy: the block's own entries are set to -inf)."""
        n, dim = self.m32.shape
        slack = halfdot.error_bound(dim, self._norm) * 2 + 1e-6
        cut = min_score - slack
        if (product is not None or not self._every_row or len(block) * n < halfdot.MIN_CELLS
                or dim > halfdot.MAX_DIM or cut <= 0 or not halfdot.usable()
                or not self._finite()):
            if product is None:
                rough = self.rough(block)  # never your own neighbour
            else:
                rough = product
                rough[np.arange(len(block)), block] = -np.inf
            return [self.near(r, rough[bi], size, min_score) for bi, r in enumerate(block)]
        if self._half is None:
            self._half = halfdot.HalfMatrix(self.m32)
        bits = self._half.block_bits(block)
        low = halfdot.bits_at_least(cut)
        out = []
        for bi, r in enumerate(block):
            ok = np.flatnonzero(bits[bi] >= low)
            out.append(self._rescored(r, ok, halfdot.values(bits[bi][ok]), slack, size,
                                      min_score, None))
        return out

    def _finite(self) -> bool:
        """Whether every vector is finite: a NaN's bit pattern sorts above every number
        (float32's comparisons leave it out), so only then are the two prefilters alike."""
        if self._all_finite is None:
            self._all_finite = bool(np.isfinite(self.m32).all())
        return self._all_finite

    def _rescored(
        self, i: int, ok: NDArray[np.intp], vals: NDArray[np.float32], slack: float,
        size: int, min_score: float, also: float | None,
    ) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
        """:meth:`near` from the papers ``ok`` that reach the cut and their rough
        cosines ``vals``, within ``slack`` of the exact ones."""
        # the size+1 best, not the size best: then the pool holds more than ``size``
        # finite entries exactly when the whole row does (so its floor is the same)
        if len(ok) > size + 1:
            bar = float(np.partition(vals, len(ok) - size - 1)[len(ok) - size - 1])
            if also is not None:
                bar = min(bar, also)
            ok = ok[vals >= bar - slack]
        if self._rescore_all:
            exact = np.round(self.full[[i]] @ self.full.T, SCORE_DECIMALS)[0][ok]
        else:
            exact = np.round(self._rows64(ok) @ self._rows64(i), SCORE_DECIMALS)
        exact[exact < min_score] = -np.inf
        return ok, exact

    _rescore_all = False  # tests: the exact cosines from the whole row, as cos() gives

    def words(self, i: int, others: NDArray[np.intp]) -> NDArray[np.float64]:
        if self._dots is None:
            return np.zeros(len(others))
        seen = self._seen.get(i)
        if seen is not None and np.array_equal(seen[0], others):
            return seen[1]
        got = self._dots.row_against(i, others)
        self._seen[i] = (others, got)
        return got

    def words_of(self, wanted: Sequence[tuple[int, NDArray[np.intp]]]) -> None:
        """Compute the overlaps of many (row, others) at once (:meth:`_WordDots.rows_against`),
        for :meth:`words` to return (each row keeps its last set, as :meth:`words` does)."""
        if self._dots is None:
            return
        todo = [(i, o) for i, o in wanted
                if not ((seen := self._seen.get(i)) is not None and np.array_equal(seen[0], o))]
        for (i, o), got in zip(todo, self._dots.rows_against(todo), strict=True):
            self._seen[i] = (o, got)


def _pool(row: NDArray[np.float64], size: int) -> tuple[NDArray[np.intp], float | None]:
    """The ``size`` highest entries of ``row`` that are finite (and every tie with the
    last), and that last value; None when fewer are finite (then all of them)."""
    finite = np.flatnonzero(np.isfinite(row))
    if len(finite) <= size:
        return finite, None
    part = np.argpartition(-row[finite], size - 1)[:size]
    last = float(row[finite[part]].min())
    return finite[row[finite] >= last], last


def _blocks(rows: Sequence[int], n: int) -> Iterable[list[int]]:
    """``rows`` in blocks whose float32 product (rows x N x 4 bytes) stays near 128 MB
    however large N grows (BLOCK_CELLS)."""
    rows_per_block = max(32, min(BLOCK_ROWS, BLOCK_CELLS // n))
    for start in range(0, len(rows), rows_per_block):
        yield list(rows[start : start + rows_per_block])


def _by_id(ids: Sequence[str]) -> NDArray[np.int64]:
    """Each row's place in id order: the tie-break of every list."""
    by_id = np.empty(len(ids), dtype=np.int64)
    by_id[np.argsort(np.asarray(ids, dtype=object), kind="stable")] = np.arange(len(ids))
    return by_id


def _find_pools(
    sc: _Scorer, block: Sequence[int], min_score: float,
    product: NDArray[np.float32] | None = None,
) -> tuple[list[NDArray[np.intp]], list[NDArray[np.float64]], list[float | None]]:
    """Each row's pool (:func:`_pool` of :meth:`_Scorer.near`), its exact cosines and its
    last cosine (None: fewer than ``vec.pool`` reach ``min_score``). ``product``: as
    :meth:`_Scorer.near_block` takes it."""
    pools = []
    coss = []
    lasts = []
    for near, exact in sc.near_block(block, sc.vec.pool, min_score, product):
        local, last = _pool(exact, sc.vec.pool)
        pools.append(near[local])
        coss.append(exact[local])
        lasts.append(last)
    return pools, coss, lasts


def top_k_similar(
    ids: Sequence[str],
    matrix: NDArray[np.float32],
    k: int,
    min_score: float,
    rows: Iterable[int] | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, list[tuple[str, float]]]:
    """Top-k neighbours (id, cosine) of the papers at ``rows`` (default: all), ties by id."""
    vec = PaperVectors(ids, matrix, pool=max(len(ids), 1))
    lists, _ = _ranked(vec, k, min_score, rows, progress)
    return {pid: [(n.id, n.score) for n in lst] for pid, lst in lists.items()}


def plain_similar(
    vec: PaperVectors,
    k: int,
    min_score: float,
    rows: Iterable[int] | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[Neighbours, dict[str, float]]:
    """Each row's top-k by b(i, j) among its pool, and the pool's floor (see :func:`_ranked`)."""
    return _ranked(vec, k, min_score, rows, progress)


def _ranked(
    vec: PaperVectors,
    k: int,
    min_score: float,
    rows: Iterable[int] | None,
    progress: Callable[[int], None] | None,
    penalty: NDArray[np.float64] | None = None,
    scorer: _Scorer | None = None,
) -> tuple[Neighbours, dict[str, float]]:
    """Each row's top-k by b(i, j) (minus ``penalty`` of the column, when given), ties by
    id, among its pool: the ``vec.pool`` papers nearest by cosine (with ties) at or above
    ``min_score``. Also each row's floor: the cosine a paper needs to enter its pool (the
    pool's last cosine, or ``min_score`` when fewer papers reach it)."""
    ids = vec.ids
    n = len(ids)
    row_list = list(range(n)) if rows is None else sorted(set(rows))
    if n < 2 or k <= 0:
        return {ids[r]: [] for r in row_list}, {ids[r]: min_score for r in row_list}
    sc = scorer or _Scorer(vec)
    by_id = _by_id(ids)
    out: Neighbours = {}
    floors: dict[str, float] = {}
    for block in _blocks(row_list, n):
        pools, coss, lasts = _find_pools(sc, block, min_score)
        for r, last in zip(block, lasts, strict=True):
            floors[ids[r]] = min_score if last is None else last
        sc.words_of(list(zip(block, pools, strict=True)))
        for bi, r in enumerate(block):
            pool = pools[bi]
            cos = coss[bi]
            words = sc.words(r, pool)
            key = cos + sc.w * words
            if penalty is not None:
                key = np.round(key - penalty[pool], HUB_DECIMALS)
            order = np.lexsort((by_id[pool], -key))[:k]
            out[ids[r]] = [
                Near(ids[int(pool[o])], float(cos[o]), float(words[o])) for o in order
            ]
        if progress is not None:
            progress(len(block))
    return out, floors


def _base(near: Near, w: float) -> float:
    return near.score + w * near.words


def hubness(
    plain: Mapping[str, Sequence[Near]],
    floors: Mapping[str, float],
    word_weight: float,
    k: int | None = None,
) -> Hubs:
    """The :class:`Hub` of each plain top-k list: r = the mean b of the list (CSLS's r; 0
    for an empty list), the row's pool floor, the list's mean cosine, and (given ``k``)
    the b of its k-th when it holds k."""
    out: Hubs = {}
    for pid, lst in plain.items():
        scores = [_base(n, word_weight) for n in lst]
        r = round(math.fsum(scores) / len(scores), HUB_DECIMALS) if scores else 0.0
        cos = round(math.fsum(n.score for n in lst) / len(lst), HUB_DECIMALS) if lst else 0.0
        kth = round(scores[-1], HUB_DECIMALS) if k is not None and len(lst) == k else None
        out[pid] = Hub(r, floors[pid], cos, kth)
    return out


def csls_similar(
    vec: PaperVectors,
    hubs: Mapping[str, Hub],
    k: int,
    min_score: float,
    rows: Iterable[int] | None = None,
    progress: Callable[[int], None] | None = None,
    scorer: _Scorer | None = None,
) -> Neighbours:
    """SIMILAR_TO lists: each row's top-k by b(i, j) - CSLS_WEIGHT x r_j among its pool
    (ties by id), as :class:`Near` in that order."""
    r = np.asarray([hubs.get(pid, (0.0, min_score))[0] for pid in vec.ids], dtype=np.float64)
    lists, _ = _ranked(vec, k, min_score, rows, progress, CSLS_WEIGHT * r, scorer)
    return lists


class _PoolBlock(NamedTuple):
    """The pools of a block of rows, end to end: row ``bi``'s are ``cols[at[bi]:at[bi + 1]]``
    (int32: N < 2^31), with their exact cosines and word overlaps (float64, as
    :meth:`_Scorer.near` and :meth:`_WordDots.rows_against` give them, so b is the same to
    the bit)."""

    rows: list[int]
    at: NDArray[np.int64]
    cols: NDArray[np.int32]
    cos: NDArray[np.float64]
    words: NDArray[np.float64] | None  # None: no word vectors (every overlap 0)


def _pool_block(sc: _Scorer, block: list[int], min_score: float) -> tuple[_PoolBlock, list[float]]:
    """The pools of ``block`` (as :func:`_ranked` finds them) and each row's floor."""
    pools, coss, lasts = _find_pools(sc, block, min_score)
    words = sc._dots.pools(block, pools) if sc._dots is not None else None
    at = np.zeros(len(block) + 1, dtype=np.int64)
    np.cumsum([len(p) for p in pools], out=at[1:])
    got = _PoolBlock(block, at, np.concatenate(pools).astype(np.int32),
                     np.concatenate(coss).astype(np.float64), words)
    return got, [min_score if last is None else last for last in lasts]


def _rank_block(
    pb: _PoolBlock, ids: Sequence[str], by_id: NDArray[np.int64], k: int, w: float,
    penalty: NDArray[np.float64] | None,
) -> Neighbours:
    """:func:`_ranked`'s lists of one block from its pools: the same keys, element by
    element, and one lexsort whose first key is the row, so each row's order is the one
    its own lexsort gives (stable, and the id breaks every tie)."""
    cols = pb.cols.astype(np.intp)
    words = pb.words if pb.words is not None else np.zeros(len(cols))
    key = pb.cos + w * words
    if penalty is not None:
        key = np.round(key - penalty[cols], HUB_DECIMALS)
    lens = np.diff(pb.at)
    seg = np.repeat(np.arange(len(pb.rows)), lens)
    order = np.lexsort((by_id[cols], -key, seg))
    # each row's first min(k, len) entries of its stretch of ``order``
    took = np.minimum(lens, k)
    start = np.repeat(pb.at[:-1] - np.concatenate(([0], np.cumsum(took)[:-1])), took)
    picked = order[start + np.arange(int(took.sum()))]
    got_ids = cols[picked].tolist()
    got_cos = pb.cos[picked].tolist()
    got_words = words[picked].tolist()
    out: Neighbours = {}
    at = 0
    for r, t in zip(pb.rows, took.tolist(), strict=True):
        out[ids[r]] = [Near(ids[j], c, wd) for j, c, wd in zip(
            got_ids[at : at + t], got_cos[at : at + t], got_words[at : at + t], strict=True)]
        at += t
    return out


def full_similar(
    vec: PaperVectors, k: int, min_score: float, progress: Callable[[int], None] | None = None,
    keep: list[SimilarPools] | None = None,
) -> tuple[Neighbours, Hubs]:
    """SIMILAR_TO lists and hubs of every paper: what :func:`plain_similar`, :func:`hubness`
    and :func:`csls_similar` over every row give, to the bit, with each row's pool (and its
    exact cosines, floor and word overlaps) found once and both lists ranked from it. A
    pool does not depend on the CSLS penalty, and finding it again (the float32 block
    product, the exact rescore) was a third of the pass (bench/similar_build.py, in git
    history). The
    pools are held until the CSLS pass: 20 bytes an entry, ~200 MB at 100k papers.
    ``keep`` (a list): the pools are appended to it as :class:`SimilarPools`, for the
    region state (graph.region) to rank later adds from (nothing when no row has a list)."""
    ids = vec.ids
    n = len(ids)
    sc = _Scorer(vec, every_row=True)
    if n < 2 or k <= 0:  # every list empty
        plain, floors = _ranked(vec, k, min_score, None, progress, scorer=sc)
        hubs = hubness(plain, floors, sc.w, k)
        return csls_similar(vec, hubs, k, min_score, progress=progress, scorer=sc), hubs
    by_id = _by_id(ids)
    blocks = []
    hubs = {}
    for block in _blocks(range(n), n):
        pb, block_floors = _pool_block(sc, block, min_score)
        blocks.append(pb)
        floors = dict(zip((ids[r] for r in block), block_floors, strict=True))
        # a row's hub is of its own plain list alone: made per block, so the lists are
        # never all held (~110 MB at 100k papers)
        hubs.update(hubness(_rank_block(pb, ids, by_id, k, sc.w, None), floors, sc.w, k))
        if progress is not None:
            progress(len(block))
    penalty = CSLS_WEIGHT * np.asarray([hubs[pid].r for pid in ids], dtype=np.float64)
    lists: Neighbours = {}
    # a block's pools go once its lists are ranked, unless they are kept (~200 MB at
    # 100k papers, not held beside the lists)
    ranked: list[_PoolBlock] = []
    blocks.reverse()
    while blocks:
        pb = blocks.pop()
        lists.update(_rank_block(pb, ids, by_id, k, sc.w, penalty))
        if progress is not None:
            progress(len(pb.rows))
        if keep is not None:
            ranked.append(pb)
        del pb
    if keep is not None:
        keep.append(SimilarPools.of_blocks(ids, ranked, vec.pool, min_score))
    return lists, hubs


def similar_pools(
    vec: PaperVectors, k: int, min_score: float, stop: Callable[[], bool] | None = None
) -> SimilarPools | None:
    """Every row's pool as :func:`full_similar` keeps it (its first pass alone: no list
    ranked), for a region state read from a stored graph; None where it keeps none, or
    when ``stop()`` turns true between blocks (a server closing during its warm-up)."""
    n = len(vec.ids)
    if n < 2 or k <= 0:
        return None
    sc = _Scorer(vec, every_row=True)
    blocks = []
    for block in _blocks(range(n), n):
        if stop is not None and stop():
            return None
        blocks.append(_pool_block(sc, block, min_score)[0])
    return SimilarPools.of_blocks(vec.ids, blocks, vec.pool, min_score)


def _csls_key(near: Near, r: float, w: float) -> float:
    return round(_base(near, w) - CSLS_WEIGHT * r, HUB_DECIMALS)


def _pool_moves(
    sc: _Scorer,
    hubs: Hubs,
    rows: Sequence[int],
    new: Sequence[str],
    k: int,
    min_score: float,
    plain_rows: set[int],
) -> dict[int, set[str]]:
    """Rows an add reaches (a new paper's cosine reaches the floor) whose plain top-k it
    cannot change: their new floor goes into ``hubs``, and the papers pushed out of their
    pool are returned by row. Every other row joins ``plain_rows`` (ranked again).

    Without a removed paper in its pool, row i's old pool is exactly the survivors at or
    above its old floor. The plain top-k (all at or above the k-th b, ``kth``) stays as
    it is when every paper that entered the pool (the new ones) and every one pushed out
    of it has b below ``kth``: only those pairs are scored, not the ~100 of the pool.
    """
    vec, ids = sc.vec, sc.vec.ids
    n = len(ids)
    is_new = np.zeros(n, dtype=bool)
    new_set = set(new)
    is_new[[i for i, pid in enumerate(ids) if pid in new_set]] = True
    pushed: dict[int, set[str]] = {}
    todo = [i for i in rows if hubs[ids[i]].kth is not None]
    plain_rows.update(i for i in rows if hubs[ids[i]].kth is None)
    rows_per_block = max(32, min(BLOCK_ROWS, BLOCK_CELLS // max(n, 1)))
    for start in range(0, len(todo), rows_per_block):
        block = todo[start : start + rows_per_block]
        rough = sc.rough(block)
        found = []
        for bi, i in enumerate(block):
            hub = hubs[ids[i]]
            # the pool, and every paper at or above the old floor
            near, exact = sc.near(i, rough[bi], vec.pool, min_score, also=hub.floor)
            local, last = _pool(exact, vec.pool)
            in_pool = np.zeros(len(near), dtype=bool)
            in_pool[local] = True
            entered = in_pool & (is_new[near] | (exact < hub.floor))
            pushed_out = (exact >= hub.floor) & ~is_new[near] & ~in_pool
            found.append((last, near[pushed_out], np.concatenate(
                (near[entered], near[pushed_out])).astype(np.intp),
                np.concatenate((exact[entered], exact[pushed_out]))))
        lens = [len(check) for _, _, check, _ in found]
        n_pairs = int(np.sum(lens))
        if sc._dots is not None and n_pairs:
            words = sc._dots.pairs(np.repeat(np.asarray(block, dtype=np.intp), lens),
                                   np.concatenate([check for _, _, check, _ in found]))
        else:
            words = np.zeros(n_pairs)
        at = 0
        for bi, i in enumerate(block):
            last, out, check, b = found[bi]
            hub = hubs[ids[i]]
            if sc._dots is not None and len(check):
                b = b + sc.w * words[at : at + len(check)]
            at += len(check)
            assert hub.kth is not None
            if len(check) and bool((b >= hub.kth - TIE_SLACK).any()):
                plain_rows.add(i)
                continue
            hubs[ids[i]] = hub._replace(floor=min_score if last is None else last)
            if len(out):
                pushed[i] = {ids[int(j)] for j in out}
    return pushed


class ListSource:
    """The stored SIMILAR_TO lists an update reads: a row's list (:meth:`get`) and the rows
    whose list holds some papers (:meth:`holding`). A dict of every list is one; a region
    update reads the store instead (graph.region)."""

    def __init__(self, lists: Mapping[str, Sequence[Near]]) -> None:
        self._lists = lists

    def need(self, pids: Iterable[str]) -> None:
        """The lists of ``pids`` are about to be asked for (one read for all of them)."""
        return None

    def get(self, pid: str) -> Sequence[Near]:
        return self._lists.get(pid, [])

    def holding(self, ids: Collection[str]) -> set[str]:
        return {p for p, lst in self._lists.items() if any(nb.id in ids for nb in lst)}


def update_csls(
    previous: Neighbours,
    previous_hubs: Mapping[str, Hub],
    gone: NDArray[np.float32],
    vec: PaperVectors,
    new_ids: Iterable[str],
    removed_ids: Iterable[str],
    k: int,
    min_score: float,
) -> tuple[Neighbours, Hubs]:
    """SIMILAR_TO lists and hubs after an add/remove, equal to :func:`full_similar` over
    everything, recomputing only the rows that can change (:func:`update_csls_rows`).

    ``previous``/``previous_hubs``: the stored lists and (r, floor) of the papers that
    stay; ``gone``: the old embeddings of the removed papers (a changed paper is removed
    and new).
    """
    fresh, hubs = update_csls_rows(
        ListSource(previous), previous_hubs, gone, vec, new_ids, removed_ids, k, min_score
    )
    return {p: fresh[p] if p in fresh else list(previous.get(p, [])) for p in vec.ids}, hubs


def update_csls_rows(
    previous: ListSource,
    previous_hubs: Mapping[str, Hub],
    gone: NDArray[np.float32],
    vec: PaperVectors,
    new_ids: Iterable[str],
    removed_ids: Iterable[str],
    k: int,
    min_score: float,
) -> tuple[Neighbours, Hubs]:
    """The SIMILAR_TO lists an add/remove changes (every other stored list is still
    exact) and every paper's hub, equal to :func:`full_similar` over everything.

    b(i, j) depends on i and j alone, so:

    * A survivor's plain top-k can change only if its pool does: a new paper's cosine
      reaches its floor, or a removed one's did. Those rows are recomputed (plain and
      CSLS), and J = the new papers plus those whose r moved.
    * Any other survivor's CSLS list ranks fixed b(i, j) - w r_j over a fixed pool, so it
      can change only if it holds a removed paper or one of J, or one of J in its pool
      now ranks at or above its k-th: those rows are recomputed; every other list is
      still exact.

    Returns (the recomputed rows' lists, which may equal their stored ones; every hub).
    """
    ids = vec.ids
    index = {pid: i for i, pid in enumerate(ids)}
    new = sorted(set(new_ids) & index.keys())
    removed = set(removed_ids)
    sc = _Scorer(vec)
    empty = Hub(0.0, min_score, 0.0)
    is_new = set(new)
    hubs: Hubs = {p: previous_hubs.get(p, empty) for p in ids if p not in is_new}
    floor = np.asarray([hubs.get(p, (0.0, np.inf))[1] for p in ids], dtype=np.float64)
    plain_rows = {index[p] for p in new}
    reached: set[int] = set()
    if new:
        scores = sc.cos(sc.full[[index[p] for p in new]])
        reached.update(np.flatnonzero((scores >= floor[None, :] - TIE_SLACK).any(axis=0)).tolist())
    if len(gone):
        scores = sc.cos(np.asarray(gone, dtype=np.float64))
        reach = (scores >= floor[None, :] - TIE_SLACK).any(axis=0)
        plain_rows.update(np.flatnonzero(reach).tolist())
    pushed = _pool_moves(sc, hubs, sorted(reached - plain_rows), new, k, min_score, plain_rows)
    fresh_plain, fresh_floors = _ranked(vec, k, min_score, sorted(plain_rows), None, scorer=sc)
    moved = set(new)
    for pid, hub in hubness(fresh_plain, fresh_floors, sc.w, k).items():
        old = hubs.get(pid)
        if old != hub:
            if pid not in is_new and (old is None or old.r != hub.r):
                moved.add(pid)
            hubs[pid] = hub
    redo = set(plain_rows)
    for pid in previous.holding(removed | moved):
        if pid in index:
            redo.add(index[pid])
    pushed_rows = [ids[i] for i in pushed if i not in redo]
    previous.need(pushed_rows)
    for pid in pushed_rows:
        i = index[pid]
        if any(nb.id in pushed[i] for nb in previous.get(pid)):
            redo.add(i)  # a paper pushed out of its pool was in its list
    if moved:
        cols = np.asarray([index[p] for p in sorted(moved)], dtype=np.intp)
        r_cols = np.asarray([hubs[ids[c]][0] for c in cols])
        floor_now = np.asarray([hubs[p][1] for p in ids], dtype=np.float64)
        cos = sc.cos(sc.full[cols])  # |J| x N
        cos[cos < min_score] = -np.inf
        cos[np.arange(len(cols)), cols] = -np.inf
        in_pool = cos >= floor_now[None, :] - TIE_SLACK
        candidates = [i for i in np.flatnonzero(in_pool.any(axis=0)).tolist() if i not in redo]
        previous.need(ids[i] for i in candidates)
        asked: list[tuple[int, float, NDArray[np.intp]]] = []
        for i in candidates:
            lst = previous.get(ids[i])
            if len(lst) < k:
                redo.add(i)
                continue
            last = lst[k - 1]
            asked.append((i, _csls_key(last, hubs[last.id][0], sc.w),
                          np.flatnonzero(in_pool[:, i])))
        lens = [len(js) for _, _, js in asked]
        n_pairs = int(np.sum(lens))
        words = (
            sc._dots.pairs(np.repeat(np.asarray([i for i, _, _ in asked], dtype=np.intp), lens),
                           cols[np.concatenate([js for _, _, js in asked])])
            if sc._dots is not None and n_pairs else np.zeros(n_pairs)
        )
        at = 0
        for i, thr, js in asked:
            key = np.round(
                cos[js, i] + sc.w * words[at : at + len(js)] - CSLS_WEIGHT * r_cols[js],
                HUB_DECIMALS,
            )
            at += len(js)
            if (key >= thr - TIE_SLACK).any():
                redo.add(i)
    fresh = csls_similar(vec, hubs, k, min_score, rows=sorted(redo), scorer=sc)
    return fresh, hubs


class SimilarPools:
    """Every row's SIMILAR_TO pool, kept between writes by the region state (graph.region):
    its members (row numbers, int32), their exact cosines and word overlaps (float64, as
    :meth:`_Scorer.near` and :class:`_WordDots` give them), so an add ranks a row its new
    papers reach from the old pool and those papers, not from a product against all N.

    One arena for all rows: row i's entries are ``start[i]:start[i] + size[i]`` of
    ``cols``/``cos``/``words`` (``owner``: the row of each slot); a row that changes is
    written again at the end, and the slots it left are dropped when the arena grows.
    ~24 bytes a pool entry: ~240 MB at 100k papers and a pool of 100. Changed only by
    :meth:`apply`, at a write's commit (:func:`update_csls_pools` reads, never writes)."""

    def __init__(
        self, ids: Sequence[str], start: NDArray[np.int64], size: NDArray[np.int64],
        cols: NDArray[np.int32], cos: NDArray[np.float64], words: NDArray[np.float64],
        owner: NDArray[np.int32], used: int, pool: int, min_score: float,
    ) -> None:
        self.ids = list(ids)
        self.index = {pid: i for i, pid in enumerate(self.ids)}  # id -> row
        # (the hubs of the last change applied, each row's floor and r from them): what
        # the next add reads instead of a pass over every hub, when given those hubs
        self.hub_rows: tuple[Mapping[str, Hub], NDArray[np.float64],
                             NDArray[np.float64]] | None = None
        self.start, self.size = start, size
        self.cols, self.cos, self.words, self.owner = cols, cos, words, owner
        self.used = used
        self.pool, self.min_score = pool, min_score

    @classmethod
    def of_blocks(
        cls, ids: Sequence[str], blocks: Sequence[_PoolBlock], pool: int, min_score: float
    ) -> SimilarPools:
        """The pools :func:`full_similar` found (its blocks cover the rows in order)."""
        n = len(ids)
        size = np.zeros(n, dtype=np.int64)
        for pb in blocks:
            size[pb.rows] = np.diff(pb.at)
        start = np.zeros(n, dtype=np.int64)
        np.cumsum(size[:-1], out=start[1:])
        cols = np.concatenate([pb.cols for pb in blocks]) if blocks else np.zeros(0, np.int32)
        cos = np.concatenate([pb.cos for pb in blocks]) if blocks else np.zeros(0)
        words = np.concatenate([
            pb.words if pb.words is not None else np.zeros(len(pb.cols)) for pb in blocks
        ]) if blocks else np.zeros(0)
        owner = np.repeat(np.arange(n, dtype=np.int32), size)
        # room for the rows later adds write again (a quarter more), so the first of them
        # does not copy the whole arena
        used = len(cols)
        cap = used + used // 4 + 1024

        def room(a: NDArray[Any]) -> NDArray[Any]:
            out = np.zeros(cap, dtype=a.dtype)
            out[:used] = a
            return out

        return cls(ids, start, size, room(cols.astype(np.int32)), room(cos.astype(np.float64)),
                   room(words.astype(np.float64)), room(owner), used, pool, min_score)

    def row(self, i: int) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.float64]]:
        """Row i's pool: members, cosines, word overlaps (views of the arena)."""
        a = int(self.start[i])
        b = a + int(self.size[i])
        return self.cols[a:b].astype(np.intp), self.cos[a:b], self.words[a:b]

    def holding(self, members: NDArray[np.bool_]) -> NDArray[np.intp]:
        """The slots (live ones) whose member is marked in ``members`` (one flag a row)."""
        hits = np.flatnonzero(members[self.cols[: self.used]])
        o = self.owner[hits]
        live = (hits >= self.start[o]) & (hits < self.start[o] + self.size[o])
        return hits[live]

    def apply(self, change: PoolChange) -> None:
        """Bring the pools to ``change`` (its rows and row numbering): at a commit."""
        n = len(change.ids)
        rows = sorted(change.rows)
        parts = [change.rows[i] for i in rows]
        lens = np.asarray([len(p[0]) for p in parts], dtype=np.int64)
        total = int(lens.sum())
        if change.remap is not None or self.used + total > len(self.cols):
            # the live slots of the rows that stay, renumbered, into a new arena with room
            old_n = len(self.ids)
            keep = np.ones(old_n, dtype=bool)
            remap = (change.remap if change.remap is not None
                     else np.arange(old_n, dtype=np.int64))
            keep &= remap >= 0
            changed_old = np.zeros(old_n, dtype=bool)
            back = np.full(n, -1, dtype=np.int64)
            back[remap[remap >= 0]] = np.flatnonzero(remap >= 0)
            was = back[rows] if rows else np.zeros(0, dtype=np.int64)
            changed_old[was[was >= 0]] = True
            keep &= ~changed_old
            kept_rows = np.flatnonzero(keep)
            sizes = self.size[kept_rows]
            live = int(sizes.sum())
            slots = np.repeat(self.start[kept_rows] - np.concatenate(
                ([0], np.cumsum(sizes)[:-1])), sizes) + np.arange(live)
            cap = int(1.25 * (live + total)) + 1024
            cols = np.zeros(cap, dtype=np.int32)
            cos = np.zeros(cap)
            words = np.zeros(cap)
            owner = np.zeros(cap, dtype=np.int32)
            moved_cols = remap[self.cols[slots]]
            assert not len(moved_cols) or int(moved_cols.min()) >= 0, "a stale pool kept"
            cols[:live] = moved_cols
            cos[:live] = self.cos[slots]
            words[:live] = self.words[slots]
            new_rows = remap[kept_rows]
            owner[:live] = np.repeat(new_rows, sizes)
            start = np.zeros(n, dtype=np.int64)
            size = np.zeros(n, dtype=np.int64)
            start[new_rows] = np.concatenate(([0], np.cumsum(sizes)[:-1]))
            size[new_rows] = sizes
            self.cols, self.cos, self.words, self.owner = cols, cos, words, owner
            self.start, self.size, self.used = start, size, live
        elif n > len(self.ids):
            grow = n - len(self.ids)
            self.start = np.concatenate((self.start, np.zeros(grow, dtype=np.int64)))
            self.size = np.concatenate((self.size, np.zeros(grow, dtype=np.int64)))
        at = self.used
        for i, (c, cs, wd) in zip(rows, parts, strict=True):
            m = len(c)
            self.cols[at : at + m] = c
            self.cos[at : at + m] = cs
            self.words[at : at + m] = wd
            self.owner[at : at + m] = i
            self.start[i] = at
            self.size[i] = m
            at += m
        self.used = at
        if change.remap is None:  # the old rows kept their numbers: the new ones appended
            for i in range(len(self.ids), n):
                self.index[change.ids[i]] = i
        else:
            self.index = {pid: i for i, pid in enumerate(change.ids)}
        self.ids = list(change.ids)
        self.hub_rows = change.hub_rows


class PoolChange(NamedTuple):
    """What :func:`update_csls_pools` would make of the kept pools: the new row numbering
    (``ids``; ``remap``: old row -> new row, -1 gone; None: the old rows first, unmoved)
    and the rows whose pool is new (members as new row numbers, cosines, word overlaps)."""

    ids: Sequence[str]
    remap: NDArray[np.int64] | None
    rows: dict[int, tuple[NDArray[np.int32], NDArray[np.float64], NDArray[np.float64]]]
    # the papers whose hub differs from the previous one (new papers: every one given a hub)
    hubs_moved: frozenset[str] = frozenset()
    # the hubs it returned, and each row's floor and r from them (SimilarPools.hub_rows)
    hub_rows: tuple[Mapping[str, Hub], NDArray[np.float64], NDArray[np.float64]] | None = None


class _Appended(Mapping[str, int]):
    """A row index: the kept one of the old rows, and the rows an add appends."""

    def __init__(self, old: Mapping[str, int], extra: Mapping[str, int]) -> None:
        self.old, self.extra = old, extra

    def __getitem__(self, key: str) -> int:
        got = self.old.get(key)
        return got if got is not None else self.extra[key]

    def __contains__(self, key: object) -> bool:
        return key in self.old or key in self.extra

    def __iter__(self) -> Iterator[str]:
        return itertools.chain(self.old, self.extra)

    def __len__(self) -> int:
        return len(self.old) + len(self.extra)


def _top_k(
    key: NDArray[np.float64], cols: NDArray[np.intp], ids: Sequence[str], k: int
) -> NDArray[np.intp]:
    """The positions of the k highest ``key`` (ties: the member with the lower id), as
    ``np.lexsort((by_id[cols], -key))[:k]`` orders them, without ranking every id."""
    if not len(key):
        return np.zeros(0, dtype=np.intp)
    order = np.argsort(-key, kind="stable")
    if len(order) <= k:
        top = order
    else:
        bar = key[order[k - 1]]
        top = order[key[order] >= bar]
    if len(top) > 1 and (len(top) > k or bool((np.diff(key[top]) == 0).any())):
        top = np.asarray(sorted(top.tolist(), key=lambda t: (-key[t], ids[int(cols[t])])),
                         dtype=np.intp)
    return top[:k]


def update_csls_pools(
    previous: ListSource,
    previous_hubs: Mapping[str, Hub],
    pools: SimilarPools,
    vec: PaperVectors,
    new_ids: Iterable[str],
    removed_ids: Iterable[str],
    k: int,
    min_score: float,
) -> tuple[Neighbours, MutableMapping[str, Hub], PoolChange]:
    """:func:`update_csls_rows` from the kept pools (``pools``, of the stored graph): the
    same lists and hubs, to the bit, and what the pools become (:meth:`SimilarPools.apply`
    it once the write commits).

    A row's pool is its ``pool`` nearest at or above ``min_score`` (with ties), so while
    none of its members leaves, every paper outside it stays below its last cosine, and
    its new pool is the pool of (the old pool and the new papers): no product against N.
    A row that loses a member (a removed paper, or one whose vector changed: ~``pool``
    rows a removed paper) and each new paper's row are found from all N, as before. Then
    every row whose pool moved is ranked again (plain and CSLS) from its pool, and the
    CSLS lists that may move through a moved r are found as :func:`update_csls_rows` does,
    but from the pools: a paper whose r moved enters only the lists of rows whose pool
    holds it, at the key its pool entry gives.

    The hubs returned are, for an add, an :class:`graph.overlay.Overlay` of
    ``previous_hubs`` (the pools keep that dict as the hubs they were moved with): the
    caller applies it when the write commits."""
    ids = vec.ids
    n = len(ids)
    removed = set(removed_ids)
    if n < 2 or k <= 0 or pools.pool != vec.pool or pools.min_score != min_score:
        raise ValueError("these pools were not kept for these lists")
    old_ids = pools.ids
    n_old = len(old_ids)
    appended = (n_old <= n and not removed.intersection(old_ids)
                and list(ids[:n_old]) == old_ids)
    # an add appends rows: the old rows' numbers are the pools' own (no O(N) dict)
    index: Mapping[str, int] = (
        _Appended(pools.index, {p: n_old + j for j, p in enumerate(ids[n_old:])})
        if appended else {pid: i for i, pid in enumerate(ids)}
    )
    new = sorted(p for p in set(new_ids) if p in index)
    is_new = set(new)
    sc = _Scorer(vec)
    empty = Hub(0.0, min_score, 0.0)
    hubs: MutableMapping[str, Hub]
    hubs_moved: set[str] = set()  # the papers whose hub is not previous_hubs' any more
    # the hubs the pools were last moved with (their keys are the pools' rows), else
    # compared key by key
    same_keys = (pools.hub_rows is not None and pools.hub_rows[0] is previous_hubs) or (
        previous_hubs.keys() == pools.index.keys())
    if (appended and isinstance(previous_hubs, dict)
            and not any(p in pools.index for p in is_new) and same_keys):
        # every old paper's, as below, without a copy (the commit applies the view; a
        # copy of 100k hubs and dropping the old dict were ~25 ms an add)
        hubs = Overlay(previous_hubs)
    else:
        hubs = {}
        for p in ids:
            if p not in is_new:
                had = previous_hubs.get(p)
                if had is None:
                    hubs_moved.add(p)
                hubs[p] = had if had is not None else empty
    remap: NDArray[np.int64] | None = None
    if not appended:
        remap = np.asarray([-1 if p in removed else index.get(p, -1) for p in old_ids],
                           dtype=np.int64)
    # every old row's floor and r as arrays, kept with the pools for these very hubs
    kept_rows = (pools.hub_rows if appended and pools.hub_rows is not None
                 and pools.hub_rows[0] is previous_hubs else None)
    to_new = remap if remap is not None else np.arange(n_old, dtype=np.int64)
    to_old = np.full(n, -1, dtype=np.int64)
    to_old[to_new[to_new >= 0]] = np.flatnonzero(to_new >= 0)

    # rows that lost a member: their pool is found again from all N
    gone = to_new < 0
    refill: set[int] = set()
    if bool(gone.any()):
        slots = pools.holding(gone)
        owners = to_new[pools.owner[slots]]
        refill.update(int(i) for i in np.unique(owners[owners >= 0]))
    fresh_rows = sorted(index[p] for p in new)
    whole = sorted(refill | set(fresh_rows))
    new_arr = np.asarray(fresh_rows, dtype=np.intp)
    # the new papers against every paper once, for their own pools and for the rows
    # they reach, where that fits one block: each product reads the whole matrix (150
    # MB at 100k papers, ~15 ms)
    fresh_product = (sc.m32[new_arr] @ sc.m32.T
                     if fresh_rows and len(fresh_rows) * n <= BLOCK_CELLS else None)
    at_fresh = {r: j for j, r in enumerate(fresh_rows)}
    new_pools: dict[int, tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.float64],
                               float | None]] = {}
    for block in _blocks(whole, n):
        product = (fresh_product[[at_fresh[r] for r in block]]  # a copy
                   if fresh_product is not None and all(r in at_fresh for r in block)
                   else None)
        got, coss, lasts = _find_pools(sc, block, min_score, product)
        words = (sc._dots.rows_against(list(zip(block, got, strict=True)))
                 if sc._dots is not None else [np.zeros(len(g)) for g in got])
        for r, g, c, wd, last in zip(block, got, coss, words, lasts, strict=True):
            new_pools[r] = (g, c, wd, last)

    # rows a new paper reaches: their pool and the new papers
    if fresh_rows:
        if kept_rows is not None:  # the old rows' floors as kept, the new ones' inf
            floor = np.concatenate((kept_rows[1], np.full(n - n_old, np.inf)))
        else:
            floor = np.fromiter((hubs[p].floor if p not in is_new else np.inf for p in ids),
                                dtype=np.float64, count=n)
        # the float32 product first (within ``slack`` of cos()), then the exact cosines of
        # the rows it may reach: rounding a float64 product of every row was ~25 ms an add
        # at 100k papers
        near = ((fresh_product if fresh_product is not None else sc.m32[new_arr] @ sc.m32.T)
                >= floor[None, :] - TIE_SLACK - sc.slack)
        maybe = np.flatnonzero(near.any(axis=0))
        scores = np.round(sc.full[new_arr] @ sc.full[maybe].T, SCORE_DECIMALS)
        reached = maybe[(scores >= floor[maybe][None, :] - TIE_SLACK).any(axis=0)]
        merge = [int(i) for i in reached if int(i) not in new_pools]
        entering: list[tuple[int, NDArray[np.intp], NDArray[np.float64]]] = []
        for i in merge:
            if to_old[i] < 0:
                raise ValueError(f"{ids[i]} is neither new nor in the kept pools")
            exact = np.round(sc.full[new_arr] @ sc.full[i], SCORE_DECIMALS)
            ok = exact >= min_score
            entering.append((i, new_arr[ok], exact[ok]))
        lens = [len(js) for _, js, _ in entering]
        n_pairs = int(np.sum(lens)) if lens else 0
        pair_words = (
            sc._dots.pairs(np.repeat(np.asarray(merge, dtype=np.intp), lens),
                           np.concatenate([js for _, js, _ in entering]))
            if sc._dots is not None and n_pairs else np.zeros(n_pairs)
        )
        at = 0
        for i, js, cj in entering:
            old_cols, old_cos, old_words = pools.row(int(to_old[i]))
            cols = np.concatenate((to_new[old_cols], js))
            cos = np.concatenate((old_cos, cj))
            wds = np.concatenate((old_words, pair_words[at : at + len(js)]))
            at += len(js)
            local, last = _pool(cos, vec.pool)
            new_pools[i] = (cols[local], cos[local], wds[local], last)

    # the plain lists and hubs of every row whose pool moved
    plain: Neighbours = {}
    floors: dict[str, float] = {}
    for i, (cols, cos, wds, last) in new_pools.items():
        key = cos + sc.w * wds
        top = _top_k(key, cols, ids, k)
        plain[ids[i]] = [Near(ids[int(cols[t])], float(cos[t]), float(wds[t])) for t in top]
        floors[ids[i]] = min_score if last is None else last
    moved = set(new)
    for pid, hub in hubness(plain, floors, sc.w, k).items():
        old = hubs.get(pid)
        if old != hub:
            if pid not in is_new and (old is None or old.r != hub.r):
                moved.add(pid)
            hubs[pid] = hub
            hubs_moved.add(pid)

    redo = set(new_pools)
    for pid in previous.holding(removed | moved):
        if pid in index:
            redo.add(index[pid])
    if kept_rows is not None and is_new <= hubs_moved:
        r_all = np.concatenate((kept_rows[2], np.zeros(n - n_old)))
        floor_all = np.concatenate((kept_rows[1], np.zeros(n - n_old)))
        for p in hubs_moved:
            i = index[p]
            r_all[i], floor_all[i] = hubs[p].r, hubs[p].floor
    else:
        r_all = np.fromiter((hubs[p].r for p in ids), dtype=np.float64, count=n)
        floor_all = np.fromiter((hubs[p].floor for p in ids), dtype=np.float64, count=n)
    penalty = CSLS_WEIGHT * r_all
    # a row whose pool did not move, holding a paper whose r moved: ranked again when
    # that paper's key reaches its list's k-th (or its list is short)
    old_moved = np.zeros(n_old, dtype=bool)
    moved_old = to_old[[index[p] for p in moved if p not in is_new]]
    old_moved[moved_old[moved_old >= 0]] = True
    if bool(old_moved.any()):
        slots = pools.holding(old_moved)
        owners = to_new[pools.owner[slots]]
        ok = owners >= 0
        slots, owners = slots[ok], owners[ok]
        fresh_owner = np.fromiter((int(o) not in redo for o in owners), dtype=bool,
                                  count=len(owners))
        slots, owners = slots[fresh_owner], owners[fresh_owner]
        cand = sorted({int(o) for o in owners})
        previous.need(ids[i] for i in cand)
        thr = np.full(n, np.inf)
        for i in cand:
            lst = previous.get(ids[i])
            if len(lst) < k:
                redo.add(i)
                continue
            last_nb = lst[k - 1]
            thr[i] = _csls_key(last_nb, hubs[last_nb.id][0], sc.w)
        key = np.round(pools.cos[slots] + sc.w * pools.words[slots]
                       - penalty[to_new[pools.cols[slots]]], HUB_DECIMALS)
        hit = key >= thr[owners] - TIE_SLACK
        redo.update(int(i) for i in np.unique(owners[hit]))

    fresh: Neighbours = {}
    for i in sorted(redo):
        if i in new_pools:
            cols, cos, wds, _ = new_pools[i]
        else:
            old_cols, cos, wds = pools.row(int(to_old[i]))
            cols = to_new[old_cols]
        key = np.round(cos + sc.w * wds - penalty[cols], HUB_DECIMALS)
        top = _top_k(key, cols, ids, k)
        fresh[ids[i]] = [Near(ids[int(cols[t])], float(cos[t]), float(wds[t])) for t in top]
    change = PoolChange(list(ids), remap, {
        i: (c.astype(np.int32), cs.astype(np.float64), wd.astype(np.float64))
        for i, (c, cs, wd, _) in new_pools.items()
    }, frozenset(p for p in hubs_moved if previous_hubs.get(p) != hubs.get(p)),
        # a view's dict becomes these hubs when the view is applied (at the commit)
        (hubs.base if isinstance(hubs, Overlay) else hubs, floor_all, r_all))
    return fresh, hubs, change


def similar_edges(
    neighbours: Mapping[str, Sequence[Near]],
    hubs: Mapping[str, Hub] | None = None,
    k: int | None = None,
    min_score: float | None = None,
    vec: PaperVectors | None = None,
    *,
    ranked: Mapping[str, float] | None = None,
) -> list[Edge]:
    """SIMILAR_TO edges (source -> neighbour) with score (cosine), words and rank. The
    source's rank-1 edge also carries its ``hub`` (r), ``floor`` and ``hub_cos`` when
    ``hubs`` gives them, with the ``k``, ``min_score``, ``pool``, ``word_weight`` and
    ``words_version`` they were computed for (what an exact update needs): on one edge,
    not all k, because a source's floor moves whenever a paper enters or leaves its pool
    (~100 sources an added paper), and each move then rewrites one row, not k.
    ``ranked``: :func:`ranked_by` of the vectors, in place of ``vec``."""
    if ranked is None and vec is not None:
        ranked = ranked_by(vec)
    out = []
    for pid in sorted(neighbours):
        extra: dict[str, float] = {}
        if hubs is not None and pid in hubs:
            hub = hubs[pid]
            extra = {"hub": hub.r, "floor": hub.floor, "hub_cos": hub.cos}
            if hub.kth is not None:
                extra["hub_kth"] = hub.kth
            if k is not None and min_score is not None and ranked is not None:
                extra |= {"k": k, "min_score": min_score} | dict(ranked)
        for rank, nb in enumerate(neighbours[pid], start=1):
            attrs: Mapping[str, Any] = RankAttrs(nb.score, nb.words, rank)
            if rank == 1:
                attrs = {"score": nb.score, "words": nb.words, "rank": rank} | extra
            out.append(Edge(pid, nb.id, RelType.SIMILAR_TO, nb.score, attrs))
    return out


def ranked_by(vec: PaperVectors) -> dict[str, float]:
    """What a stored list was ranked by besides k and min_score: an edge written for other
    values (or by older word vectors) is recomputed, never updated."""
    words = vec.words is not None
    return {"pool": vec.pool, "word_weight": vec.word_weight if words else 0.0,
            "words_version": WORD_VECTOR_VERSION if words else 0, "csls": CSLS_WEIGHT}


# what a stored list was ranked by when an edge does not say: the edges written before
# the CSLS weight was recorded were all ranked with 0.5 (it has not changed since be1f238)
_UNRECORDED = {"csls": 0.5}


def hubs_from_edges(
    edges: Iterable[Edge],
    paper_ids: Iterable[str],
    min_score: float,
    k: int | None = None,
    vec: PaperVectors | None = None,
) -> Hubs | None:
    """The stored :class:`Hub` of every paper (a paper without SIMILAR_TO edges: (0,
    min_score, 0)), or None when some edge lacks them (written by older code) or was computed
    for another ``k``, ``min_score``, pool, word weight or word-vector version (the settings
    or the code changed): then recompute everything. A list of k holds its k-th b (``hub_kth``)."""
    out: Hubs = dict.fromkeys(paper_ids, Hub(0.0, min_score, 0.0))
    want: dict[str, float] = {}
    if k is not None:
        want = {"k": k, "min_score": min_score}
    if vec is not None:
        want |= ranked_by(vec)
    sources: dict[str, int] = defaultdict(int)  # source -> its list's length
    seen: set[str] = set()
    for e in edges:
        if e.type is not RelType.SIMILAR_TO:
            continue
        attrs = e.attrs
        if "words" not in attrs:
            return None
        sources[e.source] += 1
        # the source's rank-1 edge holds its hub (older graphs: every edge held it)
        if e.source in seen or attrs.get("rank") != 1:
            continue
        seen.add(e.source)
        hub, floor, cos = attrs.get("hub"), attrs.get("floor"), attrs.get("hub_cos")
        if hub is None or floor is None or cos is None:
            return None
        for name, value in want.items():
            if attrs.get(name, _UNRECORDED.get(name)) != value:
                return None
        kth = attrs.get("hub_kth")
        out[e.source] = Hub(float(hub), float(floor), float(cos),
                            None if kth is None else float(kth))
    if sources.keys() - seen:  # a list without its rank-1 edge: not written by this code
        return None
    if k is not None and any(
        n == k and out[pid].kth is None for pid, n in sources.items()
    ):
        return None  # a full list without its k-th b: written before ``hub_kth``
    return out


def neighbours_from_edges(edges: Iterable[Edge]) -> Neighbours:
    """Rebuild neighbour lists from stored SIMILAR_TO edges."""
    out: dict[str, list[tuple[int, Near]]] = defaultdict(list)
    for e in edges:
        if e.type is RelType.SIMILAR_TO:
            near = Near(e.target, float(e.weight), float(e.attrs.get("words", 0.0)))
            out[e.source].append((int(e.attrs.get("rank", 0)), near))
    return {pid: [nb for _, nb in sorted(lst)] for pid, lst in out.items()}


def term_weight(df: int) -> float:
    """The SHARES_TERM weight of one linking term found in ``df`` papers: ln(C / g(df)).

    C (``TERM_WEIGHT_REFERENCE``) is fixed, not the corpus size, so a stored edge depends
    only on its own terms (issue 12). g(df) is df rounded down to the quarter-octave grid
    2^(k/4) (exact for df 1, 2, 4, 8, …; at most 0.17 above ln(C / df)): a common term's
    weight then moves only when its df grows past a grid point, about every 19 %, not on
    every paper that mentions it. On the ICLR 2021 graph that cut the SHARES_TERM rows one
    add of 10 papers writes from 24,868 (exact ln(C / df)) to 1,897 (bench/link_rows.py, in
    git history). With
    C = e x MAX_TERM_PAPERS every linking term weighs at least 1.
    """
    k = (df**4).bit_length() - 1  # the largest k with 2^k <= df^4: exact integer arithmetic
    return math.log(TERM_WEIGHT_REFERENCE) - k * _QUARTER_OCTAVE


def linking_cap(n: int, max_df: float, max_term_papers: int = MAX_TERM_PAPERS) -> int:
    """The most papers a term may be in and still link them: min(max_df x N, max_term_papers)."""
    return max(2, min(int(max_df * n), max_term_papers))


def term_postings(paper_terms: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    """term -> the papers holding it."""
    out: dict[str, set[str]] = defaultdict(set)
    for pid, terms in paper_terms.items():
        for t in terms:
            out[t].add(pid)
    return out


def paper_terms_of(edges: Iterable[Edge]) -> dict[str, set[str]]:
    """paper -> its concepts/datasets, read back from stored MENTIONS/USES/INTRODUCES edges."""
    out: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        if e.type in _TERM_RELS:
            out[e.source].add(e.target)
    return out


class _TermIndex:
    """The linking terms of a corpus as a sparse papers x terms matrix, for partner lists."""

    def __init__(
        self,
        paper_terms: Mapping[str, Mapping[str, float]],
        postings: Mapping[str, set[str]],
        max_papers: int,
    ) -> None:
        import scipy.sparse as sp

        self.ids = sorted(paper_terms)
        self.row = {pid: i for i, pid in enumerate(self.ids)}
        self.linking = sorted(t for t, ps in postings.items() if 2 <= len(ps) <= max_papers)
        self.tindex = {t: i for i, t in enumerate(self.linking)}
        self.weight = {t: term_weight(len(postings[t])) for t in self.linking}
        self.shown = {t: round(w, 4) for t, w in self.weight.items()}
        rows: list[int] = []
        cols: list[int] = []
        for i, pid in enumerate(self.ids):
            for t in paper_terms[pid]:
                j = self.tindex.get(t)
                if j is not None:
                    rows.append(i)
                    cols.append(j)
        ones = np.ones(len(rows), dtype=np.float64)
        self.x = sp.csr_matrix((ones, (rows, cols)), shape=(len(self.ids), len(self.linking)))
        w_vec = np.asarray([self.weight[t] for t in self.linking], dtype=np.float64)
        self.weighted_t = sp.csr_matrix(self.x.multiply(w_vec[None, :])).T.tocsr()
        self._ordered: dict[str, list[str]] = {}  # paper -> its linking terms, heaviest first

    def partners(self, rows: Sequence[int], min_weight: float, top_k: int) -> dict[str, list[str]]:
        """Each row's ``top_k`` partners by (-weight, id), weight >= ``min_weight``."""
        out: dict[str, list[str]] = {}
        if not self.linking:
            return {self.ids[r]: [] for r in rows}
        for start in range(0, len(rows), SPARSE_BLOCK_ROWS):
            chunk = list(rows[start : start + SPARSE_BLOCK_ROWS])
            block = (self.x[chunk] @ self.weighted_t).tocsr()
            for bi, r in enumerate(chunk):
                lo, hi = block.indptr[bi], block.indptr[bi + 1]
                cols_r = block.indices[lo:hi]
                w_r = np.round(block.data[lo:hi], SCORE_DECIMALS)
                mask = (cols_r != r) & (w_r >= min_weight)
                cols_r, w_r = cols_r[mask], w_r[mask]
                out[self.ids[r]] = self._best(cols_r, w_r, top_k)
        return out

    def _best(self, cols: NDArray[Any], weights: NDArray[np.float64], top_k: int) -> list[str]:
        """The ``top_k`` of ``cols`` by (-weight, id)."""
        # ids are sorted, so the column order is the id order: (-weight, id) in C
        best = cols[np.lexsort((cols, -weights))[:top_k]]
        return [self.ids[int(c)] for c in best]

    def edge(
        self,
        a: str,
        b: str,
        kept_by: str,
        paper_terms: Mapping[str, Mapping[str, float]],
        term_names: Mapping[str, str],
    ) -> Edge:
        """The SHARES_TERM edge a -- b (a < b) with its shared terms, heaviest first."""
        mine = self._ordered.get(a)
        if mine is None:
            mine = self._ordered[a] = sorted(
                (t for t in paper_terms[a] if t in self.weight), key=lambda t: (-self.weight[t], t)
            )
        other = paper_terms[b]
        shared = tuple(t for t in mine if t in other)
        weight = round(sum(self.weight[t] for t in shared), SCORE_DECIMALS)
        return Edge(
            a,
            b,
            RelType.SHARES_TERM,
            weight,
            TermAttrs(
                weight,
                tuple(term_names.get(t, t) for t in shared),
                shared,
                tuple(self.shown[t] for t in shared),
                kept_by,
            ),
        )


def _kept_by(a: str, b: str, keepers: set[str]) -> str:
    return "both" if len(keepers) == 2 else ("source" if a in keepers else "target")


def shared_term_edges(
    paper_terms: Mapping[str, Mapping[str, float]],
    term_names: Mapping[str, str],
    *,
    max_df: float = 0.2,
    min_weight: float = 1.0,
    top_k: int = 20,
    max_term_papers: int = MAX_TERM_PAPERS,
) -> list[Edge]:
    """SHARES_TERM edges between papers (source < target), rarest shared terms first.

    Computed as a sparse product (papers x terms) . (terms x papers) in row blocks, so
    memory stays O(block x N) and time O(sum of df^2) over the terms that may link;
    a term links papers only when 2 <= df <= min(max_df x N, max_term_papers). Each
    edge says which end keeps it in its top-k (``kept_by``), which lets
    :func:`update_shared_terms` recompute only the papers an add or remove touches.
    """
    n = len(paper_terms)
    if n < 2:
        return []
    index = _TermIndex(
        paper_terms, term_postings(paper_terms), linking_cap(n, max_df, max_term_papers)
    )
    lists = index.partners(range(n), min_weight, top_k)
    return _edges_from_lists(index, lists, {}, paper_terms, term_names)


def _edges_from_lists(
    index: _TermIndex,
    lists: Mapping[str, Sequence[str]],
    kept: Mapping[tuple[str, str], set[str]],
    paper_terms: Mapping[str, Mapping[str, float]],
    term_names: Mapping[str, str],
    reuse: Mapping[tuple[str, str], Edge] | None = None,
    moved: Collection[str] = (),
    hard: Collection[str] = (),
    renamed: Collection[str] | None = None,
    reuse_by: Mapping[tuple[str, str], str] | None = None,
    renamed_holders: Collection[str] = (),
    same_terms: Callable[[str, str], bool] | None = None,
) -> list[Edge]:
    """Edges = the union of the partner lists (``lists``, plus ``kept``: pair -> keepers).

    An edge of ``reuse`` keeps its shared terms and weight unless an end is in ``moved``
    (gained or lost a term) or both ends are in ``hard`` (hold a term whose weight or
    linking status changed): otherwise neither end's terms changed and no term they
    share changed its weight, so the shared terms and their sum are the same.
    ``renamed``: the terms whose name changed since ``reuse`` was written (None: not
    known, so every reused edge's names are looked up again), held by ``renamed_holders``
    (an edge shares a term only when both ends hold it); ``reuse_by``: each reused
    edge's ``kept_by``, read once. ``same_terms`` (a, b): whether the pair shares the
    same linking terms at the same weights as when ``reuse`` was written, asked of the
    pairs that rule leaves out (it knows which terms moved, not only which papers).
    The edges come in no particular order.
    """
    keepers: dict[tuple[str, str], set[str]] = defaultdict(set)
    for pair, ends in kept.items():
        keepers[pair].update(ends)
    for me, partners in lists.items():
        for o in partners:
            keepers[(me, o) if me < o else (o, me)].add(me)
    edges = []
    for (a, b), ends in keepers.items():
        kept_by = _kept_by(a, b, ends)
        old = reuse.get((a, b)) if reuse is not None else None
        if old is not None and (
            (a not in moved and b not in moved and not (a in hard and b in hard))
            or (same_terms is not None and same_terms(a, b))
        ):
            # only a term's name (re-resolved) or kept_by may move
            was_by = reuse_by[(a, b)] if reuse_by is not None else old.attrs.get("kept_by")
            if renamed is not None and was_by == kept_by and (
                not renamed or a not in renamed_holders or b not in renamed_holders
            ):
                edges.append(old)  # the same object: the diff sees it unchanged at once
                continue
            term_ids = old.attrs.get("term_ids", [])
            if renamed is not None and not any(t in renamed for t in term_ids):
                shown = old.attrs.get("terms")
            else:
                shown = [term_names.get(t, t) for t in term_ids]
            if was_by == kept_by and old.attrs.get("terms") == shown:
                edges.append(old)
                continue
            attrs = dict(old.attrs)
            attrs["kept_by"] = kept_by
            attrs["terms"] = shown
            edges.append(Edge(a, b, RelType.SHARES_TERM, old.weight, attrs))
        else:
            edges.append(index.edge(a, b, kept_by, paper_terms, term_names))
    return edges


def _partners_reached(
    index: _TermIndex,
    soft: set[str],
    movers: set[str],
    gone: set[str],
    old_edges: Mapping[tuple[str, str], Edge],
    old_by: Mapping[tuple[str, str], str],
    min_weight: float,
    top_k: int,
) -> set[str]:
    """The papers of ``soft`` whose partner list an update can change.

    A soft paper holds a term whose set of papers changed, but no term whose weight or
    linking status did, and gained or lost no term itself: its score with every paper
    that did not gain or lose a term (``movers``) is unchanged. Its list changes only if
    it held a mover or a removed paper (``gone``), was shorter than ``top_k``, or a
    mover now scores at or above its k-th partner: only those are returned, and every
    other soft paper keeps the list it has (most of the papers an add of 10 touches
    through a common term: 2.7k of 3k on ICLR 2021).
    """
    lists: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for (a, b), e in old_edges.items():
        by = old_by[(a, b)]
        if by != "target" and a in soft:
            lists[a].append((e.weight, b))
        if by != "source" and b in soft:
            lists[b].append((e.weight, a))
    reached: set[str] = set()
    threshold = np.full(len(index.ids), np.inf)
    for p in soft:
        lst = lists.get(p, [])
        if len(lst) < top_k or any(q in movers or q in gone for _, q in lst):
            reached.add(p)
        else:
            threshold[index.row[p]] = min(w for w, _ in lst)
    rows = sorted(index.row[m] for m in movers)
    if not rows or not index.linking:
        return reached
    slack = 10.0 ** -SCORE_DECIMALS  # the edge's weight and the product round apart
    for start in range(0, len(rows), SPARSE_BLOCK_ROWS):
        block = (index.x[rows[start : start + SPARSE_BLOCK_ROWS]] @ index.weighted_t).tocsr()
        hit = (block.data >= threshold[block.indices] - slack) & (
            block.data >= min_weight - slack
        )
        reached.update(index.ids[int(c)] for c in np.unique(block.indices[hit]))
    return reached


def update_shared_terms(
    previous: Iterable[Edge],
    old_terms: Mapping[str, Iterable[str]],
    paper_terms: Mapping[str, Mapping[str, float]],
    term_names: Mapping[str, str],
    *,
    max_df: float = 0.2,
    min_weight: float = 1.0,
    top_k: int = 20,
    max_term_papers: int = MAX_TERM_PAPERS,
    renamed: Collection[str] | None = None,
) -> tuple[list[Edge], set[str]] | None:
    """SHARES_TERM edges after the corpus went from ``old_terms`` to ``paper_terms``, exactly.

    Equal to ``shared_term_edges(paper_terms, ...)``, but only the partner lists of the
    *touched* papers are recomputed: those holding (before or after) a term that links
    before or after the change and whose set of papers or linking status changed.
    Why an untouched paper p keeps its list: each of its linking terms has the same
    papers (so the same df and weight) and the same status, so for every other paper q
    the linking terms p and q share, and their summed weight, are unchanged; a paper
    that gained or lost one of p's terms changed that term's paper set, which would
    have touched p. Its list is read back from the edges it keeps (``kept_by``).
    Returns (edges, touched paper ids), or None when ``previous`` does not say which
    end keeps each edge (a graph written before ``kept_by``): then compute it whole.
    ``renamed``: the terms whose name changed (None: look every kept edge's names up).
    """
    old_edges: dict[tuple[str, str], Edge] = {}
    old_by: dict[tuple[str, str], str] = {}  # kept_by, read once (a lazily decoded attr)
    for e in previous:
        if e.type is not RelType.SHARES_TERM:
            continue
        by = e.attrs.get("kept_by")
        if by not in ("source", "target", "both"):
            return None
        old_edges[(e.source, e.target)] = e
        old_by[(e.source, e.target)] = by
    n, n_old = len(paper_terms), len(old_terms)
    if n < 2:
        return [], set(paper_terms)
    old_sets = {pid: set(ts) for pid, ts in old_terms.items()}
    post_new = term_postings(paper_terms)
    post_old = term_postings(old_sets)
    cap_new = linking_cap(n, max_df, max_term_papers)
    cap_old = linking_cap(n_old, max_df, max_term_papers)

    def links(ps: set[str] | None, cap: int) -> bool:
        return ps is not None and 2 <= len(ps) <= cap

    moved: set[str] = set()  # terms some paper gained or lost
    moved_papers: set[str] = set()  # papers that gained or lost a term
    for pid in set(paper_terms) | set(old_sets):
        delta = set(paper_terms.get(pid, ())) ^ old_sets.get(pid, set())
        if delta:
            moved.update(delta)
            moved_papers.add(pid)
    if cap_new != cap_old:  # terms that crossed the max_df x N gate
        moved.update(
            t for t, ps in post_new.items() if links(ps, cap_new) != links(post_old.get(t), cap_old)
        )
    changed = {
        t for t in moved if links(post_new.get(t), cap_new) or links(post_old.get(t), cap_old)
    }
    touched: set[str] = set()
    hard: set[str] = set()  # papers holding a term whose weight or linking status moved
    for t in changed:
        holders = set(post_new.get(t, ()))
        holders.update(p for p in post_old.get(t, ()) if p in paper_terms)
        touched |= holders
        old_ps, new_ps = post_old.get(t), post_new.get(t)
        if not (
            links(old_ps, cap_old) and links(new_ps, cap_new)
            and term_weight(len(old_ps or ())) == term_weight(len(new_ps or ()))
        ):
            hard |= holders
    index = _TermIndex(paper_terms, post_new, cap_new)
    soft = touched - hard - moved_papers
    if soft:
        gone = set(old_sets) - set(paper_terms)
        reached = _partners_reached(
            index, soft, moved_papers & paper_terms.keys(), gone, old_edges, old_by,
            min_weight, top_k,
        )
        touched = (touched - soft) | reached
    lists = index.partners(sorted(index.row[p] for p in touched), min_weight, top_k)
    kept: dict[tuple[str, str], set[str]] = {}
    for (a, b), by in old_by.items():
        if a not in paper_terms or b not in paper_terms:
            continue
        ends = {a, b} if by == "both" else {a if by == "source" else b}
        ends -= touched
        if ends:
            kept[(a, b)] = ends
    edges = _edges_from_lists(
        index, lists, kept, paper_terms, term_names, old_edges, moved_papers, hard, renamed,
        old_by, set().union(*(post_new.get(t, ()) for t in renamed or ())),
    )
    return edges, touched


def cooccurrence_edges(
    paper_terms: Mapping[str, Mapping[str, float]],
    concept_ids: Iterable[str],
    *,
    min_count: int = 2,
    top_k: int = 10,
) -> list[Edge]:
    """RELATED_TO edges between concepts co-mentioned by at least ``min_count`` papers.

    Each concept keeps its ``top_k`` partners by (-count, partner's df, partner). That is
    the order (-count, -NPMI) gave: for one concept a and one count c < N,
    NPMI = ln(c N / (df_a df_b)) / ln(N / c) falls strictly as df_b rises; at c = N every
    partner is in all N papers, a tie either way, broken by id. Nothing stored depends on
    N, so an add rewrites only pairs whose count or membership it changes.
    """
    import scipy.sparse as sp

    concepts = set(concept_ids)
    names = sorted({t for terms in paper_terms.values() for t in terms if t in concepts})
    if not names:
        return []
    cindex = {c: i for i, c in enumerate(names)}
    rows: list[int] = []
    cols: list[int] = []
    for i, terms in enumerate(paper_terms.values()):
        for t in terms:
            j = cindex.get(t)
            if j is not None:
                rows.append(i)
                cols.append(j)
    x = sp.csr_matrix(
        (np.ones(len(rows), dtype=np.int64), (rows, cols)), shape=(len(paper_terms), len(names))
    )
    xt = x.T.tocsr()
    df = np.diff(xt.indptr)  # papers per concept (a paper holds a term once)
    keep: dict[tuple[int, int], int] = {}
    # concepts x concepts co-mention counts, a block of rows at a time (memory O(block x C))
    for start in range(0, len(names), SPARSE_BLOCK_ROWS):
        block = (xt[start : start + SPARSE_BLOCK_ROWS] @ x).tocsr()
        for bi in range(block.shape[0]):
            a = start + bi
            lo, hi = block.indptr[bi], block.indptr[bi + 1]
            cols_r, counts = block.indices[lo:hi], block.data[lo:hi]
            mask = (cols_r != a) & (counts >= min_count)
            cols_r, counts = cols_r[mask], counts[mask]
            # names are sorted, so the column order is the id order
            for j in np.lexsort((cols_r, df[cols_r], -counts))[:top_k]:
                b = int(cols_r[j])
                keep[(a, b) if a < b else (b, a)] = int(counts[j])
    return [
        Edge(names[a], names[b], RelType.RELATED_TO, float(c), CountAttrs(c))
        for (a, b), c in sorted(keep.items())
    ]


def mention_edges(terms: Iterable[PaperTerm]) -> list[Edge]:
    """MENTIONS (concepts), INTRODUCES or USES (datasets): one edge per resolved paper term."""
    edges: list[Edge] = []
    for t in terms:
        if t.kind is NodeKind.DATASET:
            rel = RelType.INTRODUCES if t.introduces else RelType.USES
        else:
            rel = RelType.MENTIONS
        edges.append(Edge(t.paper, t.term, rel, t.weight, MentionAttrs(t.evidence, t.count)))
    return edges


# --------------------------------------------------------------------------- region updates
# What an add or remove changes, computed from the papers and terms it reaches: the
# caller (graph.region) keeps every paper's terms, each term's papers and the partner
# lists each paper or concept keeps, and reads the stored edges of the region alone.

Kept = dict[str, list[tuple[float, str]]]  # paper or concept -> the partners its list keeps


class PaperColumns:
    """Every paper as a number, and each term's holders as those numbers, kept between
    adds (the region state holds one) for :class:`_SubIndex`: an add's linking terms are
    held by most of a large corpus (60-90k of 100k papers), and sorting their ids and
    looking each holder up again was ~130 ms an add. A paper keeps its number for the
    life of the object (a removed one leaves a hole). A term's numbers are kept with the
    very set they were made from; a change reads a moved term through a
    :class:`graph.overlay.DeltaSet` of that set, numbered from the set's numbers and the
    few papers that moved, and :meth:`applied` carries those numbers over when the
    change's commit applies the view to the set in place."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.names: list[str] = []
        self._held: dict[str, tuple[Collection[str], NDArray[np.int64]]] = {}
        # a change's views: (view, its version when numbered, numbers)
        self._views: dict[str, tuple[DeltaSet, int, NDArray[np.int64]]] = {}

    def number(self, paper: str) -> int:
        """The number of ``paper``, given now if it has none."""
        at = self.index.get(paper)
        if at is None:
            at = self.index[paper] = len(self.names)
            self.names.append(paper)
        return at

    def _numbers(self, papers: Iterable[str], count: int) -> NDArray[np.int64]:
        return np.fromiter(map(self.number, papers), dtype=np.int64, count=count)

    def holders(self, term: str, papers: Collection[str]) -> NDArray[np.int64]:
        """The numbers of ``papers`` (``term``'s holders), in no set order (a product's
        sums do not depend on a term's column order)."""
        if isinstance(papers, DeltaSet):
            view = self._views.get(term)
            if view is not None and view[0] is papers and view[1] == papers.version:
                return view[2]
            numbers = self._moved(self.holders(term, papers.base), papers)
            self._views[term] = (papers, papers.version, numbers)
            return numbers
        got = self._held.get(term)
        if got is not None and got[0] is papers:
            return got[1]
        index = self.index
        if all(p in index for p in papers):
            numbers = np.fromiter(map(index.__getitem__, papers), dtype=np.int64,
                                  count=len(papers))
        else:
            numbers = self._numbers(papers, len(papers))
        self._held[term] = (papers, numbers)
        return numbers

    def applied(self, term: str, view: DeltaSet) -> None:
        """``view`` is being applied to its set in place (a commit): the set's kept
        numbers become the view's (moved by the papers the view adds and takes away, if
        it was never numbered). Call it for every view applied, before
        :meth:`DeltaSet.apply`."""
        got = self._views.pop(term, None)
        held = self._held.get(term)
        if got is not None and got[0] is view and got[1] == view.version:
            self._held[term] = (view.base, got[2])
        elif held is not None and held[0] is view.base:
            self._held[term] = (view.base, self._moved(held[1], view))
        else:
            self._held.pop(term, None)

    def _moved(self, numbers: NDArray[np.int64], view: DeltaSet) -> NDArray[np.int64]:
        """The numbers of ``view`` from those of its set (``numbers``)."""
        if view.minus:
            numbers = numbers[~np.isin(numbers, self._numbers(view.minus, len(view.minus)))]
        if view.plus:
            numbers = np.concatenate((numbers, self._numbers(view.plus, len(view.plus))))
        return numbers

    def settled(self) -> None:
        """A change ended (committed or not): its views' numbers are not needed again."""
        self._views.clear()


class _SubIndex(_TermIndex):
    """:class:`_TermIndex` over the linking terms of some papers only (``rows``), with
    every paper holding one of them as a column: the same scores to the bit (each row's
    sum runs over its own terms in id order, as in the whole index). Only the ``rows``
    have entries in :attr:`x`: the products take their rows alone.

    Rows and columns are :class:`PaperColumns` numbers (``numbering``: kept by the
    caller between calls), not id order: :meth:`partners` breaks ties by id itself, and
    :attr:`ids` maps a number back (a number no paper holds now is never a partner)."""

    def __init__(
        self,
        paper_terms: Mapping[str, Mapping[str, float]],
        postings: Mapping[str, Collection[str]],
        max_papers: int,
        rows: Iterable[str],
        numbering: PaperColumns | None = None,
    ) -> None:
        import scipy.sparse as sp

        numbering = numbering if numbering is not None else PaperColumns()
        rows = list(rows)
        for p in rows:
            numbering.number(p)
        sizes_of = {t: len(postings.get(t, ()))
                    for t in set().union(*(paper_terms[p] for p in rows))}
        self.linking = sorted(t for t, d in sizes_of.items() if 2 <= d <= max_papers)
        sizes = [sizes_of[t] for t in self.linking]
        # each term's row holds its papers in the set's order, which moves no sum (a
        # product's entry adds its left row's terms in their order)
        parts = [numbering.holders(t, postings[t]) for t in self.linking]
        self.ids = numbering.names
        self.row = numbering.index
        self.tindex = dict(zip(self.linking, range(len(self.linking)), strict=True))
        # a weight is a function of df alone: once per distinct df, not per term
        by_df = {d: term_weight(d) for d in set(sizes)}
        shown_df = {d: round(w, 4) for d, w in by_df.items()}
        self.weight = {t: by_df[d] for t, d in zip(self.linking, sizes, strict=True)}
        self.shown = {t: shown_df[d] for t, d in zip(self.linking, sizes, strict=True)}
        width = len(self.ids)
        r_idx = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        indptr = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=indptr[1:])
        w_vec = np.fromiter((by_df[d] for d in sizes), dtype=np.float64, count=len(sizes))
        self.weighted_t = sp.csr_matrix(
            (np.repeat(w_vec, sizes), r_idx, indptr), shape=(len(self.linking), width)
        )
        # papers x terms for the rows only (a stable sort by row keeps the term order)
        mine = np.zeros(width, dtype=bool)
        mine[[self.row[p] for p in rows]] = True
        at = mine[r_idx]
        c_idx = np.repeat(np.arange(len(self.linking), dtype=np.int64), sizes)[at]
        self.x = sp.csr_matrix((np.ones(len(c_idx), dtype=np.float64), (r_idx[at], c_idx)),
                               shape=(width, len(self.linking)))
        self._ordered = {}

    def _best(self, cols: NDArray[Any], weights: NDArray[np.float64], top_k: int) -> list[str]:
        """The ``top_k`` of ``cols`` by (-weight, id): the columns are not in id order, so
        those at or above the k-th weight are ordered by id in Python."""
        ids = self.ids
        if len(cols) > top_k:
            kth = np.partition(weights, len(weights) - top_k)[len(weights) - top_k]
            at = np.flatnonzero(weights >= kth)
            cols, weights = cols[at], weights[at]
        ranked = sorted(zip((-weights).tolist(), [ids[c] for c in cols.tolist()],
                            strict=True))
        return [pid for _, pid in ranked[:top_k]]


@dataclass
class RegionEdges:
    """The rows of one edge type an add or remove writes and deletes, and the partner
    lists it recomputed (their keepers' new lists)."""

    upsert: list[Edge]
    delete: list[tuple[str, str, RelType]]
    lists: Kept
    co: CoRows | None = None  # RELATED_TO's kept co-mention rows, for ConceptColumns.commit


def _changes(
    made: Iterable[Edge], stored: Mapping[tuple[str, str], Edge], rel: RelType,
    alive: Callable[[str], bool],
) -> tuple[list[Edge], list[tuple[str, str, RelType]]]:
    """(edges that differ from the stored ones, stored pairs not made any more)."""
    upsert = []
    made_keys = set()
    for e in made:
        made_keys.add((e.source, e.target))
        old = stored.get((e.source, e.target))
        if old is None or (old is not e and (
            abs(old.weight - e.weight) >= 1e-9
            or (old.attrs != e.attrs and dict(old.attrs) != dict(e.attrs))
        )):
            upsert.append(e)
    delete = [(a, b, rel) for (a, b) in stored if (a, b) not in made_keys and alive(a) and alive(b)]
    return upsert, delete


def _set_of(papers: Collection[str]) -> set[str]:
    """``papers`` as a new plain set (a view's without iterating it)."""
    return papers.copy() if isinstance(papers, (set, DeltaSet)) else set(papers)


def shared_terms_region(
    paper_terms: Mapping[str, Mapping[str, float]],
    postings: Mapping[str, Collection[str]],
    old_terms: Mapping[str, Collection[str]],
    n_old: int,
    kept_lists: Mapping[str, Sequence[tuple[float, str]]],
    stored_of: Callable[[Collection[str]], Iterable[Edge]],
    term_names: Mapping[str, str],
    renamed: Collection[str],
    *,
    max_df: float = 0.2,
    min_weight: float = 1.0,
    top_k: int = 20,
    max_term_papers: int = MAX_TERM_PAPERS,
    numbering: PaperColumns | None = None,
) -> RegionEdges:
    """The SHARES_TERM rows an add or remove changes: :func:`update_shared_terms` (the
    same touched and reached papers, the same edges) without the whole graph.

    ``paper_terms``/``postings``: every paper's terms and every term's papers after the
    change; ``old_terms``: before it, for the papers whose terms changed (a new paper:
    empty; a removed one: absent from ``paper_terms``); ``kept_lists``: the (weight,
    partner) each paper's stored list keeps; ``stored_of``: the stored SHARES_TERM
    edges touching some papers; ``numbering``: the caller's :class:`PaperColumns`, kept
    between changes (a new one when None).
    """
    numbering = numbering if numbering is not None else PaperColumns()
    n = len(paper_terms)
    gone = {p for p in old_terms if p not in paper_terms}
    moved: set[str] = set()
    moved_papers: set[str] = set()
    gained: dict[str, set[str]] = defaultdict(set)  # term -> papers that gained it
    lost: dict[str, set[str]] = defaultdict(set)
    for p, old in old_terms.items():
        now = set(paper_terms.get(p, ()))
        was = set(old)
        if now != was:
            moved_papers.add(p)
            moved |= now ^ was
            for t in now - was:
                gained[t].add(p)
            for t in was - now:
                lost[t].add(p)

    def old_size(t: str) -> int:
        return len(postings.get(t, ())) - len(gained.get(t, ())) + len(lost.get(t, ()))

    cap_new = linking_cap(n, max_df, max_term_papers)
    cap_old = linking_cap(n_old, max_df, max_term_papers)

    def links(size: int, cap: int) -> bool:
        return 2 <= size <= cap

    if cap_new != cap_old:
        lo, hi = min(cap_new, cap_old), max(cap_new, cap_old) + 1
        moved.update(
            t for t, ps in postings.items() if lo <= len(ps) <= hi
            and links(len(ps), cap_new) != links(old_size(t), cap_old)
        )
    touched: set[str] = set()
    hard: set[str] = set()
    hard_terms: dict[str, set[str]] = defaultdict(set)  # paper -> its terms in hard's sense
    for t in moved:
        size_new, size_old = len(postings.get(t, ())), old_size(t)
        if not (links(size_new, cap_new) or links(size_old, cap_old)):
            continue
        # the holders before and after: before = (after - gained) | lost, so the ones
        # before that are not after are the lost ones
        holders = _set_of(postings.get(t, ()))
        holders.update(p for p in lost.get(t, ()) if p in paper_terms)
        touched |= holders
        if not (links(size_old, cap_old) and links(size_new, cap_new)
                and term_weight(size_old) == term_weight(size_new)):
            hard |= holders
            for p in holders:
                hard_terms[p].add(t)
    movers = moved_papers & paper_terms.keys()
    soft = touched - hard - moved_papers
    if soft:
        reached: set[str] = set()
        # a list keeping a changed or gone paper q is recomputed. Only a paper that had
        # terms can be kept (a partner shares one), and a list keeps q only through a
        # stored edge with q: so only q's stored partners are looked at, not every list
        listed = {p for p in movers if old_terms.get(p)} | gone
        keeps_listed: set[str] = set()
        if listed:
            for e in stored_of(sorted(listed)):
                if e.type is not RelType.SHARES_TERM:
                    continue
                for p, q in ((e.source, e.target), (e.target, e.source)):
                    if q in listed and p in soft and any(x == q for _, x in kept_lists.get(p, ())):
                        keeps_listed.add(p)
        # a short list is reached by any partner; a full one by a pair reaching its
        # lightest (in C: the soft papers of a hub term are tens of thousands at 100k)
        soft_list = list(soft)
        soft_lists = list(map(kept_lists.get, soft_list, itertools.repeat(())))
        is_full = np.fromiter(map(len, soft_lists), dtype=np.int64,
                              count=len(soft_lists)) >= top_k
        full = is_full.tolist()
        reached.update(itertools.compress(soft_list, (~is_full).tolist()))
        lightest = map(min, itertools.compress(soft_lists, full))
        threshold = dict(zip(itertools.compress(soft_list, full),
                             map(operator.itemgetter(0), lightest), strict=True))
        for p in keeps_listed:
            if threshold.pop(p, None) is not None:
                reached.add(p)
        if movers:
            sub = _SubIndex(paper_terms, postings, cap_new, movers, numbering)
            if sub.linking:
                thr = np.full(len(sub.ids), np.inf)
                at = np.fromiter(map(sub.row.get, threshold, itertools.repeat(-1)),
                                 dtype=np.int64, count=len(threshold))
                vals = np.fromiter(threshold.values(), dtype=np.float64, count=len(threshold))
                thr[at[at >= 0]] = vals[at >= 0]
                rows = sorted(sub.row[m] for m in movers)
                slack = 10.0 ** -SCORE_DECIMALS
                for start in range(0, len(rows), SPARSE_BLOCK_ROWS):
                    part = rows[start : start + SPARSE_BLOCK_ROWS]
                    block = (sub.x[part] @ sub.weighted_t).tocsr()
                    hit = (block.data >= thr[block.indices] - slack) & (
                        block.data >= min_weight - slack
                    )
                    reached.update(sub.ids[int(c)] for c in np.unique(block.indices[hit]))
        touched = (touched - soft) | (reached & soft)
    renamed_holders: set[str] = set()
    for t in renamed:
        renamed_holders.update(postings.get(t, ()))
    index = _SubIndex(paper_terms, postings, cap_new, touched, numbering)
    lists = index.partners(sorted(index.row[p] for p in touched), min_weight, top_k)
    stored: dict[tuple[str, str], Edge] = {}
    for e in stored_of(sorted(touched | renamed_holders)):
        if e.type is RelType.SHARES_TERM:
            stored[(e.source, e.target)] = e
    by: dict[tuple[str, str], str] = {}
    kept: dict[tuple[str, str], set[str]] = {}
    for (a, b), e in stored.items():
        by[(a, b)] = str(e.attrs.get("kept_by"))
        if a not in paper_terms or b not in paper_terms:
            continue
        if (a in touched or b in touched) or (a in renamed_holders and b in renamed_holders):
            keep = by[(a, b)]
            ends = {a, b} if keep == "both" else {a if keep == "source" else b}
            ends -= touched
            if ends:
                kept[(a, b)] = ends
    def same_terms(a: str, b: str) -> bool:
        # a term adds the same to the pair before and after unless its weight or linking
        # status moved (hard_terms) or an end gained or lost it: none of those held by
        # both ends, before or after, and the stored edge is still exact
        ha, hb = hard_terms.get(a), hard_terms.get(b)
        if ha and hb and not ha.isdisjoint(hb):
            return False
        for x, y in ((a, b), (b, a)):
            if x not in moved_papers:
                continue
            was_x, now_x = old_terms[x], paper_terms[x]
            was_y = old_terms[y] if y in moved_papers else paper_terms[y]
            now_y = paper_terms[y]
            for t in set(was_x).symmetric_difference(now_x):
                if (t in was_x and t in was_y) or (t in now_x and t in now_y):
                    return False
        return True

    made = _edges_from_lists(
        index, lists, kept, paper_terms, term_names, stored, moved_papers, hard, set(renamed),
        by, renamed_holders, same_terms,
    )
    upsert, delete = _changes(made, stored, RelType.SHARES_TERM, lambda p: p in paper_terms)
    new_lists: Kept = {p: [] for p in touched}
    for e in made:
        end = e.attrs.get("kept_by")
        if end != "target" and e.source in new_lists:
            new_lists[e.source].append((e.weight, e.target))
        if end != "source" and e.target in new_lists:
            new_lists[e.target].append((e.weight, e.source))
    return RegionEdges(upsert, delete, new_lists)


#: a concept held by at least this many papers keeps its whole co-mention row between
#: changes (:class:`ConceptColumns`): its next row is the kept one moved by the changed
#: papers' terms, not a product over all its papers (~50,000 of 100,000 hold the top
#: synthetic concept); a smaller row is cheaper to count again than to keep
KEEP_ROWS_FROM = 256


class CoRows(NamedTuple):
    """What a change does to the kept co-mention rows, applied when it commits
    (:meth:`ConceptColumns.commit`)."""

    moved: frozenset[str]  # concepts whose counts the change moves: their kept rows go
    rows: dict[str, tuple[NDArray[np.int64], NDArray[np.int64]]]  # new whole rows to keep
    # how many concepts have each df, and each full list's k-th count by column (-1: not
    # full), after the change (:attr:`ConceptColumns.df_hist`, :attr:`ConceptColumns.kth`)
    df_hist: NDArray[np.int64] | None = None
    kth: tuple[int, NDArray[np.int64]] | None = None


class ConceptColumns:
    """Each paper's concepts as column numbers, kept between adds (the region state holds
    one): :func:`_co_rows` stacks them into its paper x concept matrix without a Python
    step per term. Columns are numbered as concepts first appear, never reused; a paper's
    entry is made when first asked and dropped when its terms change (:meth:`forget`).

    Also the whole co-mention rows of big concepts (``co``: partner columns, sorted, and
    counts >= 1, the concept itself left out), as the committed graph has them; a change
    brings them forward only when it commits (:meth:`commit`)."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.names: list[str] = []
        self.rows: dict[str, NDArray[np.int64]] = {}
        self.co: dict[str, tuple[NDArray[np.int64], NDArray[np.int64]]] = {}
        # of the committed graph, for :func:`related_region`'s tie-break (made there from
        # the whole corpus when None: O(concepts), ~0.1 s an add at 30k papers):
        # df_hist[d] = how many live concepts d papers hold; kth = (top_k, each concept's
        # full list's k-th count by column, -1 where its list is not full)
        self.df_hist: NDArray[np.int64] | None = None
        self.kth: tuple[int, NDArray[np.int64]] | None = None

    def column(self, term: str) -> int:
        """The column of ``term``, numbered now if it has none."""
        at = self.index.get(term)
        if at is None:
            at = self.index[term] = len(self.names)
            self.names.append(term)
        return at

    def of(self, paper: str, terms: Iterable[str], is_concept: Callable[[str], bool],
           *, keep: bool) -> NDArray[np.int64]:
        """The columns of ``paper``'s concepts; kept for the next call only if ``keep``
        (a paper whose terms this change moves is not kept: the change may not commit)."""
        got = self.rows.get(paper) if keep else None
        if got is None:
            got = np.asarray([self.column(t) for t in terms if is_concept(t)], dtype=np.int64)
            if keep:
                self.rows[paper] = got
        return got

    def fill(
        self, paper_terms: Mapping[str, Iterable[str]], postings: Mapping[str, Collection[str]],
        is_concept: Callable[[str], bool], kept_lists: Mapping[str, Sequence[tuple[float, str]]],
        top_k: int = 10,
    ) -> None:
        """Make now, of the committed graph, what the first change would (a server's
        warm-up): every paper's columns, the concepts' df histogram and each full list's
        k-th count (``kept_lists``: each concept's stored list, as :func:`related_region`
        takes them, for lists of ``top_k``)."""
        for p, terms in paper_terms.items():
            self.of(p, terms, is_concept, keep=True)
        if self.df_hist is None:
            self.df_hist = _df_hist_after(None, postings, is_concept, {})
        if self.kth is None:
            full = {self.column(a): int(min(c for c, _ in lst))
                    for a, lst in kept_lists.items() if len(lst) >= top_k}
            kth = np.full(len(self.names), -1, dtype=np.int64)
            for col, count in full.items():
                kth[col] = count
            self.kth = (top_k, kth)

    def forget(self, papers: Iterable[str]) -> None:
        """Drop the entries of papers whose terms changed (or that are gone)."""
        for p in papers:
            self.rows.pop(p, None)

    def commit(self, papers: Iterable[str], co: CoRows | None) -> None:
        """A change committed: ``papers`` (whose terms it moved) are forgotten, and the
        kept co-mention rows become the change's (:func:`related_region`'s ``co``)."""
        self.forget(papers)
        if co is not None:
            for c in co.moved:
                self.co.pop(c, None)
            self.co.update(co.rows)
            self.df_hist, self.kth = co.df_hist, co.kth
        else:
            self.df_hist = self.kth = None


class _CoRow:
    """One concept's co-mention counts (>= min_count, itself left out) from a
    :func:`_co_rows` batch: partner columns and counts (ties ranked by id in :meth:`top`)."""

    __slots__ = ("cols", "counts", "df_of", "index", "names")

    def __init__(
        self, names: list[str], index: Mapping[str, int],
        df_of: Callable[[NDArray[np.int64]], NDArray[np.int64]],
        cols: NDArray[np.int64], counts: NDArray[np.int64],
    ) -> None:
        self.names, self.index, self.df_of = names, index, df_of
        self.cols, self.counts = cols, counts

    def items(self) -> Iterable[tuple[str, int]]:
        names = self.names
        return [(names[c], n) for c, n in zip(self.cols.tolist(), self.counts.tolist(),
                                                 strict=True)]

    def count(self, partner: str) -> int | None:
        c = self.index.get(partner)
        if c is None:
            return None
        at = int(np.searchsorted(self.cols, c))
        return int(self.counts[at]) if at < len(self.cols) and self.cols[at] == c else None

    def top(self, top_k: int) -> list[tuple[float, str]]:
        """The ``top_k`` partners by (-count, the partner's df, id), as (count, partner)."""
        if top_k <= 0 or not len(self.cols):
            return []
        cols, counts = self.cols, self.counts
        if len(cols) > top_k:
            # the top k all count at least the k-th largest count (each partner below it
            # has k ahead of it): only those need their df (a hub's row holds thousands)
            floor = np.partition(counts, len(counts) - top_k)[len(counts) - top_k]
            at = np.flatnonzero(counts >= floor)
            cols, counts = cols[at], counts[at]
        df = self.df_of(cols)
        at = np.arange(len(cols))
        if len(at) > top_k:
            # column numbers are not in id order: everything that ties with the k-th by
            # (-count, df) or ranks above it, then ordered by id in Python
            kth = np.lexsort((df, -counts))[top_k - 1]
            c, d = counts[kth], df[kth]
            at = np.flatnonzero((counts > c) | ((counts == c) & (df <= d)))
        names = self.names
        ranked = sorted(
            (-n, f, names[col])
            for n, f, col in zip(counts[at].tolist(), df[at].tolist(), cols[at].tolist(),
                                 strict=True)
        )[:top_k]
        return [(float(-n), name) for n, _, name in ranked]


def _moved_row(
    kept: tuple[NDArray[np.int64], NDArray[np.int64]], own: int,
    changes: Sequence[tuple[NDArray[np.int64], NDArray[np.int64]]],
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """A kept whole co-mention row moved by the changed papers' concept columns (old,
    new): -1 with each other old concept of a paper that held it, +1 with each new one."""
    cols, counts = [], []
    for old, new in changes:
        for part, sign in ((old, -1), (new, 1)):
            if own in part:
                others = part[part != own]
                cols.append(others)
                counts.append(np.full(len(others), sign, dtype=np.int64))
    if not cols:
        return kept
    # the moves summed (a few hundred columns), then merged into the kept row by
    # position: a hub's row holds tens of thousands of columns, and sorting it again
    # with the moves (np.unique) was ~80 ms an add at 100k papers
    moved, inverse = np.unique(np.concatenate(cols), return_inverse=True)
    by = np.zeros(len(moved), dtype=np.int64)
    np.add.at(by, inverse, np.concatenate(counts))
    at_cols, at_counts = kept
    pos = np.searchsorted(at_cols, moved)
    held = pos < len(at_cols)
    held[held] = at_cols[pos[held]] == moved[held]
    sums = at_counts.astype(np.int64, copy=True)
    np.add.at(sums, pos[held], by[held])
    extra = ~held & (by > 0)
    out_cols = np.insert(at_cols.astype(np.int64, copy=False), pos[extra], moved[extra])
    out_counts = np.insert(sums, pos[extra], by[extra])
    alive = out_counts > 0
    return out_cols[alive], out_counts[alive]


def _co_rows(
    wanted: Sequence[str],
    paper_terms: Mapping[str, Mapping[str, float]],
    postings: Mapping[str, Collection[str]],
    is_concept: Callable[[str], bool],
    min_count: int,
    columns: ConceptColumns,
    old_terms: Mapping[str, Collection[str]],
    keep_from: int = KEEP_ROWS_FROM,
) -> tuple[list[tuple[str, _CoRow]], dict[str, tuple[NDArray[np.int64], NDArray[np.int64]]]]:
    """The co-mention counts of the ``wanted`` concepts with every concept (what
    :func:`cooccurrence_edges` counts, for those rows only: integer counts, the same in
    any order), and the whole rows to keep for those held by >= ``keep_from`` papers.

    A row ``columns`` keeps is moved by the changed papers' terms (``old_terms``: each
    changed paper's terms before the change); the others are one sparse product over the
    papers that hold one of them. ``columns``' paper entries are kept between calls except
    for the changed papers."""
    import scipy.sparse as sp

    if not wanted:
        return [], {}
    names, index = columns.names, columns.index
    own = {a: columns.column(a) for a in wanted}
    whole: dict[str, tuple[NDArray[np.int64], NDArray[np.int64]]] = {}
    kept_rows = [a for a in wanted if a in columns.co]
    if kept_rows:
        changes = [
            (np.asarray([columns.column(t) for t in old if is_concept(t)], dtype=np.int64),
             columns.of(q, paper_terms.get(q, ()), is_concept, keep=False))
            for q, old in sorted(old_terms.items())
        ]
        for a in kept_rows:
            whole[a] = _moved_row(columns.co[a], own[a], changes)
    counted = [a for a in wanted if a not in whole]
    if counted:
        # the papers in any order (the counts are integers: the same in any order), their
        # kept columns looked up in C; a changed paper's are made from its terms now
        papers = set().union(*(postings.get(a, ()) for a in counted))
        moved = [q for q in old_terms if q in papers]
        order = list(papers.difference(moved))
        got = list(map(columns.rows.get, order))
        parts = cast("list[NDArray[np.int64]]", got) if all(c is not None for c in got) else [
            c if c is not None else columns.of(q, paper_terms[q], is_concept, keep=True)
            for q, c in zip(order, got, strict=True)
        ]
        parts.extend(columns.of(q, paper_terms[q], is_concept, keep=False) for q in moved)
        mine = np.asarray([own[a] for a in counted], dtype=np.int64)
        indptr = np.zeros(len(parts) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, parts), dtype=np.int64, count=len(parts)),
                  out=indptr[1:])
        indices = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        x = sp.csr_matrix((np.ones(len(indices), dtype=np.int64), indices, indptr),
                          shape=(len(parts), len(names)))
        m = (x[:, mine].T.tocsr() @ x).tocsr()
        m.sort_indices()
        for r, a in enumerate(counted):
            lo, hi = m.indptr[r], m.indptr[r + 1]
            cols = m.indices[lo:hi].astype(np.int64)
            counts = m.data[lo:hi].astype(np.int64)
            other = (cols != own[a]) & (counts > 0)
            whole[a] = (cols[other], counts[other])

    def df_of(cols: NDArray[np.int64]) -> NDArray[np.int64]:
        return np.asarray([len(postings.get(names[c], ())) for c in cols.tolist()],
                          dtype=np.int64)

    out = []
    for a in wanted:
        cols, counts = whole[a]
        keep = counts >= min_count
        out.append((a, _CoRow(names, index, df_of, cols[keep], counts[keep])))
    big = {a: whole[a] for a in wanted if len(postings.get(a, ())) >= keep_from}
    return out, big


def related_region(
    paper_terms: Mapping[str, Mapping[str, float]],
    postings: Mapping[str, Collection[str]],
    old_terms: Mapping[str, Collection[str]],
    is_concept: Callable[[str], bool],
    kept_lists: Mapping[str, Sequence[tuple[float, str]]],
    *,
    min_count: int = 2,
    top_k: int = 10,
    columns: ConceptColumns | None = None,
    keep_rows_from: int = KEEP_ROWS_FROM,
) -> RegionEdges:
    """The RELATED_TO rows an add or remove changes (:func:`cooccurrence_edges`' edges).

    A concept's list changes only if a paper whose terms changed holds it (a count moved)
    or if the document frequency of a partner tied with its k-th changed (the tie-break):
    only those concepts' co-mention counts are computed, from their papers.

    ``kept_lists``: each concept's stored list, (count, partner). The stored edges are
    those lists' own (an edge is in the graph iff one end's list keeps it, with the count
    both lists give), so none is read: a hub concept has an edge from nearly every concept
    whose list keeps it, and reading them made an add cost O(N).
    ``columns``: the caller's :class:`ConceptColumns`, kept between changes (a new one
    when None); the result's ``co`` goes to its :meth:`ConceptColumns.commit` when the
    change commits (the whole co-mention rows of concepts held by >= ``keep_rows_from``
    papers, kept for the next change).
    """
    columns = columns if columns is not None else ConceptColumns()
    held_by: set[str] = set()
    df_delta: Counter[str] = Counter()
    for p, old in old_terms.items():
        now = set(paper_terms.get(p, ()))
        was = set(old)
        held_by.update(t for t in now | was if is_concept(t))
        df_delta.update(t for t in now - was if is_concept(t))
        df_delta.subtract(t for t in was - now if is_concept(t))
    df_moved = {t for t, d in df_delta.items() if d}

    def alive(c: str) -> bool:
        return bool(postings.get(c))

    rows: dict[str, _CoRow] = {}
    keep: dict[str, tuple[NDArray[np.int64], NDArray[np.int64]]] = {}

    def add_rows(wanted: Iterable[str]) -> None:
        got, big = _co_rows(sorted(wanted), paper_terms, postings, is_concept, min_count,
                            columns, old_terms, keep_rows_from)
        rows.update(got)
        keep.update(big)

    add_rows(a for a in held_by if alive(a))
    # every live concept of df_moved is held by a changed paper, so its row is here
    # already: the rows its tie-break reaches are computed together, in one product.
    # Partners tied at a full list's k-th count are ranked by (df, id): b's df going up
    # can only push b out of the lists that hold it, going down only pull it into the
    # lists that do not; moves the other way keep every list's members (order within a
    # list is not kept). So an add recomputes only the lists holding b at the k-th count
    # (at 30k papers, 4,700 concepts an add were recomputed for any tie there).
    need: set[str] = set()
    # each full list's k-th count by column: a hub's row holds nearly every concept, and
    # a Python step per partner of each df-moved hub was most of an add at 100k papers;
    # kept by ``columns`` between changes (each change moves the lists it recomputes)
    # (made here once: every full list's concept gets its column, so a partner numbered
    # by a later change has its k-th count kept already)
    full: dict[int, int] = {}
    if columns.kth is None or columns.kth[0] != top_k:
        full = {columns.column(a): int(min(c for c, _ in lst))
                for a, lst in kept_lists.items() if len(lst) >= top_k}
    kth_at = np.full(len(columns.names), -1, dtype=np.int64)
    if columns.kth is not None and columns.kth[0] == top_k:
        kth_at[: len(columns.kth[1])] = columns.kth[1]
    for col, kth in full.items():
        kth_at[col] = kth
    # A list changes by the tie-break only if two partners tied at its k-th count swap
    # order, and a pair swaps only if one's df moved across the other's. So b moves no
    # list if no other concept's df lies in b's df span (old to new), nor another moved
    # concept's span overlaps it: a hub's df (tens of thousands) is its own; a rare one's
    # is shared by many, and those keep the rule above.
    span = {b: tuple(sorted((len(postings.get(b, ())), len(postings.get(b, ())) - d)))
            for b, d in df_delta.items() if d}
    df_hist = _df_hist_after(columns.df_hist, postings, is_concept, df_delta)

    def quiet(b: str) -> bool:
        lo, hi = span[b]
        inside = int(df_hist[lo : hi + 1].sum())
        if inside - (1 if alive(b) else 0) > 0:  # b's own df now is one of them
            return False
        return not any(v != b and v_lo <= hi and lo <= v_hi for v, (v_lo, v_hi) in span.items())

    for b in sorted(df_moved):
        got = rows.get(b)
        if got is None or quiet(b):
            continue
        up = df_delta[b] > 0
        for col in got.cols[got.counts == kth_at[got.cols]].tolist():
            a = columns.names[col]
            if a in rows or a in need:
                continue
            if up == any(q == b for _, q in kept_lists.get(a, ())):
                need.add(a)
    add_rows(need)
    lists: Kept = {a: r.top(top_k) for a, r in rows.items()}

    def old_count(a: str, b: str) -> float | None:
        for c, q in kept_lists.get(a, ()):
            if q == b:
                return c
        for c, q in kept_lists.get(b, ()):
            if q == a:
                return c
        return None

    # The stored edges a change can move: the pairs the old or the new list of a
    # recomputed concept holds. An edge that only the other end's list keeps, that end not
    # recomputed, stays as it is: its count moves only if a changed paper holds both ends,
    # and then both are recomputed. So those are neither read nor compared.
    stored: dict[tuple[str, str], Edge] = {}
    for a in sorted(rows):
        for _, b in [*kept_lists.get(a, ()), *lists[a]]:
            key = (a, b) if a < b else (b, a)
            if key in stored:
                continue
            c = old_count(a, b)
            if c is not None:
                stored[key] = Edge(key[0], key[1], RelType.RELATED_TO, float(c),
                                   CountAttrs(int(c)))
    pairs: dict[tuple[str, str], int] = {}
    for a, lst in lists.items():
        for c, b in lst:
            pairs[(a, b) if a < b else (b, a)] = int(c)
    for (x, y) in stored:
        if (x, y) in pairs or not (alive(x) and alive(y)):
            continue
        for a, b in ((x, y), (y, x)):
            shared = rows[a].count(b) if a in rows and b not in rows else None
            if shared is not None and any(p == a for _, p in kept_lists.get(b, ())):
                pairs[(x, y)] = shared
    made = [Edge(a, b, RelType.RELATED_TO, float(c), CountAttrs(c)) for (a, b), c in pairs.items()]
    upsert, delete = _changes(made, stored, RelType.RELATED_TO, alive)
    delete = [k for k in delete if k[0] in rows or k[1] in rows]
    # a kept row moves only through a changed paper holding its concept (held_by);
    # the other rows computed here (the tie-break's) are as they were
    list_cols = {a: columns.column(a) for a in lists}
    kth_now = np.full(len(columns.names), -1, dtype=np.int64)
    kth_now[: len(kth_at)] = kth_at
    for a, lst in lists.items():
        kth_now[list_cols[a]] = int(min(c for c, _ in lst)) if len(lst) >= top_k else -1
    for a in held_by:
        if not alive(a) and a in columns.index:
            kth_now[columns.index[a]] = -1  # its list goes with it
    co = CoRows(frozenset(held_by), {a: r for a, r in keep.items() if a in held_by
                                     or a not in columns.co}, df_hist, (top_k, kth_now))
    return RegionEdges(upsert, delete, lists, co)


def _df_hist_after(
    kept: NDArray[np.int64] | None, postings: Mapping[str, Collection[str]],
    is_concept: Callable[[str], bool], df_delta: Mapping[str, int],
) -> NDArray[np.int64]:
    """How many live concepts each df has after a change: the kept histogram (before it)
    moved by ``df_delta`` (each concept's df change), or counted from ``postings`` (after
    it) when none is kept."""
    if kept is None:
        dfs = np.fromiter((len(ps) for t, ps in postings.items() if ps and is_concept(t)),
                          dtype=np.int64)
        return np.bincount(dfs, minlength=2).astype(np.int64)
    top = max([len(kept) - 1, *(len(postings.get(b, ())) for b in df_delta)])
    hist = np.zeros(top + 1, dtype=np.int64)
    hist[: len(kept)] = kept
    for b, d in df_delta.items():
        if not d:
            continue
        now = len(postings.get(b, ()))
        if now - d > 0:
            hist[now - d] -= 1
        if now > 0:
            hist[now] += 1
    return hist
