"""Fixtures of the remote tests: one club's broker, two clubs' bridged
(remotekit.py, importable from this folder: pytest runs with
--import-mode=importlib, which adds no test dirs to sys.path)."""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from remotekit import bridged, pg_url, remote_broker  # noqa: E402

__all__ = ["bridged", "pg_url", "remote_broker"]
