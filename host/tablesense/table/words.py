"""Messages of the table room a person reads: the table room's sentences are
the leaf module's (:mod:`tablesense.sentence`), re-exported here because the
link, journal and sim rooms word their errors through the table room.

``_(message_of(exc))`` in a command prints ``no table geometry file at 'x'``
as ``nenhum arquivo de geometria de mesa em 'x'``.
"""

from __future__ import annotations

from tablesense.sentence import Sentence, joined, message_of, say

__all__ = ["Sentence", "joined", "message_of", "say"]
