"""Test helpers that manage real local services (Redis)."""
