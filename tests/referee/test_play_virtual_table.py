"""``play --virtual-table`` and computer seats with ``--director`` (issue 30): the
options are checked before anything opens, each refusal a sentence and exit 2.
The whole path (a virtual table refereed match after match for a director) runs
in tests/tournament/test_rehearsal.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tablesense.cli import app


@pytest.mark.parametrize(("args", "said"), [
    (["--seats", "Ana,bot,bot,bot"], "--virtual-table plays computer seats only: give --seats with 'bot' for each of "
                                     "the 4 seats, for example --seats bot,bot,bot,bot"),
    ([], "--virtual-table plays computer seats only"),
    (["--seats", "bot,bot,bot,bot", "--port", "/dev/pts/1"], "--virtual-table starts the table's own virtual boards: "
                                                              "leave out --port"),
    (["--seats", "bot,bot,bot"], "table dominoes-4 has 4 seats; --seats names 3"),
])
def test_a_virtual_table_is_refused_what_it_cannot_do(tmp_path: Path, args: list[str], said: str) -> None:
    done = CliRunner().invoke(app, ["play", "--table", "dominoes-4", "--virtual-table", "--no-web", "--no-keys",
                                    "--journal", str(tmp_path / "j.sqlite"), *args])
    assert done.exit_code == 2, done.output
    assert said in " ".join(done.output.split())
    assert not (tmp_path / "j.sqlite").exists(), "refused before anything was opened"
