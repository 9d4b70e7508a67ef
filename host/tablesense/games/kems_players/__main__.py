"""``python -m tablesense.games.kems_players``: the win-rate table of docs/players.md."""

from tablesense.games.kems_players.loop import _main

raise SystemExit(_main())
