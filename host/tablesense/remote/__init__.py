"""The remote room: matches whose seats sit at several tables: the authority with the deal and the
truth, the view filter of what each table may receive, a table's judge of its own sensors, the
signed messages over the broker (docs/remote.md).
"""
