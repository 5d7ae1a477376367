"""A job's failure as a person reads it: what went wrong in words, never Python's (an exception's class
name, an ``[Errno 111]``). The one place the jobs' stored reasons (a training's, an evaluation's, the
broker's) are worded, so the pages and the API show sentences; the worker's log keeps the traceback."""

from __future__ import annotations

import re

# "[Errno 111] ", "Errno 111: ", and redis-py's "Error 111 connecting to host:port." ("connecting ..." kept).
_ERRNO = re.compile(r"\[Errno -?\d+\]\s*|\bErrno -?\d+:?\s*|\bError -?\d+ (?=connecting)")
# Errors of the code itself: their message ("'bm25'", "'NoneType' object has no attribute 'pk'") names
# Python's objects, which tells a person nothing.
_INTERNAL = (AttributeError, AssertionError, IndexError, KeyError, NameError, TypeError, ZeroDivisionError)
UNEXPECTED = "an unexpected error in the worker (its log has the details)"


def failure_reason(exc: BaseException) -> str:
    """The exception's message for a person: without an errno, and without its class name, which is never
    put in; an error of the code itself (or one without a message) is called unexpected instead."""
    if isinstance(exc, _INTERNAL):
        return UNEXPECTED
    text = " ".join(_ERRNO.sub("", str(exc)).split())
    return text or UNEXPECTED
