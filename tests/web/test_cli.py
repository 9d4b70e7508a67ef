"""``tablesense display preview`` and ``tablesense display gpio``."""

from __future__ import annotations

import typer
from typer.testing import CliRunner

from tablesense.web.cli import register


def make_app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """tablesense (test root)."""

    register(app)
    return app


def test_preview_serves_and_plays_a_few_moves() -> None:
    for game in ("dominoes", "kems"):
        result = CliRunner().invoke(
            make_app(),
            ["display", "preview", "--game", game, "--port", "0", "--pace", "0", "--moves", "5"],
        )
        assert result.exit_code == 0, result.output
        assert result.output.startswith("http://127.0.0.1:")


def test_preview_refuses_an_unknown_game() -> None:
    result = CliRunner().invoke(
        make_app(), ["display", "preview", "--game", "chess", "--port", "0"]
    )
    assert result.exit_code == 2
    assert "unknown game 'chess'" in result.output
