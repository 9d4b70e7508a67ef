"""The link room: the serial link to the boards, per-board connections, discovery, and the merger of
their reports into one `TableState`.
"""
