"""A parlour's uplink that a test can cut: TCP forwarders between a parlour's bridge and the cluster's nodes.

The parlour's Mosquitto is configured to bridge to the forwarders' loopback
ports instead of the nodes' (one forwarder a node); :meth:`Uplink.cut`
closes every connection through them and refuses new ones (accepted and
closed at once, as a router that resets them would), so the bridge sees its
uplink gone and retries on its own schedule; :meth:`Uplink.heal` lets the
next attempt through.  Only that parlour is cut off: the others, and the
central consumer, reach the cluster directly.  Threads block on sockets;
nothing sleeps.
"""

from __future__ import annotations

import logging
import socket
import threading

log = logging.getLogger(__name__)


class _Forwarder:
    def __init__(self, uplink: "Uplink", target_port: int) -> None:
        self.uplink = uplink
        self.target_port = target_port
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, name=f"uplink-{self.port}", daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return                                   # (closed)
            if not self.uplink.open:
                self.uplink.refused += 1
                _close(client)
                continue
            try:
                server = socket.create_connection(("127.0.0.1", self.target_port), timeout=5.0)
                server.settimeout(None)
            except OSError:
                _close(client)
                continue
            with self.uplink.lock:
                if not self.uplink.open:                 # (cut while it connected)
                    _close(client, server)
                    continue
                self.uplink.pairs.append((client, server))
                self.uplink.connected += 1
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=_pump, args=(a, b), name=f"uplink-pump-{self.port}", daemon=True).start()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    _close(source, sink)


def _close(*socks: socket.socket) -> None:
    for s in socks:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()


class Uplink:
    """Forwarders to the cluster's nodes' MQTT ports (``ports``); :attr:`ports` are the ones to bridge to."""

    def __init__(self, node_ports: list[int]) -> None:
        self.lock = threading.Lock()
        self.open = True
        self.pairs: list[tuple[socket.socket, socket.socket]] = []
        self.connected = 0          # connections let through, ever (a bridge's reconnection counts one more)
        self.refused = 0            # connections refused while cut
        self.forwarders = [_Forwarder(self, p) for p in node_ports]

    @property
    def ports(self) -> list[int]:
        return [f.port for f in self.forwarders]

    def cut(self) -> None:
        """Every connection through the uplink closed; new ones refused until :meth:`heal`."""
        with self.lock:
            self.open = False
            pairs, self.pairs = self.pairs, []
        for client, server in pairs:
            _close(client, server)

    def heal(self) -> None:
        with self.lock:
            self.open = True

    def close(self) -> None:
        self.cut()
        for f in self.forwarders:
            _close(f.listener)
