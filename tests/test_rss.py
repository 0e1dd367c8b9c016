"""The peak resident memory a run records (graphstk._rss) and the line results.md shows for it."""
import numpy as np

from graphstk._rss import peak_rss_gb
from graphstk.experiments.report import peak_memory_line


def test_peak_rss_is_this_process_high_water_mark():
    before = peak_rss_gb()
    assert 0.01 < before < 1024
    block = np.ones(300 * 2 ** 20 // 8)          # 300 MiB, every page touched
    after = peak_rss_gb()
    del block
    assert after >= before and after >= 0.25     # it holds at least the block
    assert peak_rss_gb() > after - 0.05          # a high-water mark: freeing does not lower it (the kernel's
    #                                               counters lag by a few pages)


def test_results_md_names_the_peak_of_one_process_or_of_each():
    assert peak_memory_line({"peak_rss_gb": 5.25}) == "- peak resident memory: 5.250 GB (one process)"
    two = {"peak_rss_gb": 2.5, "distributed": {"processes": 2, "peak_rss_gb": [2.5, 2.25]}}
    assert peak_memory_line(two) == "- peak resident memory per process: 2.500, 2.250 GB (2 processes; process 0 first)"
