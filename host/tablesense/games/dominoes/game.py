"""Dominoes as a :class:`~tablesense.games.game.Game`: what the registry
answers about it. A new variant is added in :mod:`.options` (its name, seats,
options and title) and in a table layout; nothing here changes."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any, ClassVar, Literal

from tablesense.games.common import ReplayResult, Seat, Team
from tablesense.games.dominoes.match import DominoMatch
from tablesense.games.dominoes.options import _SEATS, VARIANT_TITLES, VARIANTS, DominoOptions
from tablesense.games.dominoes.replay import replay_record
from tablesense.games.dominoes.tiles import ALL_TILES, Announce, Tile, move_from_json, move_to_json
from tablesense.games.game import Game, Match
from tablesense.sentence import Sentence, say

#: A tile in a text: ``5-6`` (either way round), not part of a longer word.
TILE_RE = re.compile(r"(?<![\w-])([0-6])-([0-6])(?![\w-])")


def _tile_key(a: str, b: str) -> str:
    """Tiles are named either way round ("5-6", "6-5"): compare sorted."""
    return "-".join(sorted((a, b)))


def line_view(hand: Any) -> dict[str, Any]:
    """The line of ``hand`` as the display draws it: the centre tile and each
    arm's tiles outward, with the seat that played each."""
    if hand is None or not hand.line:
        return {"center": None, "left": [], "right": []}
    first = hand.line[0]
    arms = {
        end: [{"tile": str(lp.tile), "outer": lp.outer, "seat": lp.seat} for lp in hand.arm(end)]
        for end in ("left", "right")
    }
    return {"center": {"tile": str(first.tile), "seat": first.seat}, **arms}


def _ends(hand: Any) -> dict[str, Any]:
    return {"left": hand.left_end, "right": hand.right_end}


class Dominoes(Game):
    """Dominoes: turns, a line of tiles, a boneyard; pairs or individuals."""

    name: ClassVar[str] = "dominoes"
    title: ClassVar[str] = say("Dominoes")
    deal_word: ClassVar[Literal["hand", "round"]] = "hand"
    piece_word: ClassVar[Literal["tile", "card"]] = "tile"
    the_piece: ClassVar[Sentence] = say("the tile")
    default_player: ClassVar[str] = "greedy"
    play_area: ClassVar[Literal["line", "board"]] = "line"
    stock_word: ClassVar[Literal["boneyard", "stock"]] = "boneyard"
    button_words: ClassVar[tuple[Literal["pass", "kems"], Literal["call", "contre"]]] = ("pass", "call")
    can_void: ClassVar[bool] = True
    has_turns: ClassVar[bool] = True
    rating_families: ClassVar[dict[str, str]] = {
        "dominoes-pairs": say("Dominoes, pairs"),
        "dominoes-individual": say("Dominoes, individual"),
    }
    reviews_hands: ClassVar[bool] = True

    @property
    def variants(self) -> tuple[str, ...]:
        return VARIANTS

    def variant_title(self, variant: str) -> str:
        return VARIANT_TITLES.get(variant, variant)

    def seat_counts(self, variant: str) -> tuple[int, ...]:
        self.check_variant(variant)
        return _SEATS[variant]

    def new_match(self, variant: str, options: Mapping[str, Any] | None = None,
                  seats: int | None = None) -> Match:
        self.check_variant(variant)
        return DominoMatch(variant, DominoOptions.from_dict(variant, options), seats=seats)

    def replay(self, record: Mapping[str, Any]) -> ReplayResult:
        return replay_record(record)

    def move_to_json(self, move: Any) -> dict[str, Any]:
        return move_to_json(move)

    def move_from_json(self, obj: Mapping[str, Any], *, seats: int | None = None) -> Any:
        # a dominoes move names only its mover, whom the hand checks
        return move_from_json(obj)

    def deal_to_json(self, hand: Any) -> dict[str, Any]:
        return {
            "deal": [[str(t) for t in h] for h in hand.deal],
            "boneyard": [str(t) for t in hand.dealt_boneyard],
        }

    def start_hand(self, match: Any, deal: Mapping[str, Any], *, free_draw: bool = False) -> Any:
        tiles = [[Tile.parse(t) for t in h] for h in deal["deal"]]
        bone = [Tile.parse(t) for t in deal.get("boneyard") or []]
        return match.new_hand(deal=tiles, boneyard=bone, free_draw=free_draw)

    def void_hand(self, match: Any, reason: str) -> None:
        match.void_hand(reason)

    def apply_reorder(self, hand: Any, entry: Mapping[str, Any]) -> None:
        # Journals written before the engine's free draw: the order is now
        # learnt by the draw that follows (the hand of a table-dealt match
        # takes any boneyard tile), so the entry only has to agree.
        tiles = sorted(Tile.parse(t) for t in entry.get("boneyard", []))
        if tiles != sorted(hand.boneyard):
            raise ValueError("a boneyard reorder must keep the same tiles")

    def all_pieces(self, options: Any) -> frozenset[str]:
        return frozenset(str(t) for t in ALL_TILES)

    def face_up(self, hand: Any) -> set[str]:
        return {str(lp.tile) for lp in hand.line} | {str(m.tile) for m in hand.moves if isinstance(m, Announce)}

    def pieces_view(self, hand: Any, last: Any, last_hand_no: int | None, *, boneyard: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"line": line_view(hand), "last_line": None}
        if last is not None and last.line:
            # the display shows it while the next hand's line is still empty
            out["last_line"] = {**line_view(last), "hand_no": last_hand_no, "ends": _ends(last)}
        if hand is not None and hand.line:
            out["ends"] = _ends(hand)
        if hand is not None and boneyard:
            out["stock"] = len(hand.boneyard)
        return out

    def to_play(self, hand: Any) -> Seat | None:
        return None if hand.is_over else hand.to_play

    def rack_pips(self, hand: Any) -> list[int] | None:
        return [hand.pips_in_hand(s) for s in range(hand.seats)]

    def player(self, name: str | None = None, think_ms: float | None = None) -> Any:
        from tablesense.games import dominoes_players

        classes = {
            "random": dominoes_players.RandomPlayer,
            "greedy": dominoes_players.GreedyPlayer,
            "montecarlo": dominoes_players.MonteCarloPlayer,
            "search": dominoes_players.SearchPlayer,
        }
        name = name or self.default_player
        if name not in classes:
            raise ValueError(say("unknown dominoes player {name!r}; players: {players}", name=name,
                                 players=", ".join(classes)))
        if name == "search" and think_ms is not None:
            return dominoes_players.SearchPlayer(budget_ms=think_ms)
        return classes[name]()

    def coach(self, worlds: int) -> Any:
        from tablesense.games.coach import DominoCoach

        return DominoCoach(worlds=worlds)

    def piece_names(self, text: str) -> list[str]:
        return [_tile_key(a, b) for a, b in TILE_RE.findall(text)]

    def hide_pieces(self, text: str, known: Collection[str]) -> str:
        def tile(m: re.Match[str]) -> str:
            return m.group(0) if _tile_key(m.group(1), m.group(2)) in known else "the tile"

        return TILE_RE.sub(tile, text)

    def players_per_team(self, variant: str, seats: int) -> int:
        if variant == "pips-two-player":
            return 1
        return 2 if seats == 4 else 1

    def team_of_seat(self, seats: int, seat: Seat) -> Team:
        return seat % 2 if seats == 4 else seat

    def rating_family(self, variant: str, seats: int) -> str:
        return "dominoes-pairs" if self.players_per_team(variant, seats) == 2 else "dominoes-individual"


__all__ = ["TILE_RE", "Dominoes", "line_view"]
