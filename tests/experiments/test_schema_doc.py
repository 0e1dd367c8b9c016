"""docs/experiments.md's reference block is generated from the schema and the registrations."""
from __future__ import annotations

from graphstk.experiments import schema_doc


def test_committed_reference_is_up_to_date():
    assert schema_doc.update(schema_doc.DOC, check=True), \
        "docs/experiments.md is out of date: run python -m graphstk.experiments.schema_doc"


def test_a_stale_block_is_rewritten_and_the_prose_kept(tmp_path):
    p = tmp_path / "doc.md"
    p.write_text(f"intro\n{schema_doc.BEGIN}\nold table\n{schema_doc.END}\noutro\n")
    assert schema_doc.main([str(p), "--check"]) == 1
    assert schema_doc.main([str(p)]) == 0 and schema_doc.main([str(p), "--check"]) == 0
    text = p.read_text()
    assert text.startswith("intro\n") and text.endswith("outro\n") and "old table" not in text
    for key in ("`p_test`", "`cv_folds`", "`n_train`", "`test_part`", "| `SP-Lap (t)` |", "| `KRLSC` |",
                "a number in (0, 1)"):
        assert key in text
