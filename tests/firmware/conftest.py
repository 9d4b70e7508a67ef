"""Firmware tests: make the shared helpers (fw_support, fw_mpy) importable
(pytest runs with --import-mode=importlib, which adds no test dirs to sys.path)."""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
