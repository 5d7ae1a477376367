"""A failure a person reads is in words: no Python class name, no errno. Jobs store their reasons through
``jobs.failure_reason``, connections that fail are described by ``rankers.http.unreachable_reason``, and no
module of the apps writes an exception's class name or repr into a message."""

from __future__ import annotations

import re
from pathlib import Path

from jobs import failure_reason
from tests.architecture.test_layers import LAYERS, ROOT

# An f-string putting an exception's class name or repr in a message.
CLASS_IN_MESSAGE = re.compile(r"\{[a-z_]*\.__class__\.__name__\}|\{exc!r\}|\{type\(exc\)\.__name__\}")
# The ranker server's answers to its caller (a program, which logs them), not to a person.
MACHINE_FACING = {str(Path("rankers") / "serving" / "handler.py")}


def test_no_module_puts_an_exception_class_in_a_message():
    found = sorted(
        str(path.relative_to(ROOT))
        for layer in LAYERS
        for path in (ROOT / layer).rglob("*.py")
        if CLASS_IN_MESSAGE.search(path.read_text())
    )
    assert [f for f in found if f not in MACHINE_FACING] == []


def test_failure_reason_drops_class_names_and_errnos():
    assert failure_reason(OSError(28, "No space left on device")) == "No space left on device"
    assert failure_reason(RuntimeError("disk full")) == "disk full"
    assert failure_reason(KeyError("bm25")) == "an unexpected error in the worker (its log has the details)"
    assert failure_reason(RuntimeError()) == "an unexpected error in the worker (its log has the details)"
    redis_said = ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
    assert failure_reason(redis_said) == "connecting to 127.0.0.1:6379. Connection refused."
