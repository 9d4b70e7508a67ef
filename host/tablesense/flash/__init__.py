"""The flash room: getting firmware onto boards: UF2 and PICOBOOT, deploy over the raw REPL, `boards
list`.
"""
