"""Reading a hostile body within bounds: ``Content-Length`` checked, chunked bodies read up
to a cap, and gzip/deflate inflated incrementally so a small body that inflates past the
cap is refused before it is held (a 1 MB gzip of zeros is 1 GB)."""

from __future__ import annotations

import zlib
from typing import BinaryIO

__all__ = ["BadBody", "TooLarge", "body_length", "inflate", "read_chunked"]

_WBITS = {"gzip": 31, "x-gzip": 31, "deflate": 15}
_STEP = 1 << 20
"""Bytes inflated per step: memory held is the cap plus one step, whatever the ratio."""


class BadBody(ValueError):
    """A body or header that breaks HTTP or its encoding (answered 400)."""


class TooLarge(ValueError):
    """A body over the cap, on the wire or once inflated (answered 413, nothing kept)."""


def body_length(value: str | None) -> int | None:
    """``Content-Length`` as a byte count; ``None`` when absent; :class:`BadBody` when it is
    not a plain non-negative decimal (``-1``, ``abc``, ``1e3``, ``+5``)."""
    if value is None:
        return None
    text = value.strip()
    if not (text.isascii() and text.isdigit()):
        raise BadBody(f"Content-Length {value!r} is not a byte count")
    return int(text)


def _chunk_size(line: bytes) -> int:
    size = line.split(b";", 1)[0].strip()
    try:
        if not size or size.startswith((b"-", b"+", b"0x", b"0X")):
            raise ValueError
        return int(size, 16)
    except ValueError:
        raise BadBody(f"chunk size {line[:40]!r} is not hexadecimal") from None


def read_chunked(rfile: BinaryIO, limit: int) -> bytes:
    """A ``Transfer-Encoding: chunked`` body, refused (:class:`TooLarge`) as soon as it
    passes ``limit`` bytes; a malformed or cut-off body is :class:`BadBody`."""
    out = bytearray()
    while True:
        line = rfile.readline(1026)
        if not line.endswith(b"\n"):
            raise BadBody("chunked body cut short (no chunk-size line)")
        size = _chunk_size(line)
        if size == 0:
            break
        if len(out) + size > limit:
            raise TooLarge(f"chunked body over the {limit}-byte limit")
        data = rfile.read(size)
        if len(data) < size or rfile.read(2) != b"\r\n":
            raise BadBody("chunked body cut short (a chunk ended early)")
        out += data
    for _ in range(100):  # trailers, up to the blank line
        line = rfile.readline(8192)
        if line in (b"\r\n", b"\n"):
            return bytes(out)
        if not line:
            break
    raise BadBody("chunked body cut short (no end after the last chunk)")


def inflate(body: bytes, encoding: str | None, limit: int | None = None) -> bytes:
    """``body`` un-gzipped (or un-deflated) as ``Content-Encoding`` says, a step at a time;
    :class:`TooLarge` once it passes ``limit`` bytes, :class:`BadBody` when it does not
    inflate. Concatenated gzip members are read as one body, as ``gzip.decompress`` does."""
    name = (encoding or "identity").strip().lower()
    if name == "identity":
        if limit is not None and len(body) > limit:
            raise TooLarge(f"body over the {limit}-byte limit")
        return body
    if name not in _WBITS:
        raise BadBody(f"unsupported Content-Encoding {encoding!r} (gzip, deflate or none)")
    out = bytearray()
    data = body
    while data:
        inflater = zlib.decompressobj(_WBITS[name])
        try:
            while not inflater.eof:
                step = inflater.decompress(data, _STEP)
                out += step
                if limit is not None and len(out) > limit:
                    raise TooLarge(f"body over the {limit}-byte limit once decompressed")
                data = inflater.unconsumed_tail
                if not step and not data and not inflater.eof:
                    raise BadBody(f"{name} body cut short")
        except zlib.error as exc:
            raise BadBody(f"{name} body did not decompress ({exc})") from None
        data = inflater.unused_data if name != "deflate" else b""
        data = data if data.strip(b"\0") else b""
    return bytes(out)
