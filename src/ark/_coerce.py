"""Lenient coercion of model-produced values (models often quote numbers)."""

from __future__ import annotations

import numpy as np


def as_int(value: object) -> int | None:
    """An int from an int, an integral float or a string of digits; else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None
