"""Reader-protocol benchmark: how many bytes per second the frame decoder takes, against the line.

The reader's UART at 115200 baud carries 11520 bytes per second (10 bits a
byte).  The stream is what a stacking cycle sends (TAG events with a
heartbeat per second's worth), fed in 64-byte reads as the driver's poll
gets them, clean and with 1% of bytes corrupted.  Decoding includes parsing
each TAG payload.  Target: at least 20x the line rate.
"""

from __future__ import annotations

import random
import time

from firmware.reader.codec import Cmd, FrameDecoder, encode
from firmware.reader.messages import Heartbeat, PayloadError, TagEvent

LINE_BYTES_PER_S = 115200 / 10
TARGET_RATIO = 20.0
CHUNK = 64


def make_stream(n_frames: int = 20000, noise_p: float = 0.0, seed: int = 11) -> bytes:
    rng = random.Random(seed)
    out = bytearray()
    for i in range(n_frames):
        if i % 40 == 39:
            out += encode(i & 0xFF, Cmd.HEARTBEAT, Heartbeat(i * 25, i).pack())
        else:
            uid = bytes([0xE0, 0x04, 0x41, 0, 0, 0, rng.randrange(256), rng.randrange(256)])
            out += encode(i & 0xFF, Cmd.TAG, TagEvent(rng.randrange(4), uid, 180, i * 25).pack())
    if noise_p:
        for i in range(len(out)):
            if rng.random() < noise_p:
                out[i] ^= rng.randrange(1, 256)
    return bytes(out)


def _decode(stream: bytes) -> int:
    decoder = FrameDecoder()
    tags = 0
    for start in range(0, len(stream), CHUNK):
        for frame in decoder.feed(stream[start:start + CHUNK]):
            if frame.cmd == Cmd.TAG:
                try:
                    TagEvent.unpack(frame.payload, frame.seq, 0.0)
                    tags += 1
                except PayloadError:
                    pass
    return tags


def run() -> dict:
    results = {"line_bytes_per_s": LINE_BYTES_PER_S, "target_ratio": TARGET_RATIO, "streams": {}}
    for name, noise in (("clean", 0.0), ("noisy_1pct", 0.01)):
        stream = make_stream(noise_p=noise)
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            _decode(stream)
            best = min(best, time.perf_counter() - start)
        rate = len(stream) / best
        results["streams"][name] = {"bytes": len(stream), "bytes_per_s": round(rate),
                                    "ratio_to_line": round(rate / LINE_BYTES_PER_S, 1),
                                    "met": rate / LINE_BYTES_PER_S >= TARGET_RATIO}
    return results


def print_table(results: dict) -> None:
    print(f"\nreader frame decoding (stream of TAG + heartbeat frames, {CHUNK}-byte reads; line = 115200 baud = "
          f"{results['line_bytes_per_s']:.0f} B/s)")
    print(f"{'stream':12} {'bytes/s':>12} {'x line':>8}")
    for name, row in results["streams"].items():
        verdict = 'met' if row['met'] else 'MISSED'
        print(f"{name:12} {row['bytes_per_s']:12,d} {row['ratio_to_line']:8.1f}  "
              f"target >= {results['target_ratio']:g}x line: {verdict}")
