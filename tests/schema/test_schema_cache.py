"""The cache of compiled JSON Schemas, shared by every plan, is bounded in bytes."""


def test_the_shared_schema_cache_is_bounded_in_bytes(monkeypatch) -> None:
    # Compiled schemas hold RE2 programs; the cache shared by all plans keeps at most
    # CACHE_BYTES of them (estimated), however many distinct schemas arrive.
    from scorewire.schema import full

    monkeypatch.setattr(full, "CACHE_BYTES", 1_000_000)
    for i in range(20):
        full.compile_schema({"type": "string", "pattern": rf"^\d{{300}}{i}$"})
        assert full.cached_bytes() <= 1_000_000
