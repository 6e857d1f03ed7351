"""How a record is laid out in an OpenSearch document so that every declared filter is exact.

A record is one document ``{vector, record_id, metadata, <filter fields>}`` in an index whose mapping is
fixed and ``dynamic: strict`` (see :func:`index_mapping`):

``vector``
    the ``knn_vector`` (Lucene engine, always). ``_source`` keeps the vector exactly as written, so
    ``include_vector`` returns it and scores are recomputed from it in float64 (docs/spec.md §3.2, §3.4).
``record_id``
    the caller's id (``_id`` is the id itself, or its uuid5 when it is longer than OpenSearch's 512 bytes).
``metadata``
    the metadata as JSON text in a ``text`` field with ``index: false``: what reads return, verbatim
    (Python's own ``json`` both ways, so ``1.0`` stays a float, ``2**63 - 1`` stays exact, key order is
    kept). OpenSearch never parses it into mapping fields.
the *filter fields*
    a typed structure derived from the metadata, which is what filters look at. Metadata keys never
    become OpenSearch field names: every path is named by :func:`path_code` (a 32-hex-digit BLAKE2b hash
    of the path), and every value is a keyword term ``<path code>:<encoded value>`` in one of a handful of
    fixed fields:

    ``str``     strings of at most :data:`SHORT_STRING_BYTES` UTF-8 bytes, verbatim after the prefix: term
                equality is byte equality and keyword ranges compare UTF-8 bytes, which is Unicode
                code-point order (docs/spec.md §2.4);
    ``lstr``    the longest prefix of at most :data:`SHORT_STRING_BYTES` bytes of each longer string (for
                ranges), and ``lhash`` its SHA-256 (for equality);
    ``int``     integers within int64 (integral floats too, so ``1`` and ``1.0`` are one term) as 16 hex
                digits of ``v + 2^63``: keyword order is integer order, exactly;
    ``dbl``     every other number (non-integral floats, integral floats beyond int64) as the 16 hex
                digits of its order-preserving float64 bit pattern;
    ``facts``   one keyword per fact of the document, ``<tag>:<path code>``
                (:mod:`mastra_memory.filters.facts`, which the Qdrant adapter's filter document stores
                too): ``p`` the path is present (even null or ``[]``), ``a`` every
                container one level up holds the key, ``c`` it reaches containers to step into, ``s`` it
                reaches a scalar or null (a dead end), ``z``/``t``/``f`` a reached value (or element) is
                null/true/false, ``n:<code>:<k>`` it reaches an array of length ``k``, ``l`` it reaches an
                array holding an array;
    ``elems``   a ``nested`` field: the object elements of the arrays reached at a path, each with its own
                filter fields (paths relative to the element) and ``p``, the array's path code — what
                ``$elemMatch`` runs a ``nested`` query over. Elements of elements nest the same way, up to
                :data:`ELEMENT_DEPTH` levels.

Why this survives real metadata: the mapping has a fixed, small set of fields whatever the keys (no
``total_fields.limit``, no object paths from dotted keys, no mapping depth), each field has one type
whatever the values (no dynamic-mapping type conflicts), every term is bounded in length (no Lucene
32,766-byte term limit), and null, ``[]`` and missing are told apart by facts instead of ``exists``.
Values are resolved the way the reference evaluator resolves paths (implicit traversal of arrays of
objects, array elements at the end of a path), so a term query answers exactly what the evaluator answers.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Mapping, Sequence
from typing import Any, Final

from mastra_memory.filters import facts
from mastra_memory.filters.numbers import INT64_MIN, in_int64

__all__ = [
    "DOUBLE_FIELD",
    "ELEMENTS_FIELD",
    "ELEMENT_DEPTH",
    "FACTS_FIELD",
    "INT_FIELD",
    "LONG_HASH_FIELD",
    "LONG_STRING_FIELD",
    "METADATA_FIELD",
    "PATH_FIELD",
    "RECORD_ID_FIELD",
    "SHORT_STRING_BYTES",
    "STRING_FIELD",
    "VECTOR_FIELD",
    "build_source",
    "count_elements",
    "encode_double",
    "encode_int",
    "fact",
    "filter_fields",
    "index_mapping",
    "metadata_of",
    "path_code",
    "string_hash",
    "string_prefix",
]

VECTOR_FIELD: Final = "vector"
RECORD_ID_FIELD: Final = "record_id"
METADATA_FIELD: Final = "metadata"
STRING_FIELD: Final = "str"
LONG_STRING_FIELD: Final = "lstr"
LONG_HASH_FIELD: Final = "lhash"
INT_FIELD: Final = "int"
DOUBLE_FIELD: Final = "dbl"
FACTS_FIELD: Final = "facts"
ELEMENTS_FIELD: Final = "elems"
PATH_FIELD: Final = "p"
#: Value fields of one filter document (the root, or an element).
VALUE_FIELDS: Final = (STRING_FIELD, LONG_STRING_FIELD, LONG_HASH_FIELD, INT_FIELD, DOUBLE_FIELD, FACTS_FIELD)

#: Strings up to this many UTF-8 bytes are indexed verbatim; longer ones by prefix and hash.
SHORT_STRING_BYTES: Final = 4096
#: Levels of ``elems`` (``$elemMatch`` inside ``$elemMatch`` up to this depth).
ELEMENT_DEPTH: Final = 4
_SIGN: Final = 1 << 63
_MASK: Final = (1 << 64) - 1


def path_code(path: Sequence[str]) -> str:
    """The code of a metadata path: 32 hex digits of BLAKE2b over its JSON (injective in practice)."""
    text = json.dumps(list(path), ensure_ascii=False, separators=(",", ":"))
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def fact(tag: str, path: Sequence[str], extra: int | None = None) -> str:
    """The fact keyword ``<tag>:<path code>`` (``n:<path code>:<k>`` for array lengths)."""
    return facts.fact(tag, path_code(path), extra)


def encode_int(value: int) -> str:
    """An int64 as 16 hex digits that sort as the integers do."""
    return f"{value - INT64_MIN:016x}"


def encode_double(value: float) -> str:
    """A finite float64 as 16 hex digits that sort as the numbers do (``-0.0`` is ``0.0``)."""
    if value == 0.0:
        value = 0.0
    bits: int = struct.unpack(">Q", struct.pack(">d", value))[0]
    bits = (~bits & _MASK) if bits & _SIGN else (bits | _SIGN)
    return f"{bits:016x}"


def string_prefix(value: str) -> str:
    """The longest prefix of ``value`` of at most :data:`SHORT_STRING_BYTES` UTF-8 bytes."""
    data = value.encode("utf-8")
    if len(data) <= SHORT_STRING_BYTES:
        return value
    return data[:SHORT_STRING_BYTES].decode("utf-8", "ignore")


def string_hash(value: str) -> str:
    """SHA-256 of a long string (its equality term)."""
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


def is_short(value: str) -> bool:
    """Whether ``value`` is indexed verbatim in ``str``."""
    return len(value) * 4 <= SHORT_STRING_BYTES or len(value.encode("utf-8")) <= SHORT_STRING_BYTES


def _integral(value: int | float) -> int | None:
    """``value`` as the int64 term it is stored as, if it is one."""
    if isinstance(value, float):
        if not value.is_integer():
            return None
        if not in_int64(value):
            return None
        return int(value)
    return value if in_int64(value) else None


class _Fields:
    """The filter fields of one document being built."""

    def __init__(self) -> None:
        self.values: dict[str, list[str]] = {name: [] for name in VALUE_FIELDS}
        self.facts: set[str] = set()
        self.elements: list[dict[str, Any]] = []

    def scalar(self, value: str | int | float, code: str) -> None:
        if isinstance(value, str):
            if is_short(value):
                self.values[STRING_FIELD].append(f"{code}:{value}")
            else:
                self.values[LONG_STRING_FIELD].append(f"{code}:{string_prefix(value)}")
                self.values[LONG_HASH_FIELD].append(f"{code}:{string_hash(value)}")
        else:
            integer = _integral(value)
            if integer is not None:
                self.values[INT_FIELD].append(f"{code}:{encode_int(integer)}")
            else:
                self.values[DOUBLE_FIELD].append(f"{code}:{encode_double(float(value))}")

    def render(self) -> dict[str, Any]:
        out: dict[str, Any] = {name: sorted(set(terms)) for name, terms in self.values.items() if terms}
        out[FACTS_FIELD] = sorted(self.facts)
        if self.elements:
            out[ELEMENTS_FIELD] = self.elements
        return out


def filter_fields(root: Mapping[str, Any], depth: int = 0) -> dict[str, Any]:
    """The filter fields of one object (the metadata, or an object element of an array): the terms of the
    values reached at each path, the facts of :func:`~mastra_memory.filters.facts.document_facts`, and
    the object elements of the arrays reached (up to :data:`ELEMENT_DEPTH` levels)."""
    fields = _Fields()

    def visit(code: str, scalars: list[Any], objects: list[Mapping[str, Any]]) -> None:
        for value in scalars:
            fields.scalar(value, code)
        if depth < ELEMENT_DEPTH:
            for element in objects:
                entry = filter_fields(element, depth + 1)
                entry[PATH_FIELD] = code
                fields.elements.append(entry)

    fields.facts = facts.document_facts(root, path_code, visit)
    return fields.render()


def count_elements(fields: Mapping[str, Any]) -> int:
    """How many nested documents the filter fields make (OpenSearch counts them per document)."""
    total = 0
    for element in fields.get(ELEMENTS_FIELD, ()):
        total += 1 + count_elements(element)
    return total


def metadata_text(metadata: Mapping[str, Any]) -> str:
    """The stored JSON text of the metadata (read back by :func:`metadata_of`)."""
    return json.dumps(metadata, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def metadata_fields(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """Every field a metadata write sets: the JSON text and the filter fields, with empty ones explicit
    (a partial update must clear what the new metadata no longer has)."""
    fields = filter_fields(metadata)
    out: dict[str, Any] = {METADATA_FIELD: metadata_text(metadata)}
    for name in VALUE_FIELDS:
        out[name] = fields.get(name, [])
    out[ELEMENTS_FIELD] = fields.get(ELEMENTS_FIELD, [])
    return out


def build_source(record_id: str, vector: list[float], metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The ``_source`` of one record."""
    return {VECTOR_FIELD: vector, RECORD_ID_FIELD: record_id, **metadata_fields(metadata)}


def metadata_of(source: Mapping[str, Any]) -> dict[str, Any]:
    """The caller's metadata from a ``_source``."""
    text = source.get(METADATA_FIELD)
    if not isinstance(text, str) or not text:
        return {}
    loaded = json.loads(text)
    return loaded if isinstance(loaded, dict) else {}


def _document_properties(depth: int) -> dict[str, Any]:
    keyword = {"type": "keyword"}
    properties: dict[str, Any] = {name: dict(keyword) for name in VALUE_FIELDS}
    if depth < ELEMENT_DEPTH:
        inner = _document_properties(depth + 1)
        inner[PATH_FIELD] = dict(keyword)
        properties[ELEMENTS_FIELD] = {"type": "nested", "dynamic": "strict", "properties": inner}
    return properties


def index_mapping(
    dimension: int, space_type: str, m: int, ef_construction: int, meta: dict[str, Any]
) -> dict[str, Any]:
    """The fixed mapping of an index: strict, the k-NN field on the Lucene engine, the filter fields."""
    return {
        "dynamic": "strict",
        "_meta": meta,
        "properties": {
            VECTOR_FIELD: {
                "type": "knn_vector",
                "dimension": dimension,
                "method": {
                    "name": "hnsw",
                    # Always Lucene: the faiss and nmslib engines need native libraries that a node may
                    # lack (the Maven k-NN plugin has none, and a faiss write kills the node's write thread).
                    "engine": "lucene",
                    "space_type": space_type,
                    "parameters": {"m": m, "ef_construction": ef_construction},
                },
            },
            RECORD_ID_FIELD: {"type": "keyword"},
            METADATA_FIELD: {"type": "text", "index": False},
            **_document_properties(0),
        },
    }
