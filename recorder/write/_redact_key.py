"""Redaction markers: keyed, so a marker cannot be turned back into its value without the key.

A redacted value becomes ``[redacted hmac-sha256:<key id>:<digest>]`` with::

    digest = HMAC-SHA256(key, SHA-256(UTF-8 value))     (hex)
    key id = HMAC-SHA256(key, "footprint.redact.key-id")  (first 8 hex digits)

Equal values under one key give equal markers (a join on the marker still
works); the key id tells which key made a marker without saying anything of
the key. Hashing the SHA-256 of the value (not the value) is what lets an
old, unkeyed marker ``[redacted sha256:<SHA-256>]`` be re-keyed without the
value: :meth:`RedactionKey.rekey` gives exactly the marker the value would
get now. Old markers (``[redacted sha256:…]``, and capture's ``[sha256:…]``)
stay readable: :func:`parse_marker` tells them apart by their scheme.

The key (16 bytes or more) is kept outside the store: ``Redactor(key=…)``,
else ``$FOOTPRINT_REDACT_KEY``, else a key file (``Redactor(key_file=…)``,
default ``$XDG_CONFIG_HOME/footprint/redact.key``, i.e.
``~/.config/footprint/redact.key``) created with mode 0600 on first use.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import re
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from footprint._errors import ConfigError

__all__ = [
    "KEYED_SCHEME",
    "MARKER_PATTERN",
    "REDACT_KEY_ENV",
    "Marker",
    "RedactionKey",
    "default_key_file",
    "known_redaction_key",
    "marker_matches",
    "parse_marker",
    "redaction_key",
    "unkeyed_digest",
]

KEYED_SCHEME: Literal["hmac-sha256"] = "hmac-sha256"
REDACT_KEY_ENV = "FOOTPRINT_REDACT_KEY"
"""The environment variable the redaction key is read from (the key itself, as text)."""
_MIN_KEY = 16
_KEY_ID_LABEL = b"footprint.redact.key-id"

MARKER_PATTERN = r"\[(?:redacted )?(?:(hmac-sha256):([0-9a-f]{8}):|sha256:)([0-9a-f]{64})\]"
"""A marker anywhere in a text (groups: the keyed scheme, its key id, the digest); the same
regex in Python and in DuckDB (``footprint doctor`` counts markers with it)."""
_MARKER = re.compile(MARKER_PATTERN)

Scheme = Literal["hmac-sha256", "sha256"]


@dataclass(frozen=True, slots=True)
class Marker:
    """A parsed marker: ``sha256`` (old, unkeyed: anyone can test a guess) or ``hmac-sha256``."""

    scheme: Scheme
    digest: str
    key_id: str | None = None


def parse_marker(text: object) -> Marker | None:
    """The marker ``text`` is (surrounding whitespace aside), or ``None`` for other text."""
    hit = _MARKER.fullmatch(text.strip()) if isinstance(text, str) else None
    if hit is None:
        return None
    if hit.group(1):
        return Marker(KEYED_SCHEME, hit.group(3), hit.group(2))
    return Marker("sha256", hit.group(3))


def _sha256(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def unkeyed_digest(text: str) -> str:
    """The digest an old, unkeyed marker of ``text`` holds (its SHA-256, hex)."""
    return _sha256(text).hex()


@dataclass(frozen=True, slots=True)
class RedactionKey:
    """A redaction key (never shown: ``repr`` names only its id and where it came from)."""

    secret: bytes = field(repr=False)
    origin: str
    key_id: str = field(init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.secret, bytes) or len(self.secret) < _MIN_KEY:
            shown = f"{len(self.secret)} bytes" if isinstance(self.secret, bytes) else repr(
                type(self.secret).__name__)
            raise ConfigError(f"{self.origin}: a redaction key must be at least {_MIN_KEY} "
                              f"bytes, got {shown}; e.g. `python -c 'import secrets; "
                              "print(secrets.token_hex(32))'`, kept outside the store")
        kid = hmac.new(self.secret, _KEY_ID_LABEL, hashlib.sha256).hexdigest()[:8]
        object.__setattr__(self, "key_id", kid)

    def _keyed(self, sha: bytes) -> str:
        return hmac.new(self.secret, sha, hashlib.sha256).hexdigest()

    def marker(self, text: str) -> str:
        """What ``text`` becomes when redacted under this key."""
        return f"[redacted {KEYED_SCHEME}:{self.key_id}:{self._keyed(_sha256(text))}]"

    def rekey(self, old: str) -> str | None:
        """The keyed marker for an unkeyed ``[redacted sha256:…]``/``[sha256:…]`` (the same
        one the value would get now), ``old`` itself when keyed already, ``None`` for text
        that is no marker."""
        found = parse_marker(old)
        if found is None:
            return None
        if found.scheme == KEYED_SCHEME:
            return old.strip()
        return f"[redacted {KEYED_SCHEME}:{self.key_id}:{self._keyed(bytes.fromhex(found.digest))}]"


def marker_matches(marker: Marker, text: str, key: RedactionKey | None) -> bool | None:
    """Whether ``text`` is the value ``marker`` stands for; ``None`` when that cannot be told
    (a keyed marker, and not its key at hand)."""
    if marker.scheme == "sha256":
        return hmac.compare_digest(unkeyed_digest(text), marker.digest)
    if key is None or key.key_id != marker.key_id:
        return None
    return hmac.compare_digest(key._keyed(_sha256(text)), marker.digest)


def default_key_file() -> Path:
    """``$XDG_CONFIG_HOME/footprint/redact.key`` (``~/.config/footprint/redact.key``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "footprint" / "redact.key"


def redaction_key(key: bytes | str | None = None, *, key_file: str | os.PathLike[str] | None = None,
                  origin: str = "Redactor") -> RedactionKey:
    """The redaction key: ``key``, else ``$FOOTPRINT_REDACT_KEY``, else the key file
    (``key_file`` or :func:`default_key_file`), made with a new random key and mode 0600
    when missing."""
    found = _resolve(key, key_file, create=True, origin=origin)
    if found is None:  # pragma: no cover - _create made it, or a racing writer did
        raise ConfigError(f"redaction key file {str(key_file)!r} could not be made; pass "
                          f"key=… or set ${REDACT_KEY_ENV}")
    return found


def known_redaction_key(key_file: str | os.PathLike[str] | None = None) -> RedactionKey | None:
    """The redaction key a reader can use (``$FOOTPRINT_REDACT_KEY``, else the key file),
    ``None`` when there is none; never makes one."""
    return _resolve(None, key_file, create=False, origin="reader")


def _resolve(key: bytes | str | None, key_file: str | os.PathLike[str] | None, *,
             create: bool, origin: str) -> RedactionKey | None:
    if key is not None:
        raw = key.encode("utf-8") if isinstance(key, str) else key
        return RedactionKey(raw, f"{origin}(key=…)")
    env = os.environ.get(REDACT_KEY_ENV)
    if env:
        return RedactionKey(env.encode("utf-8"), f"${REDACT_KEY_ENV}")
    path = Path(key_file) if key_file is not None else default_key_file()
    try:
        if create and not path.exists():
            _create(path)
        return RedactionKey(_read(path), f"key file {str(path)!r}")
    except FileNotFoundError:
        if not create:
            return None
        raise ConfigError(f"redaction key file {str(path)!r} vanished while it was made; "
                          "run again") from None
    except OSError as exc:
        raise ConfigError(f"redaction key file {str(path)!r}: {exc.strerror or exc}; pass "
                          f"key=… or set ${REDACT_KEY_ENV} (16 bytes or more)") from None


def _create(path: Path) -> None:
    """A new key file, 0600, there whole or not at all: written aside, then linked in place
    (``link`` fails when the name exists, so of two first uses one key wins, never half)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    aside = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as file:
            file.write(secrets.token_hex(32) + "\n")
            file.flush()
            os.fsync(file.fileno())
        with contextlib.suppress(FileExistsError):
            os.link(aside, path)
    finally:
        aside.unlink(missing_ok=True)


def _read(path: Path) -> bytes:
    """The key file's bytes (one trailing newline dropped); refused when others can read it."""
    mode = path.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigError(f"redaction key file {str(path)!r} is readable by others "
                          f"(mode {stat.S_IMODE(mode):o}); run `chmod 600 {path}`")
    data = path.read_bytes()
    return data[:-2] if data.endswith(b"\r\n") else data.removesuffix(b"\n")
