"""The vector domains of the conformance kit, and the helpers they share.

Each domain module holds ``<Name>Suite`` classes of async test methods; a runner module subclasses them
(``class TestFilterOperators(FilterOperatorsSuite): pass``) so an adapter project can run the kit with
``pytest --pyargs mastra_memory_conformance --target <name>``:

=================  ==============================================================
module             suites
=================  ==============================================================
``vector_basics``  ``IndexLifecycleSuite``, ``VectorBasicsSuite``
``filters``        ``FilterOperatorsSuite``
``differential``   ``DifferentialFilterSuite``
``scores``         ``ScoresSuite``
``roundtrip``      ``MetadataRoundTripSuite``, ``DeclaredDeviationsSuite``
``errors``         ``ErrorsSuite``
``concurrency``    ``ConcurrencySuite``
=================  ==============================================================

**What a target must do is read from its manifest** (docs/spec.md §2.7, §2.9, §8.4). :func:`expect` turns a
filter and the records written into one :class:`Expectation`:

* a filter the core rejects must raise exactly the core's ``FilterError``;
* a filter using an operator the manifest does not declare (native or emulated) must raise
  ``UnsupportedFilterError`` naming one of those operators;
* every other filter must return exactly the oracle's ids — records that must be absent are checked to
  be absent — where the oracle is the reference evaluator, adjusted for the deviations below.

**Declared deviations the suite knows** (docs/spec.md §2.8, §3.6) change the expectation in a documented way,
and the test annotates its outcome with the code whenever the expected ids differ from the spec's:

====================  ==================================================================================
code                  how the suite models it
====================  ==================================================================================
``exists-empty-list``  ``$exists`` treats ``[]`` as absent, per reached value (a backend whose emptiness
                       test cannot tell ``[]`` from a missing key)
``null-dropped``       null values are not stored: dict entries whose value is ``None`` read as missing
``nested-flattened``   nested dicts are flattened and restored on read; an empty dict is not stored
``string-list-only``   lists must hold only strings: the suite writes datasets without other lists and
                       checks that the adapter rejects them
``no-string-ranges``   ``$gt``/``$gte``/``$lt``/``$lte`` with a string (or datetime) operand raise
                       ``UnsupportedFilterError``
``nul-character-rejected``  strings and keys containing U+0000 are rejected at upsert (never generated)
``int64-range``        integers outside the signed 64-bit range are rejected at upsert; a filter integer
                       beyond it that is not exactly a float raises ``UnsupportedFilterError``
``half-precision``,    scores are compared within 1e-2 instead of 1e-4 (docs/spec.md §3.4)
``quantised``
====================  ==================================================================================

``DeclaredDeviationsSuite`` checks that each declared known deviation really occurs.

A deviation code the suite does not know cannot change an expectation by itself. An adapter that needs
one to cover fixed cases of docs/spec.md §8.2 cites them in the deviation's ``description`` as ``§8.2
#<label>``
(for example ``"... (§8.2 #26)"``); on those cases, and only there, a result other than the expected one
is reported as that deviation (with the returned ids) instead of failing.

The API every domain imports is re-exported here from the modules that hold it, one job each:
:mod:`.expectations` (what a target must do with a filter, the deviations above, what is written and
held) and :mod:`.base` (the records the suite writes, loading them, :func:`check_filter`, and
:class:`~.base.VectorSuiteBase` with the ``idx`` fixture every vector test takes).
"""

from __future__ import annotations

from . import base, expectations
from .base import *  # noqa: F403 - the names of base.__all__
from .expectations import *  # noqa: F403 - the names of expectations.__all__

__all__: list[str] = []
__all__ += base.__all__
__all__ += expectations.__all__
