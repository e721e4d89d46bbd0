"""The query layer: ordering rules, argument checks, lookup, neighbourhoods, paths and
search, written once over the narrow :class:`~graph.store.base.Backend` seam.

``rules`` (sort keys, checks), ``text`` (keyword scoring), ``vectors`` (cosine),
``traverse`` (neighbourhood, shortest and k paths), ``search`` (name lookup, pages,
keyword and vector search) and ``layer`` (:class:`QueryLayer`, the mixin that gives a
store the GraphStore read methods).
"""

from graph.query.layer import QueryLayer

__all__ = ["QueryLayer"]
