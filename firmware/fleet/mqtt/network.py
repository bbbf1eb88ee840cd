"""The network thread shared by many MQTT clients: one selector over their sockets, paho's loop driven from it."""

from __future__ import annotations

import concurrent.futures
import logging
import queue
import selectors
import socket
import threading
from typing import TYPE_CHECKING, Any, Callable

from firmware.ports.clock import Clock

if TYPE_CHECKING:                   # (paho itself is imported by firmware.fleet.mqtt.client only)
    import paho.mqtt.client as paho

log = logging.getLogger(__name__)

MISC_PERIOD_S = 0.5          # keepalive pings and their timeouts are checked this often


class MqttNetwork:
    """The network thread shared by many clients: a selector over their sockets, paho's ``loop_read`` /
    ``loop_write`` / ``loop_misc`` (keepalive) driven from it, so ``sim --fleet 200`` needs one thread, not 200.
    Connecting (TCP and the TLS handshake block) runs on a few worker threads (:attr:`connector`), so an
    unreachable broker never stalls the clients that are connected.  Every paho call on a connected client runs
    on this thread; the loop thread only queues work here (:meth:`call`).  It keeps time (the keepalive checks)
    on ``clock``'s monotonic seconds; its clients' inbound bounds use the same clock."""

    def __init__(self, name: str = "mqtt", connect_workers: int = 4, *, clock: Clock) -> None:
        self.name = name
        self.clock = clock
        self._connect_workers = connect_workers
        self._calls: queue.SimpleQueue[tuple[Callable[..., Any], tuple]] = queue.SimpleQueue()
        self._clients: dict[paho.Client, Any] = {}      # client -> the socket registered for it
        self._tickers: list[Callable[[], bool]] = []     # run at each keepalive check until they return False
        self._dirty: set[paho.Client] = set()           # clients whose registration may have to change
        self._thread: threading.Thread | None = None
        self._running = False
        self._selector: selectors.BaseSelector | None = None
        self._wake_r: socket.socket | None = None
        self._wake_w: socket.socket | None = None
        self.connector: concurrent.futures.ThreadPoolExecutor | None = None

    def start(self) -> "MqttNetwork":
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self.connector = concurrent.futures.ThreadPoolExecutor(self._connect_workers, f"{self.name}-connect")
        self._running = True
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """End the thread; every client's socket is closed (without a DISCONNECT: call disconnect before)."""
        if self._thread is None:
            return
        self.call(self._set_stopped)
        self._thread.join(timeout=5.0)
        self.connector.shutdown(wait=False, cancel_futures=True)
        for client in list(self._clients):
            self.forget(client)
        self._selector.close()
        self._wake_r.close()
        self._wake_w.close()
        self._thread = None

    def _set_stopped(self) -> None:
        self._running = False

    def call(self, fn: Callable[..., Any], *args: Any) -> None:
        """Thread-safe: run ``fn(*args)`` on the network thread."""
        self._calls.put((fn, args))
        try:
            self._wake_w.send(b"\0")
        except (BlockingIOError, OSError, AttributeError):
            pass                                    # (already woken, or stopped)

    # -- the clients (network thread) ---------------------------------------------------------------------------
    def attach(self, client: paho.Client) -> None:
        self._clients[client] = None
        client.on_socket_close = self._socket_closing
        self._sync(client)

    def touch(self, client: paho.Client | None) -> None:
        """(network thread) ``client`` was used: its socket's registration is brought up to date."""
        if client is not None:
            self._dirty.add(client)

    def forget(self, client: paho.Client) -> None:
        """Drop a client without a word to the broker (its socket closed: the broker publishes its Will)."""
        sock = self._clients.pop(client, None)
        self._dirty.discard(client)
        if sock is not None:
            self._unregister(sock)
        client.on_socket_close = None
        own = client.socket()
        if own is not None:
            try:
                own.close()
            except OSError:
                pass

    def _socket_closing(self, client: paho.Client, userdata: Any, sock: Any) -> None:
        if self._clients.get(client) is sock:
            self._unregister(sock)
            self._clients[client] = None

    def _unregister(self, sock: Any) -> None:
        try:
            self._selector.unregister(sock)
        except (KeyError, ValueError, OSError):
            pass

    def _sync(self, client: paho.Client) -> None:
        """Register the client's socket for reading, and for writing while paho has bytes to send."""
        if client not in self._clients:
            return
        sock, registered = client.socket(), self._clients[client]
        if registered is not None and registered is not sock:
            self._unregister(registered)
            self._clients[client] = registered = None
        if sock is None:
            return
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if client.want_write() else 0)
        try:
            if registered is None:
                self._selector.register(sock, events, client)
                self._clients[client] = sock
            elif self._selector.get_key(sock).events != events:
                self._selector.modify(sock, events, client)
        except (ValueError, OSError, KeyError) as exc:     # a socket closed under us: paho reports it
            log.debug("%s: socket not registered: %s", self.name, exc)

    def _run(self) -> None:
        next_misc = self.clock.monotonic_s()
        while self._running:
            try:
                next_misc = self._iterate(next_misc)
            except Exception:                       # noqa: BLE001 (the thread serves every client: it goes on)
                log.exception("%s: the network thread's iteration failed", self.name)

    def _iterate(self, next_misc: float) -> float:
        """One pass: wait for sockets (until the next keepalive check), read and write, run queued calls."""
        timeout_s = max(0.0, next_misc - self.clock.monotonic_s())
        for key, mask in self._selector.select(timeout_s):
            if key.data is None:
                self._drain_wake()
                continue
            client = key.data
            self._dirty.add(client)
            if mask & selectors.EVENT_READ and client in self._clients:
                self._guard(client.loop_read)
            if mask & selectors.EVENT_WRITE and client in self._clients:
                self._guard(client.loop_write)
        while True:
            try:
                fn, args = self._calls.get_nowait()
            except queue.Empty:
                break
            self._guard(fn, *args)
        if self.clock.monotonic_s() >= next_misc:
            for client in list(self._clients):
                self._guard(client.loop_misc)
            self.run_tickers()
            self._dirty.update(self._clients)
            next_misc = self.clock.monotonic_s() + MISC_PERIOD_S
        dirty, self._dirty = self._dirty, set()
        for client in dirty:                        # (only those used: 200 clients cost nothing idle)
            self._sync(client)
        return next_misc

    def add_ticker(self, tick: Callable[[], bool]) -> None:
        """(network thread) Call ``tick()`` at each keepalive check until it returns False."""
        if tick not in self._tickers:
            self._tickers.append(tick)

    def run_tickers(self) -> None:
        """(network thread) One round of the tickers; those done are forgotten."""
        for tick in list(self._tickers):
            try:
                done = not tick()
            except Exception:                       # noqa: BLE001 (the thread serves every client: it goes on)
                log.exception("%s: a ticker failed", self.name)
                done = True
            if done:
                self._tickers.remove(tick)

    def _drain_wake(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except (BlockingIOError, OSError):
            pass

    def _guard(self, fn: Callable[..., Any], *args: Any) -> None:
        try:
            fn(*args)
        except Exception:                           # noqa: BLE001 (the thread serves every client: it goes on)
            log.exception("%s: %s failed", self.name, getattr(fn, "__qualname__", fn))
