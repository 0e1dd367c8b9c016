"""Result tables (graphstk.experiments.report)."""


def test_degenerate_row_note_has_its_own_column_in_every_table():
    """A row note (most test nodes unreachable) gets a "note" header, so header and cells line up."""
    from graphstk.experiments.report import _table, row_note

    base = {"dataset": "D", "method": "KRR (i)", "setting": "inductive", "p_test": 0.01, "sweep": None,
            "options": {}, "seeds": [0, 1], "mean": 1.0, "std": 0.5, "mean_class0": 40.0, "mean_wrong": 1.0,
            "paper": None, "wall_time_s": 0.1, "n_test": [10, 10], "metric": "accuracy"}
    degenerate = {**base, "unreachable": [9, 9]}
    fine = {**base, "method": "LP (t)", "unreachable": [0, 0], "mean": 60.0, "mean_wrong": 60.0, "mean_class0": 60.0}
    assert row_note(degenerate) and not row_note(fine)
    head, body = _table([degenerate, fine])
    assert head[-1] == "note"
    assert all(len(b) == len(head) for b in body)
    assert body[0][-1] == row_note(degenerate) and body[1][-1] == ""


def test_results_md_names_the_peak_of_one_process_or_of_each():
    from graphstk.experiments.report import peak_memory_line

    assert peak_memory_line({"peak_rss_gb": 5.25}) == "- peak resident memory: 5.250 GB (one process)"
    two = {"peak_rss_gb": 2.5, "distributed": {"processes": 2, "peak_rss_gb": [2.5, 2.25]}}
    assert peak_memory_line(two) == "- peak resident memory per process: 2.500, 2.250 GB (2 processes; process 0 first)"
