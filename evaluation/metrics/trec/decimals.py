"""Vectorised parsing of decimal tokens, bit for bit what C's ``strtod`` / ``atol`` give.

Plain decimals ``[+-]digits[.digits]`` of at most 15 digits are parsed as mantissa / 10**decimals, both
exact doubles, so the one division rounds correctly.  Anything else (exponents, ``inf``, long mantissas)
is left to :func:`slow_float`, Python's ``float``.
"""

from __future__ import annotations

import re

import numpy as np
from numpy.typing import NDArray

from .docs import FloatArray

__all__ = ["INT_TOKEN", "parse_numbers", "slow_float"]

_DIGITS_MAX = 15  # 10**15 < 2**53: mantissa and power of ten exact, so one division rounds correctly
INT_TOKEN = re.compile(rb"[+-]?[0-9]+")


def parse_numbers(matrix: NDArray[np.uint8], fraction: bool) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Vectorised parse of plain decimals ``[+-]digits[.digits]`` with at most 15 digits.

    Returns the values (exactly what ``strtod`` gives: mantissa / 10**fraction_digits, both exact
    doubles, one correctly rounded division) and a mask of the tokens handled; the others need the
    slow path.
    """
    n, width = matrix.shape
    if fraction and n:
        uniform = _parse_uniform_decimals(matrix)
        if uniform is not None:
            return uniform, np.ones(n, dtype=bool)
    columns = np.ascontiguousarray(matrix.T)
    digit = (columns >= 48) & (columns <= 57)
    if n == 0:
        return np.zeros(0), np.zeros(0, dtype=bool)
    negative = columns[0] == 45
    allowed = digit | (columns == 0)
    allowed[0] |= negative | (columns[0] == 43)
    dot = columns == 46
    if fraction:
        allowed |= dot
        ok = allowed.all(axis=0) & (np.count_nonzero(dot, axis=0) <= 1)
    else:
        ok = allowed.all(axis=0)
    n_digits = np.count_nonzero(digit, axis=0)
    ok &= (n_digits >= 1) & (n_digits <= _DIGITS_MAX)
    mantissa = np.zeros(n, dtype=np.int64)
    decimals = np.zeros(n, dtype=np.int64)
    seen_dot = np.zeros(n, dtype=bool)
    for j in range(width):
        np.copyto(mantissa, mantissa * 10 + (columns[j].astype(np.int64) - 48), where=digit[j])
        if fraction:
            seen_dot |= dot[j]
            decimals += digit[j] & seen_dot
    values = mantissa.astype(np.float64)
    if fraction:
        values /= np.float64(10.0) ** decimals
    np.negative(values, out=values, where=negative)
    return values, ok


def _parse_uniform_decimals(matrix: NDArray[np.uint8]) -> FloatArray | None:
    """Fast path for a block whose scores share one layout, ``digits.digits`` with the dot in the same
    column and no padding (e.g. everything printed with ``%.6f`` and the same integer width)."""
    width = matrix.shape[1]
    dots = np.flatnonzero(matrix[0] == 46)
    if width > _DIGITS_MAX + 1 or dots.size != 1 or (matrix[:, -1] == 0).any():
        return None
    dot = int(dots[0])
    digits = np.delete(matrix, dot, axis=1).astype(np.float64) - 48.0
    if not (matrix[:, dot] == 46).all() or (digits < 0).any() or (digits > 9).any():
        return None
    # every partial sum is an integer below 2**53, so the product is exact in any summation order
    weights = 10.0 ** np.arange(width - 2, -1, -1)
    mantissa: FloatArray = digits @ weights
    return mantissa / np.float64(10.0 ** (width - 1 - dot))


def slow_float(token: bytes) -> float | None:
    text = token.decode("ascii", errors="replace")
    if "_" in text:
        return None
    try:
        return float(text)
    except ValueError:
        return None
