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
        assert applied   # the glibc of this project's machines (2.36) accepts the 128 MiB threshold


def test_blocks_above_the_threshold_go_back_to_the_system_when_freed():
    """A freed block above ``THRESHOLD`` leaves the resident set (it was mapped, not taken from the
    heap), so the heap of a run on a large graph does not keep its ``[N, K]`` blocks."""
    import platform
    import subprocess
    import sys

    import pytest

    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        pytest.skip("glibc's mallopt only")
    code = (
        "import torch\n"
        "from graphstk._malloc import THRESHOLD, reuse_freed_memory\n"
        "def rss():\n"
        "    return next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmRSS:')) * 1024\n"
        "assert reuse_freed_memory()\n"
        "base = rss()\n"
        "x = torch.ones(2 * THRESHOLD // 4)\n"
        "held = rss() - base\n"
        "del x\n"
        "print(held, rss() - base)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    held, left = map(int, out.stdout.split())
    from graphstk._malloc import THRESHOLD
    assert held > 1.5 * THRESHOLD and left < 0.25 * THRESHOLD
