"""One test per rule sentence of seed 001 (``brazilian-points``).

Test names follow the Portuguese sentences (docs/rules/brazilian-points.md
quotes each one with its reading and option). Scoring lines are checked two
ways: on the shipped example records, and against an independent re-count
from the line of play on many random hands.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tablesense.games.common import HandResult, IllegalPlayError
from tablesense.games.dominoes import (
    ALL_TILES,
    Announce,
    DominoHand,
    DominoMatch,
    Pass,
    Play,
    Tile,
    move_from_json,
)
from testsupport import REPO

T = Tile.parse
B = "brazilian-points"
EXAMPLES = Path(REPO) / "docs" / "examples"


def W(x: int | None) -> int:
    """The value of an optional the test knows is set (for the type checker)."""
    assert x is not None
    return x


def replay_match(name: str) -> DominoMatch:
    """Replay an example record through the engine API (not record.py)."""
    rec = json.loads((EXAMPLES / name).read_text())
    m = DominoMatch(rec["variant"], rec["options"], seats=len(rec["hands"][0]["deal"]))
    for h in rec["hands"]:
        hand = m.new_hand(
            deal=[[T(t) for t in d] for d in h["deal"]],
            boneyard=[T(t) for t in h.get("boneyard", [])],
        )
        for mv in h["moves"]:
            hand.play(move_from_json(mv))
        m.finish_hand()
    return m


def expected_points(h: DominoHand) -> tuple[float, ...]:
    """The seed's scoring lines, recounted from the public line of play."""
    teams = h.teams
    pts = [0.0] * teams
    announced = h.announced
    if h.outcome == "domino":
        last = h.line[-1]
        t, seat = last.tile, last.seat
        left = last.inner if last.end == "left" else h.left_end
        right = last.inner if last.end == "right" else h.right_end
        both = sorted((W(left), W(right))) == [t.low, t.high]
        if announced.get(seat) == t:
            doubles = sum(1 for lp in h.line[:-1] if lp.tile.is_double and lp.seat == seat)
            value = (16 if doubles >= 3 else 8) if both else 4
        elif t.is_double:
            value = 3 if both else 2
        else:
            value = 2 if both else 1
        pts[h.team_of(seat)] += value
        for s, d in announced.items():
            if not (s == seat and d == t):
                pts[h.team_of(s)] -= 1
    else:
        counts = h.team_pips()
        low = min(counts)
        tied = [k for k in range(teams) if counts[k] == low]
        for k in tied:
            pts[k] += 0.5 if len(tied) == 1 else 0.25
        for s in announced:
            pts[h.team_of(s)] -= 1
    return tuple(pts)


def random_hand(seed: int, seats: int = 4, announce: float = 0.0) -> tuple[DominoHand, HandResult]:
    rng = random.Random(seed)
    h = DominoMatch(B, seats=seats).new_hand(rng)
    while not h.is_over:
        moves = h.legal_moves()
        plays = [m for m in moves if not isinstance(m, Announce)]
        ann = [m for m in moves if isinstance(m, Announce)]
        h.play(rng.choice(ann) if ann and rng.random() < announce else rng.choice(plays))
    return h, h.result()


# --------------------------------------------------------------------------- the game


def test_em_partida_de_quatro_a_primeira_saida_sempre_sera_com_a_bucha_de_sena() -> None:
    h = DominoMatch(B).new_hand(random.Random(1))
    assert h.to_play == h.holder(T("6-6"))
    assert [m for m in h.legal_moves() if isinstance(m, Play)] == [Play(h.to_play, T("6-6"))]


def test_a_rodada_termina_em_quatro_pontos() -> None:
    rng = random.Random(2)
    m = DominoMatch(B)
    assert m.target == 4
    while not m.is_over:
        h = m.new_hand(rng)
        h.playout(rng)
        m.finish_hand()
    assert m.score[W(m.winner)] >= 4 and all(
        s < m.score[W(m.winner)] for k, s in enumerate(m.score) if k != m.winner
    )


def test_em_partidas_de_tres_jogadores_nove_pedras_e_quem_pegar_a_bucha_de_branca_fica_com_dez() -> (
    None
):
    rng = random.Random(3)
    for _ in range(30):
        h = DominoMatch(B, seats=3).new_hand(rng)
        holder = h.holder(T("0-0"))
        assert sorted(len(d) for d in h.deal) == [9, 9, 10]
        assert len(h.deal[W(holder)]) == 10
        # ... and opens the first hand with it
        assert h.to_play == holder
        assert [m for m in h.legal_moves() if isinstance(m, Play)] == [Play(W(holder), T("0-0"))]
    assert DominoMatch(B, seats=3).team_of(2) == 2


def test_com_a_bucha_de_branca_a_saida_vale_so_na_primeira_rodada_depois_quem_bater_comeca() -> (
    None
):
    rng = random.Random(4)
    for seats in (3, 4):
        m = DominoMatch(B, {"target": 1000}, seats=seats)
        for _ in range(12):
            h = m.new_hand(rng)
            h.playout(rng)
            r = m.finish_hand()
            if r.outcome == "domino":
                nxt = m.new_hand(rng)
                assert nxt.to_play == h.winner_seat
                assert {x.tile for x in nxt.legal_moves() if isinstance(x, Play)} == set(
                    nxt.hand_of(nxt.to_play)
                )
                nxt.playout(rng)
                m.finish_hand()


def test_uma_batida_simples_vale_um_ponto() -> None:
    for seed in range(200):
        h, r = random_hand(seed)
        if r.label == "batida":
            assert r.points[W(r.winner)] == 1
            return
    pytest.fail("no simple domino found")


def test_se_o_jogo_fechar_naturalmente_a_partida_vale_apenas_meio_ponto() -> None:
    m = replay_match("brazilian-points-blocked.json")
    r = m.results[0]
    assert r.outcome == "blocked" and r.label == "fechada"
    assert r.points[W(r.winner)] == 0.5 and sum(r.points) == 0.5


def test_se_isso_ocorrer_a_dupla_ganhadora_saira_apenas_com_uma_pedra_normal_exceto_bucha() -> None:
    rng = random.Random(5)
    found = 0
    for _ in range(400):
        m = DominoMatch(B)
        h = m.new_hand(rng)
        h.playout(rng)
        r = m.finish_hand()
        if r.outcome != "blocked" or r.winner is None:
            continue
        nxt = m.new_hand(rng)
        assert nxt.team_of(nxt.to_play) == r.winner
        opening = {x.tile for x in nxt.legal_moves() if isinstance(x, Play)}
        assert opening and not any(t.is_double for t in opening)
        dbl = next((t for t in nxt.hand_of(nxt.to_play) if t.is_double), None)
        if dbl is not None:
            with pytest.raises(IllegalPlayError, match="not a double"):
                nxt.check(Play(nxt.to_play, dbl))
        # the option: fewest pips (default) of the winning pair opens
        pair = [s for s in range(4) if h.team_of(s) == r.winner]
        assert h.pips_in_hand(nxt.to_play) == min(h.pips_in_hand(s) for s in pair)
        found += 1
        if found >= 5:
            return
    pytest.fail("too few blocked hands")


def test_o_fechamento_pode_ser_forcado_mas_havendo_opcoes_o_jogo_devera_ser_aberto() -> None:
    rng = random.Random(6)
    for _ in range(3000):
        h = DominoMatch(B).new_hand(rng)
        loose = DominoMatch(B, {"forced_block": "allowed"}).new_hand(deal=h.deal)
        while not h.is_over:
            strict = [m for m in h.legal_moves() if not isinstance(m, Announce)]
            free = [m for m in loose.legal_moves() if not isinstance(m, Announce)]
            if set(strict) != set(free):
                blocker = next(m for m in free if m not in strict)
                with pytest.raises(IllegalPlayError, match="must stay open"):
                    h.check(blocker)
                return
            m = rng.choice(strict)
            h.play(m)
            loose.play(m)
    pytest.fail("no forced block found")


def test_empate_na_contagem_vale_um_quarto_para_as_duas_duplas_e_a_saida_e_com_a_bucha_de_sena() -> (
    None
):
    m = replay_match("brazilian-points-tie.json")
    r = m.results[0]
    assert r.outcome == "blocked" and r.winner is None and r.points == (0.25, 0.25)
    assert r.label == "empate"
    h = m.new_hand(random.Random(7))
    assert h.opening.tile == T("6-6") and h.to_play == h.holder(T("6-6"))


# --------------------------------------------------------------------------- going out


@pytest.mark.parametrize(
    "name, label, value",
    [
        ("brazilian-points-double.json", "batida de bucha", 2),
        ("brazilian-points-la-e-lo.json", "lá-e-lô", 2),
        ("brazilian-points-cruzada.json", "cruzada", 3),
        ("brazilian-points-quadriciclo.json", "quadriciclo", 4),
        ("brazilian-points-4x4.json", "4x4", 8),
        ("brazilian-points-cegonha.json", "cegonha", 16),
    ],
)
def test_each_way_of_going_out_scores_its_line(name: str, label: str, value: int) -> None:
    m = replay_match(name)
    h, r = m.hands[-1], m.results[-1]
    assert r.label == label and r.points[W(r.winner)] == value
    assert r.points == expected_points(h)


def test_a_rodada_que_fechar_com_a_batida_de_dobre_vale_dois_pontos() -> None:
    h = replay_match("brazilian-points-double.json").hands[0]
    last = h.line[-1]
    assert last.tile.is_double and not (h.left_end == h.right_end == last.tile.low)


def test_batida_nas_duas_pontas_sem_ser_dobre_tambem_vale_dois_pontos() -> None:
    h = replay_match("brazilian-points-la-e-lo.json").hands[0]
    last = h.line[-1]
    other = h.right_end if last.end == "left" else h.left_end
    assert not last.tile.is_double and {last.inner, other} == {last.tile.low, last.tile.high}


def test_batida_de_dobre_nas_duas_pontas_vale_tres_pontos() -> None:
    h = replay_match("brazilian-points-cruzada.json").hands[0]
    last = h.line[-1]
    assert last.tile.is_double and h.left_end == h.right_end == last.tile.low


def test_o_jogador_pode_iniciar_mostrando_uma_bucha_e_bater_com_ela_vale_quatro() -> None:
    h = replay_match("brazilian-points-quadriciclo.json").hands[0]
    seat = h.line[-1].seat
    assert h.announced[seat] == h.line[-1].tile
    assert isinstance(h.moves[0], Announce)


def test_bucha_anunciada_nas_duas_pontas_vale_oito() -> None:
    h = replay_match("brazilian-points-4x4.json").hands[0]
    last = h.line[-1]
    assert h.announced[last.seat] == last.tile and h.left_end == h.right_end == last.tile.low


def test_se_nao_bater_com_a_bucha_anunciada_perdera_um_ponto() -> None:
    m = replay_match("brazilian-points-announce-failed.json")
    h, r = m.hands[0], m.results[0]
    ((seat, _),) = h.announced.items()
    assert r.points[h.team_of(seat)] <= -1 + (1 if r.winner == h.team_of(seat) else 0)
    assert r.points == expected_points(h)


def test_se_tres_buchas_morrerem_e_ganhar_de_bucha_nas_duas_pontas_e_cegonha() -> None:
    h = replay_match("brazilian-points-cegonha.json").hands[0]
    seat = h.line[-1].seat
    assert sum(1 for lp in h.line[:-1] if lp.tile.is_double and lp.seat == seat) >= 3
    # option: count anyone's doubles
    m = DominoMatch(B, {"cegonha_doubles": "anyone"})
    again = m.new_hand(deal=h.deal)
    for mv in h.moves:
        again.play(mv)
    assert m.finish_hand().label == "cegonha"


def test_announcing_only_before_the_opening_only_a_held_double_once_per_seat() -> None:
    h = DominoMatch(B).new_hand(random.Random(8))
    seat = next(s for s in range(4) if any(t.is_double and t != T("6-6") for t in h.hand_of(s)))
    dbl = next(t for t in h.hand_of(seat) if t.is_double and t != T("6-6"))
    plain = next(t for t in h.hand_of(seat) if not t.is_double)
    with pytest.raises(IllegalPlayError, match="not a double"):
        h.check(Announce(seat, plain))
    missing = next(t for t in ALL_TILES if t.is_double and t not in h.hand_of(seat))
    with pytest.raises(IllegalPlayError, match="does not hold"):
        h.check(Announce(seat, missing))
    h.play(Announce(seat, dbl))  # any seat, not only the one to play
    with pytest.raises(IllegalPlayError, match="already announced"):
        h.check(Announce(seat, dbl))
    h.play(Play(h.to_play, T("6-6")))
    other = next(s for s in range(4) if s != seat and any(t.is_double for t in h.hand_of(s)))
    with pytest.raises(IllegalPlayError, match="before the opening"):
        h.check(Announce(other, next(t for t in h.hand_of(other) if t.is_double)))
    off = DominoMatch(B, {"announce": False}).new_hand(deal=h.deal)
    with pytest.raises(IllegalPlayError, match="switched off"):
        off.check(Announce(seat, dbl))


def test_every_random_hand_scores_as_the_lines_say() -> None:
    labels = set()
    for seed in range(600):
        h, r = random_hand(seed, seats=4 if seed % 3 else 3, announce=0.05)
        if h.outcome in ("locomotiva", "seven-doubles"):
            continue
        assert r.points == expected_points(h), (seed, r)
        labels.add(r.label)
    assert {"batida", "batida de bucha", "lá-e-lô", "fechada"} <= labels


# --------------------------------------------------------------------------- the deal


def test_se_um_jogador_sair_com_sete_pedras_de_uma_so_ganhara_trinta_e_dois_pontos() -> None:
    m = replay_match("brazilian-points-locomotiva.json")
    h, r = m.hands[0], m.results[0]
    assert h.moves == [] and r.outcome == "locomotiva" and r.points[W(r.winner)] == 32
    seat = h.winner_seat
    assert any(all(t.has(n) for t in h.deal[W(seat)]) for n in range(7))
    off = DominoMatch(B, {"deal_specials": False}).new_hand(deal=h.deal)
    assert not off.is_over


def test_se_um_jogador_sair_com_sete_buchas_ganhara_o_domino() -> None:
    m = replay_match("brazilian-points-seven-doubles.json")
    h, r = m.hands[-1], m.results[-1]
    assert r.outcome == "seven-doubles" and m.is_over and m.winner == r.winner
    assert all(t.is_double for t in h.deal[W(h.winner_seat)])
    assert m.score[W(m.winner)] >= m.target


# --------------------------------------------------------------------------- between matches


def test_a_dupla_que_terminar_fazendo_mais_que_quatro_pontos_fica_com_bonus() -> None:
    m = replay_match("brazilian-points-bonus.json")
    assert m.score[W(m.winner)] > 4
    assert m.carry[W(m.winner)] == m.score[W(m.winner)] - 4


def test_a_dupla_que_perder_de_lambreta_comeca_com_saldo_negativo_de_um() -> None:
    m = replay_match("brazilian-points-lambreta.json")
    loser = 1 - W(m.winner)
    assert m.score[loser] <= 0 and m.carry[loser] == -1
    # the next match starts from the carried balance (option start_score)
    nxt = DominoMatch(B, {"start_score": m.carry})
    assert nxt.score == m.carry
    assert DominoMatch(B, {"lambreta": 0}).options.lambreta == 0


def test_a_dupla_prejudicada_por_toques_tem_o_direito_de_voltar_a_partida() -> None:
    rng = random.Random(9)
    m = DominoMatch(B)
    first = m.new_hand(rng)
    first.playout(rng)
    m.finish_hand()
    rule = m.next_opening
    h = m.new_hand(rng)
    for _ in range(5):
        h.play(rng.choice([x for x in h.legal_moves() if not isinstance(x, Announce)]))
    score = list(m.score)
    m.void_hand("toques: 'cuidado, parceiro'")
    assert m.current is None and m.score == score and len(m.hands) == 1
    assert m.next_opening == rule  # the hand is played again, same opening rule
    again = m.new_hand(rng)
    assert again.opening == h.opening or again.opening.seat == h.opening.seat
    again.playout(rng)
    m.finish_hand()
    rec = m.to_record()
    assert len(rec["hands"]) == 2
    assert (
        rec["x-voided"][0]["reason"].startswith("toques") and rec["x-voided"][0]["before_hand"] == 1
    )


# --------------------------------------------------------------------------- issue 12


def _random_match(start: list[float], seed: int) -> DominoMatch:
    rng = random.Random(seed)
    m = DominoMatch(B, {"start_score": start})
    while not m.is_over:
        h = m.new_hand(rng)
        h.playout(rng)
        m.finish_hand()
    return m


def test_lambreta_e_decidida_nos_pontos_feitos_nesta_partida() -> None:
    """ "Losing without a point" is about the points made in this match, not the
    final score with the carried ``start_score``: a pair that scored and lost
    is not penalised; a pair that scored nothing after a carried bonus is."""
    scored = nothing = 0
    for seed in range(400):
        m = _random_match([-2, 0], seed)
        if m.winner == 1 and m.score[0] <= 0 < m.score[0] + 2:
            assert m.carry[0] == 0, (seed, m.score)  # made points: no lambreta
            scored += 1
        m = _random_match([1, 0], seed)
        if m.winner == 1 and m.score[0] <= 1:
            assert m.carry[0] == -1, (seed, m.score)  # carried 1, made none
            nothing += 1
        if scored >= 2 and nothing >= 2:
            return
    pytest.fail(f"too few matches of each kind ({scored}, {nothing})")


def test_qualquer_dupla_que_terminar_acima_da_meta_fica_com_bonus_a_perdedora_tambem() -> None:
    """ "A dupla que terminar fazendo mais que quatro pontos": every pair above
    the target keeps its excess, the losing one too (after tied hands both
    sides can pass the target)."""
    for seed in range(400):
        m = _random_match([4, 4], seed)
        loser = 1 - W(m.winner)
        if m.score[loser] > 4:
            assert m.carry[loser] == m.score[loser] - 4
            assert m.carry[W(m.winner)] == m.score[W(m.winner)] - 4
            return
    pytest.fail("no match in which the loser ended above the target")


def test_depois_do_jogo_fechado_qualquer_parceiro_da_dupla_ganhadora_pode_sair() -> None:
    """After a blocked hand the winning pair opens with a non-double; the text
    does not say which partner, so either may (the record says who), and the
    other pair may not."""
    rng = random.Random(5)
    found = 0
    for _ in range(400):
        m = DominoMatch(B)
        h = m.new_hand(rng)
        h.playout(rng)
        r = m.finish_hand()
        if r.outcome != "blocked" or r.winner is None:
            continue
        nxt = m.new_hand(rng)
        pair = [s for s in range(4) if nxt.team_of(s) == r.winner]
        assert sorted(nxt.openers) == pair
        for seat in pair:
            plain = next((t for t in nxt.hand_of(seat) if not t.is_double), None)
            if plain is None:
                continue
            assert Play(seat, plain) in nxt.legal_moves(seat)
            trial = nxt.clone()
            trial.play(Play(seat, plain))
            assert trial.opener == seat and trial.to_play == (seat + 1) % 4
            trial.undo()
            assert trial.to_play == nxt.to_play
            assert set(trial.legal_moves()) == set(nxt.legal_moves())
            with pytest.raises(IllegalPlayError, match="must open"):
                trial.check(Pass(seat))
            dbl = next((t for t in nxt.hand_of(seat) if t.is_double), None)
            if dbl is not None:
                with pytest.raises(IllegalPlayError, match="not a double"):
                    nxt.check(Play(seat, dbl))
        for seat in range(4):
            if seat not in pair:
                with pytest.raises(IllegalPlayError, match="opens this hand"):
                    nxt.check(Play(seat, nxt.hand_of(seat)[0]))
        found += 1
        if found >= 5:
            return
    pytest.fail("too few blocked hands")


def test_a_record_may_open_with_either_partner_after_a_blocked_hand() -> None:
    """Through ``replay``: the same record with the opening made by the other
    partner (the moves after it follow from the engine) is legal."""
    from tablesense.games.dominoes import move_to_json, replay_record

    rng = random.Random(11)
    for _ in range(400):
        m = DominoMatch(B)
        h = m.new_hand(rng)
        h.playout(rng)
        r = m.finish_hand()
        if r.outcome != "blocked" or r.winner is None:
            continue
        nxt = m.new_hand(rng)
        other = (nxt.to_play + 2) % 4  # the partner of the suggested opener
        plain = next((t for t in nxt.hand_of(other) if not t.is_double), None)
        if plain is None:
            m.void_hand("not the case under test")
            continue
        nxt.play(Play(other, plain))
        nxt.playout(rng)
        m.finish_hand()
        record = m.to_record()
        assert record["hands"][1]["moves"][0] == move_to_json(Play(other, plain))
        assert len(replay_record(record).hands) == 2
        return
    pytest.fail("no blocked hand to follow")


def test_a_bucha_que_deve_abrir_a_mao_nao_pode_ser_anunciada() -> None:
    """The double that must open the hand (6-6 in the first hand, 0-0 in the
    first 3-seat hand, 6-6 after a tied count) is laid first, so it can never
    be the last tile: announcing it is refused."""
    for seats, first in ((4, T("6-6")), (3, T("0-0"))):
        h = DominoMatch(B, seats=seats).new_hand(random.Random(8))
        holder = W(h.holder(first))
        assert Announce(holder, first) not in h.legal_moves(holder)
        with pytest.raises(IllegalPlayError, match="must open this hand"):
            h.check(Announce(holder, first))
        other = next((t for t in h.hand_of(holder) if t.is_double and t != first), None)
        if other is not None:
            assert Announce(holder, other) in h.legal_moves(holder)
