"""Calling an OpenAI chat-completions service (OpenAI, Azure OpenAI, Ollama, vLLM, llama.cpp server).

``POST {base_url}/chat/completions`` with ``{"model", "messages", "temperature"}`` and
``Authorization: Bearer <key>``; the reply is ``choices[0].message.content`` and ``usage`` counts tokens.
With ``logprobs`` the request also says ``"logprobs": true, "top_logprobs": TOP_LOGPROBS`` and the
reply's ``choices[0].logprobs.content`` (a list of ``{"token", "logprob", "top_logprobs"}``) is kept.
Connections go through the outbound policy (``rankers.outbound.guarded_client``: no metadata or, unless
allowed, private addresses; no redirects). Errors say what happened without the key: it is never put
in a message, a log line or an exception.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass

import httpx

from rankers.http import unreachable_reason
from rankers.outbound import OutboundRefused, check_url, guarded_client

RETRIES = 4  # attempts after the first, on 429, 5xx, timeouts and dropped connections
BACKOFF_SECONDS = 0.5  # first wait, doubling, with jitter; a Retry-After header wins when it says more
MAX_RETRY_AFTER = 60.0
TOP_LOGPROBS = 5  # alternatives per token position: enough to hold the four grades' digits


class JudgeError(Exception):
    """A judge call failed; the message is safe to show (it never holds the key)."""


class JudgeUnavailable(JudgeError):
    """Transient: unreachable, timed out, rate limited (429) or a server error (5xx). Retried."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class JudgeRefused(JudgeError):
    """Permanent for the run: wrong key (401/403), unknown model (404), refused address, bad request."""


class JudgeProtocolError(JudgeError):
    """The service answered something that is not a chat completion."""


@dataclass(frozen=True)
class ChatReply:
    content: str
    prompt_tokens: int
    completion_tokens: int
    attempts: int = 1
    # choices[0].logprobs.content when asked for and returned, else None.
    token_logprobs: list | None = None


class RateLimiter:
    """At most ``per_minute`` request starts a minute, spread evenly, shared by a run's threads."""

    def __init__(self, per_minute: int) -> None:
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self._next = time.monotonic()
        self._lock = threading.Lock()

    def wait(self) -> None:
        if not self.interval:
            return
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            time.sleep(start - now)


def completions_url(base_url: str) -> str:
    return base_url.rstrip("/") + "/chat/completions"


class ChatClient:
    """One judge's connection pool; thread-safe (httpx.Client is)."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str,
        temperature: float,
        timeout: float,
        concurrency: int = 4,
        requests_per_minute: int = 0,
        retries: int = RETRIES,
        backoff: float = BACKOFF_SECONDS,
        logprobs: bool = False,
    ) -> None:
        try:
            check_url(base_url)
        except OutboundRefused as exc:
            raise JudgeRefused(f"The judge's URL is refused: {exc}") from None
        self.url = completions_url(base_url)
        self.model, self.temperature, self.logprobs = model, temperature, logprobs
        self.retries, self.backoff = retries, backoff
        self.limiter = RateLimiter(requests_per_minute)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = guarded_client(
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            headers=headers,
            limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
        )

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def complete(self, user_message: str, on_retry=None) -> ChatReply:
        """The reply to one message, retrying transient failures with backoff; JudgeError otherwise."""
        attempt = 0
        while True:
            attempt += 1
            self.limiter.wait()
            try:
                reply = self._once(user_message)
                return ChatReply(
                    reply.content, reply.prompt_tokens, reply.completion_tokens, attempt, reply.token_logprobs
                )
            except JudgeUnavailable as exc:
                if attempt > self.retries:
                    raise JudgeUnavailable(f"{exc} (gave up after {attempt} attempts)") from None
                wait = self.backoff * 2 ** (attempt - 1) * (0.5 + random.random())
                if exc.retry_after is not None:
                    wait = max(wait, min(exc.retry_after, MAX_RETRY_AFTER))
                if on_retry is not None:
                    on_retry()
                time.sleep(wait)

    def _once(self, user_message: str) -> ChatReply:
        body: dict[str, object] = {
            "model": self.model,
            "temperature": self.temperature,
            "messages": [{"role": "user", "content": user_message}],
        }
        if self.logprobs:
            body.update(logprobs=True, top_logprobs=TOP_LOGPROBS)
        try:
            response = self.client.post(self.url, json=body)
        except OutboundRefused as exc:
            raise JudgeRefused(f"The judge's address is refused: {exc}") from None
        except httpx.TimeoutException:
            raise JudgeUnavailable(f"The judge at {self.url} did not answer in time.") from None
        except httpx.TransportError as exc:
            raise JudgeUnavailable(
                f"The judge at {self.url} is unreachable: {unreachable_reason(exc)}."
            ) from None
        status = response.status_code
        if status == 429:
            raise JudgeUnavailable(f"The judge at {self.url} is rate limiting (429).", _retry_after(response))
        if status >= 500:
            raise JudgeUnavailable(
                f"The judge at {self.url} failed with HTTP {status}.", _retry_after(response)
            )
        if status in (401, 403):
            raise JudgeRefused(f"The judge at {self.url} refused the API key (HTTP {status}): check the key.")
        if status == 404:
            raise JudgeRefused(
                f"The judge at {self.url} answered 404: check the base URL (it ends before "
                f"/chat/completions, e.g. http://host/v1) and the model {self.model!r}."
            )
        if status >= 400:
            raise JudgeRefused(
                f"The judge at {self.url} refused the request (HTTP {status}): {_said(response)}"
            )
        try:
            payload = response.json()
            content = payload["choices"][0]["message"]["content"]
            usage = payload.get("usage") or {}
            logprobs = payload["choices"][0].get("logprobs")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise JudgeProtocolError(
                f"The judge at {self.url} answered something that is not a chat completion: "
                f"{response.text[:200]!r}"
            ) from None
        if not isinstance(content, str):
            raise JudgeProtocolError(f"The judge at {self.url} answered a message without text content.")
        tokens = logprobs.get("content") if isinstance(logprobs, dict) else None
        return ChatReply(
            content,
            _count(usage, "prompt_tokens"),
            _count(usage, "completion_tokens"),
            token_logprobs=tokens if isinstance(tokens, list) else None,
        )


def _count(usage: object, name: str) -> int:
    value = usage.get(name, 0) if isinstance(usage, dict) else 0
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _retry_after(response: httpx.Response) -> float | None:
    try:
        return float(response.headers.get("Retry-After", ""))
    except ValueError:
        return None


def _said(response: httpx.Response) -> str:
    try:
        error = response.json().get("error")
        message = error.get("message") if isinstance(error, dict) else error
        return str(message)[:300]
    except (ValueError, AttributeError):
        return response.text[:300]
