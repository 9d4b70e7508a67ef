"""A remote table's judge for games played on a board of face-up slots (Kems).

:class:`BoardJudge` answers what :class:`~tablesense.remote.judge.TableJudge`
answers for a line of play, for a table whose play area is a row of board
slots (the layout's ``kems_slots``) beside each seat's rack and the stock:

- where every piece belongs: the board's cards on their slots, each local
  seat's hand on its rack, everything else (the remote seats' hands, the
  face-down stock) anywhere on the stock cells;
- the deal by lights: the local seats' cards light in the stock in their
  seat's colour, the board's four (public) cards light with their slots;
- a local seat's swap, sensed: one of its cards on a slot and that slot's
  card on its rack, claimed when it is one of the seat's legal moves (Kems
  has no turns, so a swap is recognised while other pieces are still in
  the air, as the local Kems referee does);
- a remote seat's swap: the given card lights in the stock with its slot,
  the taken card (now in a remote hand) goes back to the stock;
- a refresh: the four new board cards light in the stock with their slots,
  the old board goes back to the stock. Nobody at a table can pick the next
  four cards (the stock's order is the authority's), so a refresh is asked
  for, like a dominoes draw: :meth:`BoardJudge.idle_move` for the table's
  computer seats, carrying the board the table saw (``x-board``), so that
  two tables asking at once turn the board over once;
- calls are buttons: a person's seat button calls ``kems`` (``double``
  right after the partner's ``kems``), :meth:`BoardJudge.button_move`.

Computer seats (:meth:`BoardJudge.bot_move`) decide from what the table may
know: their own hand, the board, and their partner's hand when the partner
sits at the same table (the partner's sign is then the table's own
knowledge; across tables no sign travels). They collect the rank they hold
most of, call ``kems`` when their partner holds four, and answer a
partner's ``kems`` with ``double`` or a decline.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from tablesense.games.registry import find_game
from tablesense.remote.judge import TableJudge
from tablesense.table.geometry import CellId, TableGeometry

#: How long a table's computer seats wait with nothing to swap before they
#: ask for a refresh (people at the other table may still be swapping).
REFRESH_AFTER_S = 1.0


def _rank(card: str) -> str:
    return card[:-1]


def _best(hand: Sequence[str]) -> int:
    return Counter(_rank(c) for c in hand).most_common(1)[0][1] if hand else 0


def _four(hand: Sequence[str]) -> bool:
    return len(hand) == 4 and _best(hand) == 4


class BoardJudge(TableJudge):
    """See the module docstring."""

    def _check_geometry(self, geometry: TableGeometry) -> None:
        if not geometry.kems_slots or not geometry.stock:
            raise ValueError(
                f"table {geometry.name!r} has no board slots and stock: a remote Kems match needs a -remote layout"
            )
        self.slots: list[CellId] = list(geometry.kems_slots)

    @staticmethod
    def key(text: str) -> str:
        return text

    # -- where pieces belong ----------------------------------------------------

    def exact(self) -> dict[CellId, str]:
        """The board's cards on their slots, in slot order."""
        return dict(zip(self.slots, self.view.board, strict=False))

    def home(self) -> dict[str, tuple[CellId, ...]]:
        out: dict[str, tuple[CellId, ...]] = {}
        if not self.hand_over:
            for cell, card in self.exact().items():
                out[card] = (cell,)
            for seat, cards in self.view.hands.items():
                rack = tuple(self.geometry.seats[seat].rack)
                for c in cards:
                    out[c] = rack
        stock = tuple(self.geometry.stock)
        for p in self.pieces:
            out.setdefault(p, stock)
        return out

    def partner(self, seat: int) -> int | None:
        """``seat``'s partner, as the game seats its teams."""
        game, seats = find_game(self.view.game), len(self.view.counts)
        team = game.team_of_seat(seats, seat)
        return next((s for s in range(seats) if s != seat and game.team_of_seat(seats, s) == team), None)

    # -- judging ------------------------------------------------------------------

    def _claim(self, misplaced: list[str], where: Mapping[str, CellId],
               legal: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
        """A local seat's card on a slot and the slot's card on that seat's
        rack: the swap, when it is legal (others may still be moving)."""
        if self.hand_over or self.dealt_hand < self.view.hand:
            return None
        on = {c: p for p, c in where.items()}
        owner = {c: s for s, cards in self.view.hands.items() for c in cards}
        for slot, take in zip(self.slots, self.view.board, strict=False):
            give = on.get(slot)
            if give is None or give == take or give not in owner:
                continue
            seat = owner[give]
            if where.get(take) not in self.geometry.seats[seat].rack:
                continue
            move = {"seat": seat, "swap": {"give": give, "take": take}}
            if move in legal:
                return move
        return None

    # -- who acts -------------------------------------------------------------------

    def bot_move(self, seat: int, legal: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
        """A computer seat's choice (see the module docstring); None: it waits."""
        mine = [dict(m) for m in legal if m.get("seat") == seat]
        if not mine:
            return None
        partner = self.partner(seat)
        partner_hand = self.view.hands.get(partner) if partner is not None else None
        if any(m.get("decline") for m in mine):  # the partner called kems: double or let it stand
            double = {"seat": seat, "call": "double"}
            mine_four = _four(self.view.hands.get(seat, []))
            return double if mine_four and partner_hand is not None and _four(partner_hand) and double in mine \
                else {"seat": seat, "decline": True}
        kems = {"seat": seat, "call": "kems"}
        if partner_hand is not None and _four(partner_hand) and kems in mine:
            return kems
        hand = list(self.view.hands.get(seat, []))
        now = _best(hand)
        if now == 4:
            return None  # the partner calls
        counts = Counter(_rank(c) for c in hand)
        best: tuple[int, int, str, dict[str, Any]] | None = None
        for m in mine:
            swap = m.get("swap")
            if not isinstance(swap, dict):
                continue
            give, take = str(swap["give"]), str(swap["take"])
            after = [take if c == give else c for c in hand]
            gain = _best(after)
            if gain <= now:
                continue
            key = (gain, -counts[_rank(give)], give + take, m)
            if best is None or key[:3] > best[:3]:
                best = key
        return best[3] if best is not None else None

    def button_move(self, seat: int, legal: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
        """A person's seat button: ``double`` right after the partner's
        ``kems``, else ``kems`` (that the partner holds four)."""
        for call in ({"seat": seat, "call": "double"}, {"seat": seat, "call": "kems"}):  # the calls, not the game
            if call in legal:
                return call
        return None

    def idle_move(self, legal: Sequence[Mapping[str, Any]], idle_s: float) -> dict[str, Any] | None:
        """A refresh once nobody here has wanted a card for
        :data:`REFRESH_AFTER_S`, naming the board this table saw."""
        if idle_s < REFRESH_AFTER_S or not any(m.get("refresh") is True for m in legal):
            return None
        return {"refresh": True, "x-board": list(self.view.board)}

    def routes(self, move: Mapping[str, Any], sensed: Mapping[CellId, str]) -> list[tuple[CellId, CellId]]:
        """A swap by hand: the slot's card to a free cell of the seat's rack,
        then the given card onto the slot (the order the page teaches)."""
        swap = move.get("swap")
        if not isinstance(swap, dict):
            return []
        at = {p: c for c, p in sensed.items()}
        slot, src = at.get(str(swap["take"])), at.get(str(swap["give"]))
        rack = self.geometry.seats[int(move["seat"])].rack
        free = [c for c in rack if c not in sensed]
        if slot is None or src is None or slot not in self.slots or not free:
            return []
        return [(slot, free[0]), (src, slot)]
