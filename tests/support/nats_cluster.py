"""A real broker cluster for the chain tests: three NATS servers with JetStream and their MQTT interface.

Each node listens on free loopback ports (client, cluster route, MQTT) and
keeps its JetStream store (where NATS keeps MQTT sessions and retained
messages) in the test's folder, so a node killed and started again comes
back with them.  Without ``nats-server`` the tests are skipped on a
developer's machine and fail under CI (``CI=true``: ``.ci/run`` installs
Debian's ``nats-server``).  Nothing sleeps: start-up polls the MQTT port
against a deadline, waiting in the process's own ``wait``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.support.mosquitto_broker import free_port

START_TIMEOUT_S = 20.0
HEALTHY_TIMEOUT_S = 90.0     # (JetStream's catch-up after a restart takes long on a loaded two-core machine)
STUCK_AFTER_S = 40.0         # a restarted node whose retained-messages consumer is still not current
RESTARTS_WHEN_STUCK = 2      # is started once more, at most this many times (see NatsCluster.restart)
RETAINED_CONSUMER = "$MQTT_rmsgs > $MQTT_rmsgs_"


def nats_binary() -> str:
    found = shutil.which("nats-server") or next((p for p in ("/usr/sbin/nats-server", "/usr/bin/nats-server")
                                                 if os.access(p, os.X_OK)), None)
    if found:
        return found
    if os.environ.get("CI") == "true":
        pytest.fail("nats-server is not installed (CI=true: .ci/run installs the Debian package 'nats-server')")
    pytest.skip("nats-server is not installed (apt-get install nats-server)")


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


class NatsNode:
    def __init__(self, folder: Path, name: str, routes: list[int], route_port: int) -> None:
        self.binary = nats_binary()
        self.name = name
        self.folder = folder / name
        self.folder.mkdir(parents=True, exist_ok=True)
        self.client_port, self.route_port, self.mqtt_port = free_port(), route_port, free_port()
        self.monitor_port = free_port()
        routes_text = ", ".join(f"nats-route://127.0.0.1:{p}" for p in routes)
        self.conf = self.folder / "nats.conf"
        self.conf.write_text(f"""server_name: {name}
listen: 127.0.0.1:{self.client_port}
http: 127.0.0.1:{self.monitor_port}
jetstream {{ store_dir: "{self.folder / 'js'}" }}
mqtt {{ listen: 127.0.0.1:{self.mqtt_port}, ack_wait: "5s" }}
cluster {{
  name: chain
  listen: 127.0.0.1:{self.route_port}
  routes: [{routes_text}]
}}
""", encoding="utf-8")
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.mqtt_port}"

    def start(self) -> "NatsNode":
        log = open(self.folder / "nats.log", "ab")
        # (in its own folder: under load nats-server 2.9 has been seen writing a JetStream consumer's meta.inf and
        # meta.sum into its working directory)
        self.proc = subprocess.Popen([self.binary, "-c", str(self.conf)], stdout=log, stderr=subprocess.STDOUT,
                                     cwd=self.folder)
        log.close()
        return self

    def wait_ready(self, deadline: float) -> None:
        while not _port_open(self.mqtt_port):
            if self.proc.poll() is not None:
                raise RuntimeError(f"nats-server {self.name} exited: {self.log()[-2000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"nats-server {self.name} did not open its MQTT port: {self.log()[-2000:]}")
            self.pause()

    def pause(self) -> None:
        """A tenth of a second in the process's own ``wait`` (it returns at once if the server exits)."""
        try:
            self.proc.wait(0.1)
        except subprocess.TimeoutExpired:
            pass

    def healthy(self) -> bool:
        """JetStream ready on this node (``/healthz``: the cluster has a meta leader and the node is current).
        A client that connects before that may find its MQTT session half made (NATS keeps sessions in
        JetStream): the same client id on two nodes, a subscription without its JetStream consumer."""
        return self.health_problem() == ""

    def server_current(self) -> bool:
        """The server itself is current with the cluster's meta leader (its streams and consumers aside)."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.monitor_port}/healthz?js-server-only=true",
                                        timeout=2.0) as reply:
                return reply.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def health_problem(self) -> str:
        """What ``/healthz`` says is not ready ("" when the node is healthy)."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.monitor_port}/healthz", timeout=2.0) as reply:
                return "" if reply.status == 200 else f"status {reply.status}"
        except urllib.error.HTTPError as refused:
            body = refused.read().decode("utf-8", "replace")
            try:                            # {"status": "unavailable", "error": "..."} (its ">" written as \u003e)
                return str(json.loads(body).get("error") or body)
            except (ValueError, AttributeError):
                return body or f"status {refused.code}"
        except (urllib.error.URLError, OSError) as unreachable:
            return f"unreachable: {unreachable}"

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def log(self) -> str:
        path = self.folder / "nats.log"
        return path.read_text(errors="replace") if path.exists() else ""


class NatsCluster:
    """Three nodes routed to one another (the chain's central cluster)."""

    def __init__(self, folder: Path, nodes: int = 3) -> None:
        routes = [free_port() for _ in range(nodes)]
        self.nodes = [NatsNode(folder, f"n{i + 1}", routes, routes[i]) for i in range(nodes)]

    def start(self) -> "NatsCluster":
        for node in self.nodes:
            node.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        for node in self.nodes:
            node.wait_ready(deadline)
        self.wait_healthy(self.nodes, time.monotonic() + HEALTHY_TIMEOUT_S)
        return self

    def restart(self, node: NatsNode) -> None:
        """One node started again while the others run: back once its JetStream is current.

        nats-server 2.9 deletes and re-creates its own retained-messages consumer
        (``$MQTT_rmsgs_<server hash>``) as it starts; after a kill that races the
        consumer's old assignment, and the node can stay "not current" on it for
        good (seen in CI, 90 s and on, two runs in five).  An operator restarts
        such a node again, and so does this: after ``STUCK_AFTER_S`` stuck on
        that consumer alone, at most ``RESTARTS_WHEN_STUCK`` times.  Stuck on it
        still, the node is taken as back when the server itself is current with
        the cluster (``/healthz?js-server-only=true``): the chain's hands and
        heartbeats are not retained messages.  Anything else not ready fails at
        ``HEALTHY_TIMEOUT_S``."""
        for attempt in range(RESTARTS_WHEN_STUCK + 1):
            node.start()
            node.wait_ready(time.monotonic() + START_TIMEOUT_S)
            if self._healthy_unless_stuck(node, time.monotonic() + HEALTHY_TIMEOUT_S, patient=False):
                return
            if attempt < RESTARTS_WHEN_STUCK:
                node.stop()
        if not node.server_current():
            raise RuntimeError(f"nats-server {node.name}: stuck on its retained-messages consumer and not current "
                               f"with the cluster: {node.log()[-2000:]}")
        print(f"nats-server {node.name}: back, its retained-messages consumer still not current after "
              f"{RESTARTS_WHEN_STUCK + 1} starts (nats-server 2.9)")

    @staticmethod
    def _healthy_unless_stuck(node: NatsNode, deadline: float, patient: bool) -> bool:
        """Wait for ``node`` to be healthy; False when it is stuck on its retained-messages consumer
        (unless ``patient``: then that, like anything else, fails at the deadline)."""
        started = time.monotonic()
        while (problem := node.health_problem()) != "":
            if node.proc.poll() is not None:
                raise RuntimeError(f"nats-server {node.name} exited: {node.log()[-2000:]}")
            if not patient and RETAINED_CONSUMER in problem and time.monotonic() - started > STUCK_AFTER_S:
                return False
            if time.monotonic() > deadline:
                raise RuntimeError(f"nats-server {node.name}: JetStream not ready ({problem}): {node.log()[-2000:]}")
            node.pause()
        return True

    def restart_all(self) -> None:
        """Every node started again (after the whole cluster was stopped): back once they have a leader."""
        for node in self.nodes:
            node.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        for node in self.nodes:
            node.wait_ready(deadline)
        self.wait_healthy(self.nodes, time.monotonic() + HEALTHY_TIMEOUT_S)

    @classmethod
    def wait_healthy(cls, nodes: list[NatsNode], deadline: float) -> None:
        for node in nodes:
            cls._healthy_unless_stuck(node, deadline, patient=True)

    @property
    def urls(self) -> list[str]:
        return [n.url for n in self.nodes]

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
