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
