"""What a change signal carries: which part of the Session's state changed, so views update only that.

``Session.result_changed(change)`` carries a :class:`ResultChange`: the query rows whose numbers were
recomputed (every other row of every stage is as it was), or everything.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class ResultChange:
    """The attention result changed: in the query ``rows`` only (sorted, unique), or everywhere
    (``rows`` None: new arrays, maybe another shape, mask or scale)."""

    rows: tuple[int, ...] | None = None

    ALL: ClassVar[ResultChange]

    @classmethod
    def of_rows(cls, rows: Iterable[int]) -> ResultChange:
        return cls(tuple(sorted({int(r) for r in rows})))

    @property
    def everything(self) -> bool:
        """True when the whole result may have changed (not only some rows)."""
        return self.rows is None

    def merged(self, other: ResultChange) -> ResultChange:
        """This change followed by ``other``, as one."""
        if self.rows is None or other.rows is None:
            return ResultChange.ALL
        return ResultChange.of_rows(self.rows + other.rows)


ResultChange.ALL = ResultChange(None)
