"""The cache keeps the site working while Redis is unreachable."""

from django.core.cache import caches

from pacelab.cache import ResilientRedisCache


def test_an_unreachable_redis_reads_as_a_miss_and_drops_writes():
    cache = ResilientRedisCache("redis://127.0.0.1:1/0", {"OPTIONS": {"socket_connect_timeout": 0.2}})
    cache.set("k", "v")
    assert cache.get("k", "default") == "default"
    assert cache.add("k", "v") is False and cache.delete("k") is False and cache.get_many(["k"]) == {}


def test_a_reachable_redis_caches(redis_url):
    cache = caches["default"]
    cache.set("pacelab-test-key", {"a": 1}, 30)
    assert cache.get("pacelab-test-key") == {"a": 1}
    cache.delete("pacelab-test-key")
