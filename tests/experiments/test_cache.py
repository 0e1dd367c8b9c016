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


def test_a_second_run_on_the_same_output_folder_is_refused(tmp_path, lock_holder):
    """While one process holds DIR/.graphstk-run.lock, a second run on DIR is refused at once,
    naming the folder, the holder and the fix (another --out); once the first ends, the same
    command runs."""
    import pytest

    from graphstk.exceptions import RunError
    from graphstk.experiments.cache import run_lock

    out = str(tmp_path / "out")
    with lock_holder(out) as holder:
        with pytest.raises(RunError, match=rf"another run is using the output folder {out} .*held by pid "
                                           rf"{holder.pid}.*pass a different --out"):
            with run_lock(out):
                pass
        with run_lock(str(tmp_path / "other")):          # the fix: a different --out
            pass
    with run_lock(out):                                   # the first run ended: the folder is free again
        pass
