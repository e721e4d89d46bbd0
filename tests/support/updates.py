"""What an add of a stored id leaves in the graph (the rule of ``graph.build._merge_into``)."""

from __future__ import annotations

import dataclasses

from graph.model import Paper

#: the fields an update's record may leave out, keeping the stored value
KEPT_WHEN_EMPTY = ("title", "venue", "year", "authors", "keywords", "urls", "references")


def updated(old: Paper, new: Paper) -> Paper:
    """``new`` as the graph holds it after updating ``old``: every field its record gave
    no value for (None, empty) keeps ``old``'s, and a kept title keeps its label."""
    keep = {f: getattr(old, f) for f in KEPT_WHEN_EMPTY if getattr(new, f) in (None, ())}
    if "title" in keep and old.title:
        keep["label"] = old.label
    return dataclasses.replace(new, **keep) if keep else new
