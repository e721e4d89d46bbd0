"""The word lists the rules stand on: ``graph/data`` files and the head-word tables."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

_DATA_DIR = Path(__file__).parent.parent / "data"


@dataclass(frozen=True, slots=True)
class _Lexicon:
    stop: frozenset[str]
    modifiers: frozenset[str]
    weak_heads: frozenset[str]
    generic: frozenset[str]  # modifiers | weak heads | generic nouns
    gazetteer: dict[str, str]  # spelling -> canonical spelling
    gazetteer_first: dict[str, tuple[tuple[tuple[str, ...], str], ...]]  # token -> (tokens, name)
    not_datasets: frozenset[str]


def _read_sections(name: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = defaultdict(list)
    current = ""
    for raw in (_DATA_DIR / name).read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1]
            continue
        sections[current].append(line)
    return sections


def _words(lines: Iterable[str]) -> frozenset[str]:
    return frozenset(w.lower() for line in lines for w in line.split())


@cache
def _lex() -> _Lexicon:
    stop_sections = _read_sections("stopwords.txt")
    generic_sections = _read_sections("generic_terms.txt")
    data_sections = _read_sections("datasets.txt")
    modifiers = _words(generic_sections["modifiers"])
    heads = _words(generic_sections["heads"])
    gazetteer: dict[str, str] = {}
    for line in data_sections["datasets"]:
        names = [n.strip() for n in line.split("|") if n.strip()]
        for n in names:
            gazetteer[n] = names[0]
    not_datasets = frozenset(
        n.strip() for line in data_sections["not_datasets"] for n in line.split("|") if n.strip()
    )
    first: dict[str, list[tuple[tuple[str, ...], str]]] = defaultdict(list)
    for n in sorted(gazetteer, key=lambda s: (-len(s), s)):
        toks = tuple(_TOKEN_RE.findall(n))
        first[toks[0]].append((toks, gazetteer[n]))
    return _Lexicon(
        stop=_words(stop_sections["function"]) | _words(stop_sections["verbs"]),
        modifiers=modifiers,
        weak_heads=heads,
        generic=modifiers | heads | _words(generic_sections["nouns"]),
        gazetteer=gazetteer,
        gazetteer_first={k: tuple(v) for k, v in first.items()},
        not_datasets=not_datasets,
    )


_TOKEN_RE = re.compile(r"[^\W_]+(?:-[^\W_]+|\.\d+(?=[^\w.]|$))*|['’]s\b|\S")


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Head words that make a multiword phrase technical, by category.
_CATEGORY_HEADS: dict[str, frozenset[str]] = {
    "model": _wordset(
        "model network net transformer autoencoder encoder decoder architecture llm lm vlm "
        "lvlm mllm gan vae mlp cnn rnn lstm gnn bert gpt agent classifier generator "
        "discriminator backbone estimator predictor embedding-model policy operator "
        "kernel machine perceptron"
    ),
    "task": _wordset(
        "generation detection classification segmentation retrieval translation recognition "
        "answering prediction understanding estimation tracking synthesis summarization "
        "captioning editing forecasting planning navigation completion reasoning "
        "reconstruction localization personalization control discovery identification "
        "matching parsing ranking recommendation imputation verification search "
        "manipulation grounding inpainting super-resolution denoising restoration "
        "attribution explanation interpretability evaluation"
    ),
    "technique": _wordset(
        "attention regularization dropout augmentation normalization distillation pruning "
        "quantization embedding tuning fine-tuning finetuning prompting prompt sampling decoding "
        "pooling encoding initialization compression unlearning adaptation decomposition "
        "convolution tokenization masking watermarking steering calibration guidance "
        "ensemble ensembling mechanism loss objective regularizer sparsity "
        "alignment merging routing caching retrieval-augmentation chain-of-thought "
        "autoencoding"
    ),
    "method": _wordset(
        "optimization learning algorithm descent search training pretraining pre-training "
        "inference programming propagation feedback method approach framework "
        "game-theory bandit clustering boosting filtering privacy"
    ),
}
_HEAD_CATEGORY: dict[str, str] = {
    w: cat for cat in ("method", "technique", "task", "model") for w in _CATEGORY_HEADS[cat]
}
_TECH_HEADS = frozenset(_HEAD_CATEGORY) - {"method", "approach", "framework", "evaluation"}


# Gerunds the lexicon knows only as verbs but that name things on their own.
_GERUND_NOUNS = _wordset(
    "reasoning planning prompting clustering forecasting captioning tracking parsing hashing "
    "pruning boosting unlearning pretraining finetuning fine-tuning pre-training "
    "distillation grounding inpainting denoising watermarking steering"
)


# Nouns whose -s is not a plural.
_KEEP_S = _wordset(
    "data series analysis species physics mathematics dynamics graphics robotics statistics "
    "linguistics economics ethics news bias process loss class gas lens corpus chaos axis "
    "basis thesis hypothesis diagnosis synthesis diffusion mechanics kinematics genomics "
    "proteomics optics semantics pragmatics logistics metrics"
) - {"metrics"}


# A single word at least this common in general English is too vague to be a concept ...
_COMMON_ZIPF = 4.3


# ... unless it is one of these.
_TECH_SINGLE = _wordset(
    "attention privacy memory safety security reasoning planning reward speech audio bias "
    "noise fairness robustness"
)


# After these, a word that can be a verb is one ("we train", "to increase").
_VERB_CONTEXT = _wordset(
    "to we they can could may might will would should must not also often cannot does do "
    "did it"
)
_ADJ_SUFFIXES = ("able", "ible", "ian", "al", "ive", "ous", "ic", "ful", "less", "ary", "wise")
_NOUN_SUFFIXES = ("ial", "rial", "tional")  # still adjectives, but kept out of the noun test
