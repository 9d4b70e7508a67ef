"""The ``reasoner`` Kems player."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

from tablesense.games.kems import Call, Card, Refresh, SeatView, Swap, partner_of, team_of
from tablesense.games.kems_players.inference import policy_four_probability
from tablesense.games.kems_players.knowledge import Knowledge, Tracker, four_probability
from tablesense.games.kems_players.tracking import TrackingPlayer

__all__ = ["ReasonerPlayer"]


@dataclass
class ReasonerPlayer(TrackingPlayer):
    """The ``reasoner`` Kems player: tracking's card sense, with the calls reasoned out.

    What decides a round between computer players (measured, docs/players.md):
    every player says kems the moment its partner's sign lights, so a four
    lives only until the partner's next poll, and an opponent polled in
    between may contre it. A four made with three taken cards is plain to
    see (they are public) and gets contred about two times in three; a four
    made from a dealt pair with two takes is not seen by ``tracking``'s
    estimate at all. So the reasoner:

    - **contres on an opponent model**: :meth:`four` replays the opponent's
      swaps and waits with ``tracking``'s policy over every guess of its
      hidden (dealt) cards (:mod:`~tablesense.games.kems_players.inference`);
      only a dealt pair explains some takes, which reveals the fours made
      from one. It calls contre once ``p`` reaches a third: waiting is not
      free (an opponent who holds four is about to be called by its partner,
      costing one point), so a contre is worth ``2p - 1`` against ``-p`` for
      waiting. It names the opponent whose contre is worth most (a double
      contre when that opponent's partner may hold four too). An opponent
      whose partner has acted since its last swap, or after a quiet tick,
      holds no four (a partner who sees the sign calls at once).
    - **completes four only unseen**: it does not make the take that would
      complete its four when that take would let an opponent estimate four
      at ``stealth`` or more (:meth:`exposure`, with ``tracking``'s
      estimate); it waits instead, and its team scores by contring the
      opponents' fours or by a four made from a dealt pair.
    - **kems** on its partner's sign at once, and **double** right after the
      partner's kems when its own sign says the partner holds four too (as
      every player does); ``go_double`` (off) first completes its own four
      when one take away.

    It never bluffs a sign or a call.
    """

    contre_at: float = 1 / 3
    go_double: bool = False
    """Go for the double when one swap away (measured weaker against
    ``tracking``: the completing take shows, and it contres both hands)."""
    double_risk: float = 0.3
    """Skip the double when an opponent is this likely to hold four already."""
    stealth: float | None = 0.5
    """Do not complete four with a take that would let an opponent estimate
    four at this probability or more (it would contre before the partner
    calls); ``None``: always complete."""
    opponent_model: bool = True
    """Estimate an opponent's four by replaying its swaps with ``tracking``'s
    policy (:func:`~tablesense.games.kems_players.inference.policy_four_probability`)
    instead of :func:`four_probability`."""
    mismatch: float = 0.005
    """The opponent model's likelihood of a swap or a wait its policy would not make."""
    name: str = "reasoner"
    _trackers: dict[int, Tracker] = field(default_factory=dict, repr=False, compare=False)
    _estimates: dict[tuple[object, ...], float] = field(
        default_factory=dict, repr=False, compare=False
    )
    _model: TrackingPlayer = field(default_factory=TrackingPlayer, repr=False, compare=False)

    def four(self, view: SeatView, know: Knowledge, target: int) -> float:
        """The probability that opponent ``target`` holds four of a kind now."""
        if not self.opponent_model:
            return four_probability(know, target, self.noise)
        # a partner who sees the sign calls at once: any act of the target's
        # partner (or a whole quiet tick) since the target's last swap says
        # the target holds no four
        partner = partner_of(target, view.seats)
        for e in reversed(view.events):
            if isinstance(e, Swap) and e.seat == target:
                break
            if isinstance(e, Refresh) or isinstance(e, Swap) and e.seat == partner:
                return 0.0
        key = (view.seat, target, len(view.events), view.laid[:1], view.events[-1:])
        cached = self._estimates.get(key)
        if cached is None:
            p = policy_four_probability(view, know, target, self._model, self.mismatch)
            cached = four_probability(know, target, self.noise) if p is None else p
            if len(self._estimates) > 256:
                self._estimates.clear()
            self._estimates[key] = cached
        return cached

    def decide(self, view: SeatView, rng: random.Random) -> Swap | Call | None:
        if not self.go_double or view.is_over or view.awaiting_double or not view.signal:
            return super().decide(view, rng)
        # the partner holds four: kems now, or complete our own four first
        know = self._trackers.setdefault(view.seat, Tracker()).update(view)
        if self._threat(view, know) < self.double_risk:
            swap = self._completing_swap(view)
            if swap is not None:
                return swap
        return Call(view.seat, "kems")

    def _threat(self, view: SeatView, know: Knowledge) -> float:
        n = view.seats
        me = team_of(view.seat, n)
        return max(
            (four_probability(know, t, self.noise) for t in range(n) if team_of(t, n) != me),
            default=0.0,
        )

    @staticmethod
    def _completing_swap(view: SeatView) -> Swap | None:
        """The swap that gives this seat four of a kind now, if the board has it."""
        counts = Counter(c.rank for c in view.hand)
        rank, top = counts.most_common(1)[0]
        if top != 3:
            return None
        need = [c for c in view.board if c.rank == rank]
        odd = [c for c in view.hand if c.rank != rank]
        if not need or len(odd) != 1:
            return None
        return Swap(view.seat, odd[0], need[0])

    def _play(self, view: SeatView, rng: random.Random) -> Swap | Call | None:
        seat = view.seat
        know = self._trackers.setdefault(seat, Tracker()).update(view)
        n = view.seats
        me = team_of(seat, n)
        best_t, best_v = None, 0.0
        for t in range(n):
            if team_of(t, n) == me:
                continue
            p = self.four(view, know, t)
            if p < self.contre_at:
                continue
            # a double contre scores more when the target's partner holds four too
            q = self.four(view, know, partner_of(t, n))
            value = p * (1 + (view.options.double_points - 1) * q)
            if value > best_v:
                best_t, best_v = t, value
        if best_t is not None:
            return Call(seat, "contre", best_t)
        if len({c.rank for c in view.hand}) == 1:
            return None
        swap = self._swap(view, know, [t for t in range(n) if team_of(t, n) != me], rng)
        if (
            swap is not None
            and self.stealth is not None
            and swap.give.rank != swap.take.rank
            and all(c.rank == swap.take.rank for c in view.hand if c != swap.give)
            and self.exposure(view, know, swap) >= self.stealth
        ):
            return None
        return swap

    def exposure(self, view: SeatView, know: Knowledge, swap: Swap) -> float:
        """What an opponent would estimate (:func:`four_probability`) for this
        seat holding four after ``swap``: its taken cards are public, its
        dealt cards are not."""
        seat = view.seat
        public: set[Card] = set()
        for e in view.events:
            if isinstance(e, Swap) and e.seat == seat and e.give != e.take:
                public.discard(e.give)
                public.add(e.take)
        public.discard(swap.give)
        public.add(swap.take)
        after = [swap.take if c == swap.give else c for c in view.hand]
        hidden = {c for c in after if c not in public}
        held = [set(h) for h in know.held]
        held[seat] = public
        history = [list(h) for h in know.history]
        history[seat] = history[seat] + [(swap.give, swap.take)]
        observer = Knowledge(
            seat, view.seats, held, set(know.in_stock), set(know.out), know.unseen | hidden, history
        )
        return four_probability(observer, seat, self.noise)
