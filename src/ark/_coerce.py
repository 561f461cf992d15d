"""Lenient coercion of model-produced values (models often quote numbers)."""

from __future__ import annotations

import re

import numpy as np

# ASCII digits only: str.isdigit() also accepts "²" and "١", which int() refuses or
# reads differently; at most 18 digits, so the value fits in int64 and int() is cheap.
_INTEGER = re.compile(r"[+-]?[0-9]{1,18}")


def as_int(value: object) -> int | None:
    """An int from an int, an integral float or a string of ASCII digits; else ``None``.

    Never raises, whatever ``value`` is (``"²"``, ``"--5"``, ``"1e999"``, ``inf``).
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return int(value) if np.isfinite(value) and float(value).is_integer() else None
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        return int(value.strip())
    return None
