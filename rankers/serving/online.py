"""The online test ``ranker_server`` serves (``rankers.online_tests``): the challenger loaded beside the
champion, which queries are interleaved, and a watch that follows the test's start and stop.

A query is interleaved when its bucket, the first 4 bytes of ``SHA-256("share" ‖ 0x1f ‖ test id ‖ 0x1f ‖
query_id)`` mod 100, is below the test's share (0-100): the same ``query_id`` is in or out on every
replay, in any process. The interleaving itself is ``rankers.interleaving.team_draft_interleave`` with the
test's id as salt, so a replay of the log gives the same list and the same teams.

The watch reads the collection's running test at start and every ``ONLINE_TEST_POLL_MS`` in a thread
of its own (the requests never touch the database): a test started from the version page or the API is
served from the next look, a stopped one no longer is. The server interleaves only a test whose champion
is the version it serves, of the ranker it serves (``note`` says why not otherwise, in ``/healthz``).

The same look follows the champion when the server was not pinned (``--version``): a promotion (by hand,
or by the ``online`` policies) loads the new champion's backend in the watch's thread, with the loaders
the challenger uses, and swaps ``served`` in one assignment; each request reads ``served`` once, so it is
answered and logged by one version, old or new, and none fails. A version that cannot be loaded leaves the
old one serving, and ``note`` says why (tried again when the champion changes again).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import connections

from rankers.backends import RankerError, get_backend
from rankers.base import Ranking
from rankers.interleaving import Interleaving, team_draft_interleave
from rankers.models import Ranker, RankerVersion
from rankers.online_tests import running_online_test
from rankers.selectors import ranking_version

logger = logging.getLogger(__name__)


def share_bucket(test_id: int, query_id: str) -> int:
    """0-99: the query's bucket; interleaved when below the test's share."""
    digest = hashlib.sha256(f"share\x1f{test_id}\x1f{query_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % 100


@dataclass(frozen=True)
class OnlineServing:
    """A running test as served: its id, the versions' labels, the share and the challenger's ranker
    (a BuiltinBackend, or a RerankingService for an engine or http ranker)."""

    test_id: int
    champion: str
    challenger: str
    share: int
    backend: Any

    def interleaves(self, query_id: str) -> bool:
        return share_bucket(self.test_id, query_id) < self.share

    def interleave(self, champion: Ranking, challenger: Ranking, *, query_id: str, rows: int) -> Interleaving:
        return team_draft_interleave(
            champion.ids, challenger.ids, query_id=query_id, length=rows, salt=str(self.test_id)
        )

    def attributes(self, teams: tuple[int, ...]) -> dict[str, Any]:
        """What the UBI query records: the test, both versions and each hit's team (−1 champion, +1
        challenger, 0 nobody), in served order."""
        return {
            "online_test": self.test_id,
            "champion": self.champion,
            "challenger": self.challenger,
            "teams": list(teams),
        }

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.test_id,
            "champion": self.champion,
            "challenger": self.challenger,
            "share": self.share,
        }


@dataclass(frozen=True)
class Served:
    """What answers the requests: the version (None: plain BM25, or the engine alone), its label and its
    backend (a BuiltinBackend or a RerankingService)."""

    version: RankerVersion | None
    backend: Any

    @property
    def label(self) -> str | None:
        return self.version.label if self.version is not None else None


Loader = Callable[[Ranker, RankerVersion], Any]


def builtin_loader(ranker: Ranker, version: RankerVersion) -> Any:
    return get_backend(ranker, version)


class OnlineWatch:
    """The served ranker's champion and running test, read now and every ``poll_seconds``; ``served`` is
    what answers (swapped for a new champion when ``follow``), ``current`` the OnlineServing to use (None:
    serve the champion alone), ``note`` why a running test is not served or a champion not loaded.
    ``tests`` False (nothing is logged): the champion only, no online test."""

    def __init__(
        self,
        *,
        ranker: Ranker | None,
        served: Served,
        loader: Loader,
        poll_seconds: float,
        follow: bool = False,
        tests: bool = True,
    ) -> None:
        self.ranker = ranker
        self.served = served
        self.loader = loader
        self.poll_seconds = poll_seconds
        self.follow = follow and ranker is not None
        self.tests = tests
        self.current: OnlineServing | None = None
        self.note = ""
        self.champion_note = ""
        self._loaded_for: int | None = None
        self._failed_for: int | None = None
        self._stopping = threading.Event()

    @property
    def version(self) -> RankerVersion | None:
        return self.served.version

    def follow_champion(self) -> None:
        """Serve the ranker's champion (else its latest version, as at start) if it is another version
        than the one served: loaded here, then swapped in one assignment."""
        if not self.follow or self.ranker is None:
            return
        ranker = Ranker.objects.filter(pk=self.ranker.pk).first()
        wanted = ranking_version(ranker=ranker) if ranker is not None else None
        if ranker is None or wanted is None or wanted.pk == (self.version.pk if self.version else None):
            self._failed_for, self.champion_note = None, ""
            return
        if wanted.pk == self._failed_for:
            return
        try:
            backend = self.loader(ranker, wanted)
        except Exception as exc:  # any load failure: the old version keeps serving
            self._failed_for = wanted.pk
            self.champion_note = (
                f"champion {wanted.label} cannot be loaded: {exc}; still serving {self.served.label}"
            )
            logger.error("ranker_server: %s", self.champion_note)
            return
        old = self.served.label
        self.current, self._loaded_for = None, None  # the old champion's test: looked at again below
        self.served = Served(version=wanted, backend=backend)
        self._failed_for, self.champion_note = None, ""
        logger.info("ranker_server: now serving the champion %s (was %s)", wanted.label, old)

    def refresh(self) -> None:
        """Follow the champion, read the running test and load its challenger if it is a new one."""
        self.follow_champion()
        if self.ranker is None or self.version is None or not self.tests:
            self.current, self.note = None, ""
            return
        test = running_online_test(collection=self.ranker.collection)
        if test is None:
            self.current, self.note, self._loaded_for = None, "", None
            return
        if test.pk == self._loaded_for:
            return
        self._loaded_for = test.pk
        if test.challenger.ranker_id != self.ranker.pk or test.champion_id != self.version.pk:
            self.current = None
            self.note = (
                f"online test {test.pk} ({test.challenger.label} against {test.champion.label}) is not "
                f"interleaved here: this server serves {self.ranker.name} {self.version.label}"
            )
            return
        try:
            backend = self.loader(self.ranker, test.challenger)
        except RankerError as exc:
            self.current = None
            self.note = f"online test {test.pk}: {test.challenger.label} cannot be loaded: {exc}"
            return
        self.current = OnlineServing(
            test_id=test.pk,
            champion=test.champion.label,
            challenger=test.challenger.label,
            share=test.share,
            backend=backend,
        )
        self.note = ""
        logger.info("ranker_server: interleaving %s", self.current.describe())

    def start(self) -> OnlineWatch:
        self.refresh()
        connections.close_all()
        threading.Thread(target=self._poll, name="online-test-watch", daemon=True).start()
        return self

    def _poll(self) -> None:
        while not self._stopping.wait(self.poll_seconds):
            try:
                self.refresh()
            except Exception:  # the database away: keep serving what was read last
                logger.exception("ranker_server: cannot read the online test")
            finally:
                connections.close_all()

    def stop(self) -> None:
        self._stopping.set()

    def health(self) -> dict[str, Any] | None:
        current = self.current
        if current is not None:
            return current.describe()
        return {"note": self.note} if self.note else None

    def champion_health(self) -> dict[str, Any]:
        """``/healthz``'s ``version`` now, and why a new champion is not served, if so."""
        note = self.champion_note
        return {"version": self.served.label, **({"champion_note": note} if note else {})}
