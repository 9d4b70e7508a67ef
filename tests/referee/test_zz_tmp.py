from rich.console import Console
from tablesense.referee.demo import DemoConfig, run_demo

def test_x():
    f = open("/tmp/tt/log.txt", "w")
    r = run_demo(DemoConfig(game="dominoes", variant="pairs-pips", seats=None, seed=2, web=False, link="direct", timeout=50, fast=True), log=Console(file=f, force_terminal=False))
    f.close()
    assert r.match_over
