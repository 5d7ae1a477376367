"""Serve a collection's answers as a stand-in Elasticsearch/OpenSearch index and Solr core, to try an
``engine`` ranker without a search engine (``rankers/engine_server.py`` has the shapes and the scorer).

    python manage.py engine_server --collection cranfield --port 9200
    # Elasticsearch/OpenSearch: POST http://127.0.0.1:9200/cranfield/_search
    # Solr:                     GET  http://127.0.0.1:9200/solr/cranfield/select?q=...

Fault options for tests and benchmarks only: ``--latency-ms``, ``--fail-first N`` (503 with the engine's
error JSON), ``--error-status`` (every search answers it, with the engine's error JSON), ``--garbage``.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connections

from corpus.models import Answer, Collection
from rankers.engine_server import EngineServer


class Command(BaseCommand):
    help = "Serve a collection's answers over the Elasticsearch/OpenSearch _search and Solr /select APIs."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--collection", required=True, help="slug of the collection whose answers to serve"
        )
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=9200, help="0 picks a free port (printed at start)")
        faults = parser.add_argument_group("fault injection (tests and benchmarks only)")
        faults.add_argument("--latency-ms", type=int, default=0, help="sleep this long before each answer")
        faults.add_argument("--fail-first", type=int, default=0, help="answer the first N searches with 503")
        faults.add_argument("--error-status", type=int, help="answer every search with this 4xx/5xx status")
        faults.add_argument("--garbage", action="store_true", help="answer 200 with a body that is not JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        collection = Collection.objects.filter(slug=options["collection"]).first()
        if collection is None:
            raise CommandError(f"no collection with slug {options['collection']!r}")
        if options["latency_ms"] < 0 or options["fail_first"] < 0:
            raise CommandError("--latency-ms and --fail-first must be 0 or more")
        status = options["error_status"]
        if status is not None and not 400 <= status <= 599:
            raise CommandError("--error-status must be from 400 to 599")
        documents = {
            external_id: {"title": title, "text": body}
            for external_id, title, body in Answer.objects.filter(collection=collection).values_list(
                "external_id", "title", "body"
            )
        }
        connections.close_all()  # requests never use the database
        server = EngineServer(
            documents,
            host=options["host"],
            port=options["port"],
            indexes=(collection.slug,),
            cores=(collection.slug,),
        )
        server.faults.latency_ms = options["latency_ms"]
        server.faults.fail_first = options["fail_first"]
        server.faults.error_status = status
        server.faults.garbage = options["garbage"]
        self.stdout.write(
            f"engine_server: {collection.slug} ({len(documents)} answers) on {server.url}/ "
            f"(POST /{collection.slug}/_search, GET /solr/{collection.slug}/select)"
        )
        self.stdout.flush()
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
