"""Issue 31, the wording of the table-top page and its printed lines: the
terminal's `table top:` lines and the tab's title speak the table's
language and name the game, never the layout file's id (`dominoes-4`); the
glows have a legend in the table's language."""

from __future__ import annotations

import urllib.request

from test_tabletop import sit_demo

from tablesense.web.tabletop import TableKeys


def test_the_printed_lines_speak_the_tables_language() -> None:
    keys = TableKeys([0, 2], open_hands=True)
    base = "http://192.0.2.7:8080/tabletop"
    names = ["South", "East", "North", "West"]
    pt = keys.lines(base, names, "pt-BR")
    assert pt[0] == f"tampo da mesa: {keys.url(base, 0)}  (Sul)"
    assert pt[1] == f"tampo da mesa: {keys.url(base, 2)}  (Norte)"
    assert pt[2] == f"tampo da mesa: {keys.url(base, open_hands=True)}  (mãos abertas)"
    ms = keys.lines(base, names, "ms")
    assert ms[0] == f"permukaan meja: {keys.url(base, 0)}  (Selatan)"
    en = keys.lines(base, names)
    assert en[0].split()[2] == keys.url(base, 0) and en[0].endswith("(South)")


def test_the_tab_title_and_the_legend_in_portuguese() -> None:
    with sit_demo(game="dominoes", seed=1, speed=5.0, hands=1, lang="pt-BR") as demo:
        line = demo["sit"].lines()[0]
        assert line.startswith("tampo da mesa: http") and line.endswith("(Sul)")
        with urllib.request.urlopen(demo["page"], timeout=10) as r:
            html = r.read().decode()
        assert "<title>Tampo da mesa · Dominó</title>" in html
        assert "dominoes-4" not in html.split("<body")[0]
        assert "O que as luzes querem dizer" in html
        for word in ("azul:", "âmbar:", "roxo:", "verde:", "vermelho:", "verde-azulado:"):
            assert word in html, word
