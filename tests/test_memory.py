"""graphstk.memory: the ceiling a working set is refused against, the free memory a tile is sized to, and the
peak resident memory a run records, and the allocator setting the runner applies."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from graphstk import memory
from graphstk.exceptions import MemoryLimitError

GB = 10 ** 9


@pytest.fixture
def machine(monkeypatch):
    """A simulated machine: 16 GB physical, 12 GB free, no ulimit, no cgroup limit; tests change it."""
    state = {"MemTotal": 16 * GB, "MemAvailable": 12 * GB, "rlimit": None, "vmsize": 1 * GB, "cgroup": None}
    monkeypatch.delenv("GRAPHSTK_MAX_MEMORY", raising=False)
    monkeypatch.setattr(memory, "_read_meminfo",
                        lambda: {"MemTotal": state["MemTotal"], "MemAvailable": state["MemAvailable"]})
    monkeypatch.setattr(memory, "_read_rlimit_as", lambda: state["rlimit"])
    monkeypatch.setattr(memory, "_read_vmsize", lambda: state["vmsize"])
    monkeypatch.setattr(memory, "_read_cgroup", lambda: state["cgroup"])
    return state


def test_limit_is_the_physical_memory_when_nothing_else_binds(machine):
    assert memory.memory_limit() == (16 * GB, "physical memory (MemTotal)")
    assert memory.memory_available()[0] == 12 * GB


def test_rlimit_as_less_what_the_process_holds_binds_and_is_named(machine):
    machine["rlimit"] = 6 * GB
    limit, bound = memory.memory_limit()
    assert limit == 5 * GB and "RLIMIT_AS" in bound and "ulimit -v" in bound
    assert memory.memory_available() == (limit, bound)
    # the KernelRidge case: 10 GB needed under ulimit -v 6 GB is refused, naming RLIMIT_AS
    with pytest.raises(MemoryLimitError, match=r"needs 10.0 GB, more than the 5.0 GB of the address-space limit "
                                               r"RLIMIT_AS.*; pass solver='cg'"):
        memory.check_allocation(10 * GB, "the kernel matrix", "pass solver='cg'")


def test_cgroup_limit_less_its_use_binds_and_is_named(machine):
    machine["cgroup"] = (4 * GB, 1 * GB, "/sys/fs/cgroup/memory.max")
    assert memory.memory_limit() == (3 * GB, "the cgroup limit /sys/fs/cgroup/memory.max (4.0 GB) less the "
                                             "1.0 GB the cgroup uses")
    with pytest.raises(MemoryLimitError, match=r"more than the 3.0 GB of the cgroup limit /sys/fs/cgroup/memory.max"):
        memory.check_allocation(3.5 * GB, "x", "y")


def test_graphstk_max_memory_binds_when_smallest(machine, monkeypatch):
    monkeypatch.setenv("GRAPHSTK_MAX_MEMORY", "2GB")
    machine["rlimit"] = 6 * GB
    assert memory.memory_limit() == (2 * GB, "GRAPHSTK_MAX_MEMORY")
    with pytest.raises(MemoryLimitError, match=r"more than the 2.0 GB of GRAPHSTK_MAX_MEMORY; y"):
        memory.check_allocation(3 * GB, "x", "y")


def test_refusals_ignore_the_momentary_free_memory(machine):
    machine["MemAvailable"] = 50 * 10 ** 6        # another program briefly holds almost everything
    memory.check_allocation(8 * GB, "x", "y")       # fits the ceiling: not refused
    assert memory.memory_available() == (50 * 10 ** 6, "available system memory (MemAvailable)")


def test_tiles_shrink_to_the_free_memory_and_never_refuse_on_it(machine):
    per_row = 2128 * 8 * 2
    assert memory.tile_rows(1971, per_row, what="t", hint="h") == 1971         # idle machine: as asked
    machine["MemAvailable"] = 59 * 10 ** 6                                       # the busy moment of the report
    rows = memory.tile_rows(1971, per_row, what="t", hint="h")
    assert 1 <= rows < 1971 and rows * per_row <= memory.TILE_SHARE * 59 * 10 ** 6
    machine["MemAvailable"] = 0
    assert memory.tile_rows(1971, per_row, what="t", hint="h", min_rows=8) == 8  # down to the minimum, no error
    machine["rlimit"] = machine["vmsize"] + 1000                                 # the ceiling cannot hold one row
    with pytest.raises(MemoryLimitError, match="one tile needs .* RLIMIT_AS.*; lower it"):
        memory.tile_rows(1971, per_row, what="one tile", hint="lower it")


def test_cgroup_reader_walks_up_and_subtracts_inactive_file(tmp_path, monkeypatch):
    root = tmp_path / "cg"
    (root / "a" / "b").mkdir(parents=True)
    (root / "memory.max").write_text("max\n")
    (root / "a" / "memory.max").write_text(str(3 * GB))
    (root / "a" / "memory.current").write_text(str(2 * GB))
    (root / "a" / "memory.stat").write_text(f"anon 1\ninactive_file {GB // 2}\n")
    monkeypatch.setattr(memory, "_cgroup_dirs", lambda: [(str(root / "a" / "b"), "v2"), (str(root / "a"), "v2"),
                                                         (str(root), "v2")])
    limit, used, path = memory._read_cgroup()
    assert (limit, used) == (3 * GB, 3 * GB // 2) and path.endswith("a/memory.max")


def test_a_real_ulimit_refuses_before_allocating():
    """A child process with ``ulimit -v`` set: the check names RLIMIT_AS, no allocator crash."""
    code = textwrap.dedent("""
        import torch
        from graphstk.exceptions import MemoryLimitError
        from graphstk.methods import KernelRidge
        X = torch.rand(3000, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
        try:
            KernelRidge(sigma=1.0, lam=1e-3).fit(X, X[:, 0])
        except MemoryLimitError as e:
            print("REFUSED", e)
    """)

    def limit():
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (memory_ceiling, memory_ceiling))

    # room for the interpreter and torch (their address space) plus 100 MB: 3000 x 3000 x 8 x 2 = 144 MB does not fit
    probe = subprocess.run([sys.executable, "-c", "import torch; from graphstk.methods import KernelRidge; from graphstk.memory import "
                            "_read_vmsize; print(_read_vmsize())"], capture_output=True, text=True, check=True)
    memory_ceiling = int(probe.stdout.split()[-1]) + 100 * 10 ** 6
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, preexec_fn=limit)
    assert "REFUSED" in out.stdout, out.stdout + out.stderr
    assert "RLIMIT_AS" in out.stdout and "144.0 MB" in out.stdout


def test_small_tiles_are_used_as_asked_without_reading_limits(machine, monkeypatch):
    machine["MemAvailable"] = 0
    monkeypatch.setattr(memory, "_read_meminfo", lambda: pytest.fail("read inside a product loop"))
    assert memory.tile_rows(100, 1000.0, what="t", hint="h") == 100            # 100 kB <= SMALL_TILE


def test_peak_rss_is_this_process_high_water_mark():
    before = memory.peak_rss_gb()
    assert 0.01 < before < 1024
    block = np.ones(300 * 2 ** 20 // 8)          # 300 MiB, every page touched
    after = memory.peak_rss_gb()
    del block
    assert after >= before and after >= 0.25     # it holds at least the block
    assert memory.peak_rss_gb() > after - 0.05   # a high-water mark: freeing does not lower it (the kernel's
    #                                              counters lag by a few pages)



def test_reuse_freed_memory_applies_on_glibc_and_can_be_turned_off(monkeypatch):
    import platform

    from graphstk.memory import reuse_freed_memory
    monkeypatch.setenv("GRAPHSTK_MALLOC", "default")
    assert reuse_freed_memory() is False
    monkeypatch.delenv("GRAPHSTK_MALLOC")
    libc, version = platform.libc_ver()
    applied = reuse_freed_memory()   # (this leaves the pytest process with the raised thresholds; harmless)
    assert isinstance(applied, bool)
    if platform.system() == "Linux" and libc == "glibc" and tuple(map(int, version.split(".")[:2])) >= (2, 35):
        assert applied   # the glibc of this project's machines (2.36) accepts the 128 MiB threshold


def test_blocks_above_the_threshold_go_back_to_the_system_when_freed():
    """A freed block above ``MALLOC_THRESHOLD`` leaves the resident set (it was mapped, not taken from the
    heap), so the heap of a run on a large graph does not keep its ``[N, K]`` blocks."""
    import platform
    import subprocess
    import sys

    import pytest

    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        pytest.skip("glibc's mallopt only")
    code = (
        "import torch\n"
        "from graphstk.memory import MALLOC_THRESHOLD, reuse_freed_memory\n"
        "def rss():\n"
        "    return next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmRSS:')) * 1024\n"
        "assert reuse_freed_memory()\n"
        "base = rss()\n"
        "x = torch.ones(2 * MALLOC_THRESHOLD // 4)\n"
        "held = rss() - base\n"
        "del x\n"
        "print(held, rss() - base)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    held, left = map(int, out.stdout.split())
    from graphstk.memory import MALLOC_THRESHOLD
    assert held > 1.5 * MALLOC_THRESHOLD and left < 0.25 * MALLOC_THRESHOLD
