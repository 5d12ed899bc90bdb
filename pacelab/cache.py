"""A Redis cache that degrades to "no cache" while Redis is unreachable.

Sessions are ``cached_db`` (the database is the record), so during a Redis restart a cache miss is only slower,
never an error page: reads return the default, writes are dropped, and the outage is logged once a minute.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django.core.cache.backends.redis import RedisCache
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

log = logging.getLogger("pacelab")
_ERRORS = (RedisConnectionError, RedisTimeoutError, OSError)
_last_warning = 0.0


def _warn(exc: Exception) -> None:
    global _last_warning
    if time.monotonic() - _last_warning > 60:
        _last_warning = time.monotonic()
        log.warning("cache unavailable, continuing without it: %s", exc)


class ResilientRedisCache(RedisCache):
    def get(self, key: str, default: Any = None, version: int | None = None) -> Any:
        try:
            return super().get(key, default, version)
        except _ERRORS as exc:
            _warn(exc)
            return default

    def set(self, key: str, value: Any, timeout: Any = None, version: int | None = None) -> None:
        try:
            super().set(key, value, timeout, version)
        except _ERRORS as exc:
            _warn(exc)

    def add(self, key: str, value: Any, timeout: Any = None, version: int | None = None) -> bool:
        try:
            return super().add(key, value, timeout, version)
        except _ERRORS as exc:
            _warn(exc)
            return False

    def delete(self, key: str, version: int | None = None) -> bool:
        try:
            return super().delete(key, version)
        except _ERRORS as exc:
            _warn(exc)
            return False

    def get_many(self, keys, version: int | None = None) -> dict:
        try:
            return super().get_many(keys, version)
        except _ERRORS as exc:
            _warn(exc)
            return {}

    def touch(self, key: str, timeout: Any = None, version: int | None = None) -> bool:
        try:
            return super().touch(key, timeout, version)
        except _ERRORS as exc:
            _warn(exc)
            return False
