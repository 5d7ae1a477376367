"""``manage.py ranker_server``: serve a collection's ranker over the HTTP ranker protocol (``rankers.serving``
says what it answers: POST /, POST /rank, GET /healthz, the rerank budget and the fault options)."""

from __future__ import annotations

import gc
import logging
import signal
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connections

from corpus.models import Collection
from rankers.backends import RankerError, get_backend
from rankers.builtin import BuiltinBackend
from rankers.index import load_index
from rankers.models import Ranker, RankerKind, RankerVersion
from rankers.selectors import default_ranker
from rankers.semantic import encode_on_one_thread
from rankers.serving.handler import Server, make_handler
from rankers.serving.online import OnlineWatch, Served, builtin_loader
from rankers.serving.service import Faults, RerankingService, ServeError, reranking_service
from ubi.log import UbiLog

logger = logging.getLogger(__name__)


class Command(BaseCommand):
    help = (
        "Serve a collection's ranker over the HTTP ranker protocol (POST /, GET /healthz): its builtin "
        "ranker, or an engine or http ranker's version reranking the engine's answers (and POST /rank)."
    )

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        # --version names the ranker version to serve here, in place of Django's own --version.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", required=True, help="slug of the collection to rank")
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8077, help="0 picks a free port (printed at start)")
        parser.add_argument(
            "--ranker",
            type=int,
            help="id of a ranker of the collection whose champion to serve: builtin, or an engine or http "
            "ranker whose trained version reranks the engine's answers (default: the collection's "
            "default ranker if builtin, else plain BM25)",
        )
        parser.add_argument(
            "--version", type=int, metavar="ID", help="serve this version of the ranker instead"
        )
        parser.add_argument(
            "--budget-ms",
            type=int,
            help="engine and http rankers: how long a rerank may take before the engine's order is answered "
            "(default: the ranker's budget_ms config, 50 when unset)",
        )
        parser.add_argument(
            "--no-ubi",
            action="store_true",
            help="log nothing: no query_id in answers, no POST /events (default: every answer is logged as a "
            "UBI query, see docs/ubi.md)",
        )
        parser.add_argument(
            "--application",
            help="the UBI application name of the logged queries (default: the collection's slug)",
        )
        faults = parser.add_argument_group("fault injection (tests and benchmarks only)")
        faults.add_argument("--latency-ms", type=int, default=0, help="sleep this long before each answer")
        faults.add_argument(
            "--fail-first", type=int, default=0, help="answer the first N rank requests with 500"
        )
        faults.add_argument("--garbage", action="store_true", help="answer 200 with a body that is not JSON")
        faults.add_argument("--unknown-ids", type=int, default=0, help="put N unknown answer ids on top")
        faults.add_argument(
            "--rerank-delay-ms",
            type=int,
            default=0,
            help="sleep this long in each rerank step (engine rankers)",
        )
        faults.add_argument(
            "--rerank-fail", action="store_true", help="make each rerank step raise (engine rankers)"
        )

    @staticmethod
    def _service_loader(faults: Faults, options: dict[str, Any]) -> Callable[[Ranker, RankerVersion], Any]:
        """An online test's challenger of an engine or http ranker: its own reranking service, warmed up;
        it reranks the champion's candidates (``rankers.serving.online``)."""

        def load(ranker: Ranker, version: RankerVersion) -> RerankingService:
            try:
                service, _ = reranking_service(ranker, version, faults, budget_ms=options["budget_ms"])
            except ServeError as exc:
                raise RankerError(str(exc)) from exc
            service.warm_up()
            return service

        return load

    def handle(self, *args: Any, **options: Any) -> None:
        collection = Collection.objects.filter(slug=options["collection"]).first()
        if collection is None:
            raise CommandError(f"no collection with slug {options['collection']!r}")
        for name in ("latency_ms", "fail_first", "unknown_ids", "rerank_delay_ms"):
            if options[name] < 0:
                raise CommandError(f"--{name.replace('_', '-')} must be 0 or more")
        if options["budget_ms"] is not None and not 1 <= options["budget_ms"] <= 10_000:
            raise CommandError("--budget-ms must be from 1 to 10000")
        ranker: Ranker | None
        if options["ranker"] is not None:
            ranker = Ranker.objects.filter(pk=options["ranker"], collection=collection).first()
            if ranker is None:
                raise CommandError(f"collection {collection.slug} has no ranker with id {options['ranker']}")
        else:
            ranker = default_ranker(collection=collection)
            if ranker is not None and ranker.kind != RankerKind.BUILTIN:
                ranker = None
        version_asked: RankerVersion | None = None
        if options["version"] is not None:
            version_asked = RankerVersion.objects.filter(pk=options["version"], ranker=ranker).first()
            if ranker is None or version_asked is None:
                raise CommandError(f"the ranker served has no version with id {options['version']}")
        encode_on_one_thread()  # a question met for the first time: no thread hand-offs to wait for
        faults = Faults(
            latency_ms=options["latency_ms"],
            fail_first=options["fail_first"],
            garbage=options["garbage"],
            unknown_ids=options["unknown_ids"],
            rerank_delay_ms=options["rerank_delay_ms"],
            rerank_fail=options["rerank_fail"],
        )
        backend: BuiltinBackend | RerankingService
        version: RankerVersion | None
        if ranker is not None and ranker.kind != RankerKind.BUILTIN:
            try:
                service, version = reranking_service(
                    ranker, version_asked, faults, budget_ms=options["budget_ms"]
                )
            except ServeError as exc:
                raise CommandError(str(exc)) from exc
            index = service.reranking.index if service.reranking else load_index(collection=collection)
            health = {
                "status": "ok",
                "collection": collection.slug,
                "answers": index.size,
                "ranker": ranker.name,
                "version": version.label if version else None,
                "uses_model": service.active,
                "kind": ranker.kind,
                "first_stage": service.first.url,
                "reranks": service.reranking is not None,
                "candidates": service.depth,
                "budget_ms": service.budget_ms,
                "fallback": service.broken or None,
            }
            service.warm_up()
            backend = service
        else:
            try:
                served = (
                    get_backend(ranker, version_asked)
                    if ranker is not None
                    else BuiltinBackend(collection=collection)
                )
            except RankerError as exc:
                raise CommandError(str(exc)) from exc
            assert isinstance(served, BuiltinBackend)
            backend = served
            version = backend.version
            health = {
                "status": "ok",
                "collection": collection.slug,
                "answers": backend.index.size,
                "ranker": ranker.name if ranker else "BM25",
                "version": version.label if version else None,
                "uses_model": backend.model is not None,
            }
        connections.close_all()  # requests never use the database
        # What is loaded now lives as long as the process: out of the collector's sight, a full
        # collection no longer walks the index and the models (tens of ms, at any request's expense).
        gc.collect()
        gc.freeze()
        ubi = None
        if not options["no_ubi"]:
            # Its writer thread has its own database connection; requests never touch it.
            ubi = UbiLog(
                directory=settings.UBI_SPOOL_DIR,
                application=options["application"] or collection.slug,
                fsync=settings.UBI_SPOOL_FSYNC,
            ).start()
        online = None
        follow = options["version"] is None  # not pinned: the champion's promotions are served
        if ranker is not None and (version is not None or follow):
            # After the writer's fork: the watch has a thread and a database connection of its own.
            online = OnlineWatch(
                ranker=ranker,
                served=Served(version=version, backend=backend),
                loader=builtin_loader
                if ranker.kind == RankerKind.BUILTIN
                else self._service_loader(faults, options),
                poll_seconds=settings.ONLINE_TEST_POLL_MS / 1000,
                follow=follow,
                tests=ubi is not None,
            ).start()
        handler = make_handler(
            online=online,
            backend=backend,
            faults=faults,
            health=health,
            verbose=options["verbosity"] >= 2,
            version_label=version.label if version else None,
            ubi=ubi,
        )
        server = Server((options["host"], options["port"]), handler)
        host, port = options["host"], server.server_address[1]
        self.stdout.write(
            f"ranker_server: {collection.slug} ({health['answers']} answers, {health['ranker']}"
            f"{' ' + version.label if version else ''}) on http://{host}:{port}/"
        )
        if health.get("fallback"):
            self.stdout.write(f"ranker_server: answering the engine's order: {health['fallback']}")
        self.stdout.flush()
        # SIGTERM stops as Ctrl-C does: the log's writer stores what the spool holds before the exit.
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
            if online is not None:
                online.stop()
            if ubi is not None:
                ubi.stop()
            last = online.served.backend if online is not None else backend
            for each in {id(backend): backend, id(last): last}.values():
                if isinstance(each, RerankingService):
                    each.pool.shutdown(wait=False, cancel_futures=True)
