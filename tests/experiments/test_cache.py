"""The result cache and atomic writes (graphstk.experiments.cache)."""
import os
import stat


def test_files_follow_the_umask(tmp_path):
    from graphstk.experiments.cache import ResultCache, atomic_write_text
    old = os.umask(0o022)
    try:
        atomic_write_text(str(tmp_path / "a.txt"), "x")
        ResultCache(str(tmp_path / "cache")).put("lbl", {"k": 1}, {"r": 2})
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in [tmp_path / "a.txt",
                                                                   *(tmp_path / "cache").iterdir()]}
    finally:
        os.umask(old)
    assert set(modes.values()) == {0o644}, modes
