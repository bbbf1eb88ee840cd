"""``python -m bench.web_clients``: the subscribers of the web benchmark, in a process of their own.

``socket PATH N SECONDS``: N subscriptions straight on the controller's
socket; ``sse URL N SECONDS NAME PASSWORD``: N browsers' event streams on
the web page, each a phone of its own: its own login, from its own address
on loopback (127.0.0.10, 127.0.0.11 ...: the page bounds connections per
address).  Each reads everything it is
sent for SECONDS and the process prints one JSON line: the lines read per
client.  Run apart from the controller so that their reading does not share
its interpreter (as browsers and the web service do not on a table).
"""

from __future__ import annotations

import http.client
import json
import sys
import threading
import time
import urllib.parse

from firmware.diagnostics.socket.protocol import subscribe


def _socket_client(path: str, seconds: float, counts: list[int], i: int) -> None:
    end = time.monotonic() + seconds
    for _ in subscribe(path, tick_s=0.2):
        counts[i] += 1
        if time.monotonic() >= end:
            return


def _phone(i: int) -> tuple[str, int]:
    """The source address of simulated phone ``i`` (loopback: 127/8 is all this machine's)."""
    return f"127.0.0.{10 + i}", 0


def _login(url: str, name: str, password: str, i: int) -> str:
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30, source_address=_phone(i))
    body = urllib.parse.urlencode({"user": name, "password": password, "next": "/"})
    conn.request("POST", "/login", body, {"content-type": "application/x-www-form-urlencoded",
                                          "origin": f"{parts.scheme}://{parts.netloc}"})
    response = conn.getresponse()
    cookie = response.getheader("set-cookie") or ""
    conn.close()
    if response.status != 303 or not cookie:
        raise SystemExit(f"login refused ({response.status})")
    return cookie.split(";", 1)[0]


def _sse_client(url: str, cookie: str, seconds: float, counts: list[int], i: int) -> None:
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30, source_address=_phone(i))
    conn.request("GET", "/events", headers={"cookie": cookie})
    response = conn.getresponse()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        line = response.fp.readline()
        if not line:
            break
        if line.startswith(b"event:"):
            counts[i] += 1
    conn.close()


def main(argv: list[str]) -> int:
    kind, target, n, seconds = argv[0], argv[1], int(argv[2]), float(argv[3])
    counts = [0] * n
    if kind == "socket":
        threads = [threading.Thread(target=_socket_client, args=(target, seconds, counts, i)) for i in range(n)]
    else:
        cookies = [_login(target, argv[4], argv[5], i) for i in range(n)]      # (a login holds at most 4 streams)
        threads = [threading.Thread(target=_sse_client, args=(target, cookies[i], seconds, counts, i))
                   for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(json.dumps({"lines": counts}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
