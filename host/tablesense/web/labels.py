"""The fixed words of the display and table-top pages, in the table's language.

The pages are static files; the server hands each page its words as a JSON
dict in the template (``<script id="labels" type="application/json">``), so
the JavaScript never carries a sentence of its own. The words are marked
here with ``N_`` (Babel extracts them into the catalogs) and translated per
request with :func:`labels`. ``{n}``-style fields are filled in by the page.
"""

from __future__ import annotations

import json
from typing import Any

from tablesense.i18n import N_, Translator

#: Display page (templates/display.html, static/display.js).
DISPLAY: dict[str, str] = {
    "waiting": N_("Waiting for a match…"),
    "sensor_boards": N_("sensor boards"),
    "live_connection": N_("live connection"),
    "table": N_("table"),
    "line_of_play": N_("line of play"),
    "kems_board": N_("Kems board"),
    "scores": N_("scores"),
    "seats": N_("seats"),
    "last_hand": N_("last hand"),
    "needs_js": N_("This display needs JavaScript."),
    "team_n": N_("Team {n}"),
    "seat_n": N_("Seat {n}"),
    "the_table": N_("The table"),
    "hand_n": N_("Hand {n}"),
    "round_n": N_("Round {n}"),
    "to_target": N_("to {n}"),
    "match_over": N_("match over"),
    "paused": N_("paused"),
    "board_online": N_("board {n} online"),
    "board_offline": N_("board {n} OFFLINE"),
    "final_line": N_("Hand {n}: the final line"),
    "ends": N_("Ends {left} · {right}"),
    "stock": N_("Stock {n}"),
    "boneyard": N_("Boneyard {n}"),
    "computer": N_("computer"),
    "tiles": N_("{n} tiles"),
    "tile": N_("{n} tile"),
    "cards": N_("{n} cards"),
    "card": N_("{n} card"),
    "no_winner": N_("no winner"),
    "won": N_("{team} win"),  # the referee's own verb: one wording of a result everywhere
    "played": N_("{who} played {tile}"),
    "passed": N_("{who} passed"),
    "drew": N_("{who} drew a tile"),
    "announced": N_("{who} announced {tile}"),
    "swapped": N_("{who} gave {give}, took {take}"),
    "new_cards": N_("New board cards"),
    "called": N_("{who} called {call}"),
    "spades": N_("spades"),
    "hearts": N_("hearts"),
    "diamonds": N_("diamonds"),
    "clubs": N_("clubs"),
    "of_suit": N_("{rank} of {suit}"),
    "together": N_("{first} & {rest}"),
    "line_empty": N_("The line of play is empty"),
    "tile_named": N_("tile {tile}"),
    "tile_down": N_("a tile face down"),
    "opening": N_("{tile} (opening)"),
    "on_left": N_("{tile} (left)"),
    "on_right": N_("{tile} (right)"),
    "coach_review": N_("the coach's review"),
    "review_head": N_("Coach · hand {n}: the moves that cost the most"),
    "review_none": N_("Coach · hand {n}: no move cost much"),
    # the variants by their readable names (the display's heading; the director's pages say the same)
    "variant:pairs-pips": N_("pairs, scored in pips"),
    "variant:pips-two-player": N_("two players, scored in pips"),
    "variant:brazilian-points": N_("Brazilian club rules, match points"),
    "variant:classic": N_("classic"),
}

#: The coach's box (display.js ``renderCoach``), on a seat's own page: the
#: table-top page's and the seat page's.
COACH: dict[str, str] = {
    "coach_ask": N_("Suggest a move"),
    "coach_help": N_("Coach: press Suggest a move, or hold your button for a second"),
    "coach_points": N_("{move}: {points} points"),
    "coach_only_you": N_("only you see this"),
}

#: Table-top page (templates/tabletop.html, static/tabletop.js), on top of DISPLAY.
TABLETOP: dict[str, str] = {
    "table_top": N_("Table top"),
    "sit_title": N_("Sit at the virtual table"),
    "sit_help": N_(
        "Open the table top address printed for your seat: it carries your seat's key. "
        "Your own rack is face up; every other rack stays face down."
    ),
    "open_hands": N_("Open hands (teaching: every piece face up)"),
    "open_warning": N_("Open hands: every piece is face up on this screen (teaching mode)"),
    "line_large": N_("the line of play, large"),
    "the_table_lc": N_("the table"),
    "seats_buttons": N_("seats and buttons"),
    "off_table": N_("pieces off the table"),
    "deal": N_("Shuffle and deal"),
    "save": N_("Save session"),
    "your_rack": N_("your rack"),
    "in_hand": N_("in your hand"),
    "needs_js_tt": N_("The table top needs JavaScript."),
    "btn_pass": N_("Pass"),
    "btn_call": N_("Call"),
    "btn_referee": N_("Referee"),
    "btn_kems": N_("Kems!"),
    "btn_contre": N_("Contre"),
    "failed": N_("that did not work"),
    "card_down": N_("a card face down"),
    "turn_led": N_("turn LED"),
    "you": N_("you"),
    "other_table": N_("at the other table"),
    "in_air": N_("Lifted, in a hand"),
    "legend": N_("What the glows mean"),
    "glow_blue": N_("blue: the rack of the seat to play"),
    "glow_amber": N_("amber: the last move"),
    "glow_purple": N_("purple: a computer seat's next move"),
    "glow_green": N_("green: where the lifted piece may go"),
    "glow_red": N_("red: a mistake, put it back"),
    "glow_teal": N_("teal: the coach's hint, for you only"),
    "hint_no_turns": N_(
        "Swap: drag a board card onto your free rack cell, then one of your cards onto the slot it "
        "left. Four of a kind? Press Kems!"
    ),
    "hint_turn": N_("Your turn: drag a tile onto a green end of the line, or Pass"),
    "drop_green": N_("Drop it on a green end of the line"),
    "drop_no_fit": N_("{tile} does not match this end ({end}): drop it on a green end"),
    "drop_no_end": N_("{tile} matches neither end: put it back on your rack, or Pass"),
    "drop_card": N_("Drop it on your free rack cell or on the empty slot"),
    "is_playing": N_("{name} is playing"),
    "rack_of": N_("{name}'s rack"),
    "table_top_of": N_("Table top · {name}"),
    "game:dominoes": N_("Dominoes"),
    "game:kems": N_("Kems"),
    "open_view": N_("open hands"),
    "you_are": N_("You: {name}"),
    "off_count": N_("{n} in the stock (off the table)"),
    **COACH,
}

#: The table-top page's "play another table" (templates/tabletop_find.html,
#: static/tabletop_find.js; web/tabletop_find.py), on top of DISPLAY.
FIND: dict[str, str] = {
    "table_top": N_("Table top"),
    "find_title": N_("Play another table"),
    "find_help": N_("Two tables play one match: one hosts it and reads its code out, the other types the code."),
    "join_head": N_("Join a match"),
    "join_help": N_("Type the code the other table read out to you."),
    "code_label": N_("Match code"),
    "join": N_("Join"),
    "host_head": N_("Host a match"),
    "host_help": N_("This table opens a match; read its code out to the other table."),
    "host": N_("Host a match"),
    "finding": N_("Looking for match {code} …"),
    "opening": N_("Opening a match …"),
    "ready_host": N_("Your match code: {code}. Read it out to the other table."),
    "ready_join": N_("Joined match {code}."),
    "your_seat": N_("Open the seat of {name}"),
    "code_hint": N_("six letters and digits"),
    "needs_js_find": N_("This page needs JavaScript."),
    "failed": N_("that did not work"),
    "live_connection": N_("live connection"),
}

#: A seat's own page at a real table (``play --coach``: web/seat_page.py),
#: on top of DISPLAY: the display with that seat's coach.
SEAT_PAGE: dict[str, str] = {
    "seat_page_of": N_("{name}'s seat page"),
    "you_are": N_("You: {name}"),
    "coach_lit_line": N_("Lit teal on the table: the tile on your rack and where it goes"),
    "coach_lit_board": N_("Lit teal on the table: the card on your rack to give"),
    **COACH,
}


def labels(lang: str, *tables: dict[str, str]) -> dict[str, str]:
    """The page's words in ``lang`` (the display's, plus ``tables``)."""
    tr = Translator(lang)
    out: dict[str, str] = {}
    for table in (DISPLAY, *tables):
        out.update({key: tr(text) for key, text in table.items()})
    return out


def labels_json(words: dict[str, Any]) -> str:
    """``words`` as JSON safe inside a ``<script>`` element (no ``</script>``)."""
    text = json.dumps(words, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
