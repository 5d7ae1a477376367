"""Real OpenSearch and Solr nodes for the engine-ranker tests, started once per test session.

``make engines`` builds the launchers in ``engines/`` (``engines/opensearch``: the OpenSearch 2.19 server
jar with its netty4 HTTP transport, analysis-common and the k-NN plugin 2.19.1.0 (jars only: the Lucene
engine and the ``knn_score`` script), security off; ``engines/solr``: Solr 9.10's
solr-core in Jetty, standalone) and writes each one's classpath to ``engines/*/target/classpath.txt``.
Here each node is started on a free port with its data under the session's tmp dir, waited for (its
``READY <url>`` line), given the Cranfield demo answers (``trainer/demo_data``, as ``bootstrap_demo``
loads them: id, title, body as ``text``) through its own HTTP API, and killed when the session ends.

- OpenSearch: index ``cranfield`` (one shard, ``english`` analyzer on ``title`` and ``text``). The
  launcher appends each REST request's method, path and ``Authorization`` header to
  ``<home>/requests.log``: with security off, that is how a test sees what reached the node.
- Solr: core ``cranfield`` (configset ``engines/solr/configsets/answers``, copied per session: the same
  fields, English stop words and stems, a managed schema and an update log), and Solr's own
  ``security.json``: BasicAuthPlugin with user ``SOLR_USER``, not blocking unknown users, so Solr checks
  an ``Authorization`` header when one comes.
- ``opensearch_vectors`` / ``solr_vectors``: a second copy of the answers on the same node (index / core
  ``cranfield_vectors``) for the exports that write the answers' vectors into it.
- Solr with Learning to Rank (``solr_ltr``, started only by the test that asks for it): Solr 8.11.4 with
  its LTR module (``engines/solr-ltr``: Maven Central serves solr-ltr only at 8.x here, and it does not
  load in Solr 9), core ``cranfield`` from that module's configset (the same fields and analysis, the ltr
  query parser and the features transformer on), no security.json.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from corpus.formats.rnr import parse_rnr_documents
from tests.http_client import HTTP
from tests.servers import free_port

ROOT = Path(__file__).resolve().parents[2]
ENGINES = ROOT / "engines"
CRANFIELD = ROOT / "trainer" / "demo_data" / "cranfield-data.json"
START_SECONDS = 120
# A small heap each; the node exits when its standard input (a pipe from this process) closes, so a
# test run killed before its fixtures' teardown leaves no JVM behind. The client compiler only (tiered
# level 1): a node serves a few thousand requests here, and the optimising compiler's work for them cost
# more than it saved (start, Cranfield indexing and 300 searches: 12.5 CPU-s, 8.1 with level 1).
JAVA_OPTIONS = [
    "-Xms256m",
    "-Xmx512m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Djava.awt.headless=true",
    "-Dranktrainer.exitWithStdin=true",
]
SOLR_USER, SOLR_PASSWORD = "reader", "s3cret: with spaces & unicode ü"


def cranfield_answers() -> list[dict[str, str]]:
    """The demo answers as the engines index them: ``id``, ``title``, ``text`` (the answer's body)."""
    return [{"id": a.external_id, "title": a.title, "text": a.body} for a in parse_rnr_documents(CRANFIELD)]


def java_command(module: str, main: str, *args: str) -> list[str]:
    """``java`` with the module's classes and classpath, as ``make engines`` built them."""
    target = ENGINES / module / "target"
    classpath_file = target / "classpath.txt"
    if not classpath_file.exists() or not (target / "classes").is_dir():
        pytest.fail(f"{classpath_file} is missing: build the engine launchers with `make engines`")
    java = shutil.which("java") or "java"
    # A plugin unpacked under target/plugins/<name>/ (the OpenSearch module's k-NN plugin): its jars.
    plugins = [f"{d}{os.sep}*" for d in sorted((target / "plugins").glob("*")) if d.is_dir()]
    classpath = os.pathsep.join([str(target / "classes"), classpath_file.read_text().strip(), *plugins])
    return [java, *JAVA_OPTIONS, "-cp", classpath, f"ranktrainer.engines.{main}", *args]


@dataclass
class EngineNode:
    """A running engine process: ``url`` is its base URL (``http://127.0.0.1:PORT``, Solr's ends /solr)."""

    name: str
    home: Path
    process: subprocess.Popen
    log_path: Path
    url: str = ""
    start_seconds: float = 0.0

    def wait_ready(self) -> None:
        started = time.monotonic()
        deadline = started + START_SECONDS
        while time.monotonic() < deadline:
            for line in self.log_path.read_text(errors="replace").splitlines():
                if line.startswith("READY "):
                    self.url = line.split(" ", 1)[1].strip()
                    self.start_seconds = time.monotonic() - started
                    return
            if self.process.poll() is not None:
                pytest.fail(f"{self.name} exited with {self.process.returncode}:\n{self.log()}")
            time.sleep(0.1)
        self.stop()
        pytest.fail(f"{self.name} did not print READY within {START_SECONDS} s:\n{self.log()}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)
        if self.process.stdin:
            self.process.stdin.close()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-5000:]


def start_node(name: str, home: Path, command: list[str]) -> EngineNode:
    home.mkdir(parents=True, exist_ok=True)
    log_path = home.parent / f"{home.name}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.PIPE)
    node = EngineNode(name=name, home=home, process=process, log_path=log_path)
    node.wait_ready()
    return node


def _check(response: httpx.Response) -> dict:
    assert response.status_code == 200, f"{response.request.method} {response.request.url}: {response.text}"
    return response.json()


@dataclass
class OpenSearch:
    node: EngineNode
    index: str = "cranfield"

    @property
    def url(self) -> str:
        return self.node.url

    @property
    def search_url(self) -> str:
        return f"{self.url}/{self.index}/_search"

    def requests_seen(self) -> list[str]:
        """What the node's REST layer received: ``METHOD URI authorization=VALUE`` per request."""
        path = self.node.home / "requests.log"
        return path.read_text().splitlines() if path.exists() else []

    def search(self, body: dict) -> list[tuple[str, float]]:
        """Ids and scores of a query sent straight to the node (for the expected values)."""
        hits = _check(HTTP.post(self.search_url, json=body, timeout=30))["hits"]["hits"]
        return [(hit["_id"], hit["_score"]) for hit in hits]


def opensearch_index_cranfield(url: str, index: str, **settings: object) -> None:
    english = {"type": "text", "analyzer": "english"}
    _check(
        HTTP.put(
            f"{url}/{index}",
            json={
                "settings": {"number_of_shards": 1, "number_of_replicas": 0, **settings},
                "mappings": {"properties": {"title": english, "text": english}},
            },
            timeout=60,
        )
    )
    lines = []
    for doc in cranfield_answers():
        lines.append(json.dumps({"index": {"_id": doc["id"]}}))
        lines.append(json.dumps({"title": doc["title"], "text": doc["text"]}))
    result = _check(
        HTTP.post(
            f"{url}/{index}/_bulk?refresh=true",
            content=("\n".join(lines) + "\n").encode(),
            headers={"Content-Type": "application/x-ndjson"},
            timeout=120,
        )
    )
    assert not result["errors"], result


@dataclass
class Solr:
    node: EngineNode
    core: str = "cranfield"

    @property
    def url(self) -> str:
        return self.node.url

    @property
    def select_url(self) -> str:
        return f"{self.url}/{self.core}/select"

    def search(self, params: dict) -> list[tuple[str, float]]:
        docs = _check(HTTP.post(self.select_url, data=params, timeout=30))["response"]["docs"]
        return [(doc["id"], doc["score"]) for doc in docs]


def solr_security_json(user: str, password: str) -> dict:
    """Solr's own BasicAuthPlugin with one user (credentials: base64 sha256(sha256(salt + password)),
    then the salt). Unknown users are not blocked, so a request without the header passes, and one with
    a wrong password is refused by Solr: 401."""
    salt = b"rank-trainer-tests-salt"
    digest = hashlib.sha256(hashlib.sha256(salt + password.encode()).digest()).digest()
    return {
        "authentication": {
            "class": "solr.BasicAuthPlugin",
            "blockUnknown": False,
            "credentials": {user: f"{base64.b64encode(digest).decode()} {base64.b64encode(salt).decode()}"},
        }
    }


def solr_index_cranfield(url: str, core: str) -> None:
    _check(
        HTTP.get(
            f"{url}/admin/cores",
            params={"action": "CREATE", "name": core, "configSet": "answers"},
            timeout=60,
        )
    )
    _check(HTTP.post(f"{url}/{core}/update?commit=true", json=cranfield_answers(), timeout=120))


@pytest.fixture(scope="session")
def opensearch(tmp_path_factory) -> Iterator[OpenSearch]:
    """A real OpenSearch node with the Cranfield answers in index ``cranfield``."""
    home = tmp_path_factory.mktemp("engines") / "opensearch"
    node = start_node(
        "OpenSearch", home, java_command("opensearch", "OpenSearchNode", str(free_port()), str(home))
    )
    try:
        # No periodic refresh (see opensearch_vectors). Tests that train write into a copy (opensearch_copy).
        opensearch_index_cranfield(node.url, "cranfield", refresh_interval="-1")
        yield OpenSearch(node)
    finally:
        node.stop()


@pytest.fixture(scope="session")
def solr_ltr(tmp_path_factory) -> Iterator[Solr]:
    """A real Solr 8.11.4 node with Solr's LTR module and the Cranfield answers in core ``cranfield``."""
    home = tmp_path_factory.mktemp("engines") / "solr-ltr"
    configsets = ENGINES / "solr-ltr" / "configsets"
    node = start_node(
        "Solr LTR",
        home,
        java_command("solr-ltr", "SolrLtrNode", str(free_port()), str(home), str(configsets)),
    )
    try:
        solr_index_cranfield(node.url, "cranfield")
        yield Solr(node)
    finally:
        node.stop()


@pytest.fixture(scope="session")
def solr(tmp_path_factory) -> Iterator[Solr]:
    """A real Solr node with the Cranfield answers in core ``cranfield``; basic auth on (see above)."""
    home = tmp_path_factory.mktemp("engines") / "solr"
    home.mkdir()
    (home / "security.json").write_text(json.dumps(solr_security_json(SOLR_USER, SOLR_PASSWORD)))
    # A copy: the managed schema is changed through the Schema API (the export adds its vector field).
    configsets = home.parent / "solr-configsets"
    shutil.copytree(ENGINES / "solr" / "configsets", configsets)
    node = start_node(
        "Solr", home, java_command("solr", "SolrNode", str(free_port()), str(home), str(configsets))
    )
    try:
        solr_index_cranfield(node.url, "cranfield")
        yield Solr(node)
    finally:
        node.stop()


@pytest.fixture(scope="session")
def opensearch_vectors(opensearch) -> OpenSearch:
    """The same node with a second copy of the Cranfield answers, index ``cranfield_vectors``, for the
    exports that write the answers' vectors into it: the other tests' index keeps its documents' order
    (an update re-adds a document, which moves it among equal scores). No periodic refresh: the updated
    answers go into segments only when the export refreshes and merges, so their order, and the engine's
    order among equal scores, is the same in every run (a refresh each second cut them where the clock
    fell, and the engine alone scored 0.4022-0.4041)."""
    opensearch_index_cranfield(opensearch.url, "cranfield_vectors", refresh_interval="-1")
    return OpenSearch(opensearch.node, index="cranfield_vectors")


@pytest.fixture(scope="session")
def solr_vectors(solr) -> Solr:
    """The same node with a second core of the Cranfield answers, ``cranfield_vectors`` (as above)."""
    solr_index_cranfield(solr.url, "cranfield_vectors")
    return Solr(solr.node, core="cranfield_vectors")


_copies = itertools.count(1)


def opensearch_copy(opensearch: OpenSearch) -> OpenSearch:
    """A fresh index of the Cranfield answers on the same node, for a test that trains an engine ranker:
    its export writes the answers' vectors into the index, which re-adds them (their order among equal
    scores may change), so no other test's figures depend on what it wrote (~1 s)."""
    name = f"cranfield_train_{next(_copies)}"
    opensearch_index_cranfield(opensearch.url, name, refresh_interval="-1")
    return OpenSearch(opensearch.node, index=name)


def solr_copy(solr: Solr) -> Solr:
    """The same for Solr: a fresh core of the Cranfield answers."""
    name = f"cranfield_train_{next(_copies)}"
    solr_index_cranfield(solr.url, name)
    return Solr(solr.node, core=name)
