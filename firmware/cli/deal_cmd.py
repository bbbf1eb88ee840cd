"""``mjtable deal``: walls, break, starting hands and first draws (placeholder until dealing lands)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    del sub  # registered by the dealing module once it exists
