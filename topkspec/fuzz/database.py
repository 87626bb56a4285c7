"""The example database: where failures are kept to replay first next time."""
from __future__ import annotations

from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

from topkspec.errors import writable_folder
from topkspec.fuzz.config import RunError


class KeyedDatabase(ExampleDatabase):
    """Another database with every key prefixed, so each (target, profile, group) keeps its own
    examples (every group runs the same inner test function, whose key would be shared)."""

    def __init__(self, inner: ExampleDatabase, prefix: str):
        super().__init__()
        self.inner = inner
        self.prefix = prefix.encode()

    def _key(self, key: bytes) -> bytes:
        return self.prefix + b"\0" + key

    def save(self, key, value):
        self.inner.save(self._key(key), value)

    def fetch(self, key):
        return self.inner.fetch(self._key(key))

    def delete(self, key, value):
        self.inner.delete(self._key(key), value)

    def move(self, src, dest, value):
        self.inner.move(self._key(src), self._key(dest), value)


def open_database(where: str | None, *, named: bool = True):
    """An example database: None for none, a redis:// URL, or a directory. A directory the
    user `named` must be writable; the default one is taken as it is (a run in a read-only
    checkout still runs, and saves nothing)."""
    if where is None:
        return None
    if where.startswith(("redis://", "rediss://", "unix://")):
        try:
            import redis
            from hypothesis.extra.redis import RedisExampleDatabase
        except ImportError as exc:
            raise RunError(f"--database {where}: the redis package is needed ({exc})") from None
        try:
            client = redis.Redis.from_url(where)
            client.ping()
        except (ValueError, redis.RedisError) as exc:
            raise RunError(f"--database {where}: {exc}") from None
        return RedisExampleDatabase(client)
    if named:  # Hypothesis drops a save that fails without a word: every failure would be lost
        writable_folder(where, "--database")
    return DirectoryBasedExampleDatabase(where)


