"""The sim room: virtual and emulated boards (pseudo-terminals, the real firmware over an emulated
MFRC522 whose readers share one space, `space.py`; MicroPython wasm; rp2040js) and the hands that
move pieces on a virtual table.
"""
