"""The allocator setting applied at import (graphstk._malloc)."""


def test_reuse_freed_memory_applies_on_glibc_and_can_be_turned_off(monkeypatch):
    import platform

    from graphstk._malloc import reuse_freed_memory
    monkeypatch.setenv("GRAPHSTK_MALLOC", "default")
    assert reuse_freed_memory() is False
    monkeypatch.delenv("GRAPHSTK_MALLOC")
    libc, version = platform.libc_ver()
    applied = reuse_freed_memory()   # (this leaves the pytest process with the raised thresholds; harmless)
    assert isinstance(applied, bool)
    if platform.system() == "Linux" and libc == "glibc" and tuple(map(int, version.split(".")[:2])) >= (2, 35):
        assert applied   # the glibc of this project's machines (2.36) accepts the 1 GiB threshold
