"""Writers for ``results.json``, ``results.csv``, ``results.md`` and the console table.

Every file is written atomically (temporary file, then :func:`os.replace`).
"""
from __future__ import annotations

import csv
import io
import json
import math
import os

from .cache import atomic_write_text
from .config import options_suffix

__all__ = ["write_all", "to_json", "to_csv", "to_markdown", "console_table", "row_note"]

CSV_FIELDS = ["dataset", "method", "setting", "p_test", "sweep", "options", "n_seeds", "mean", "std",
              "mean_class0", "mean_wrong", "paper_mean", "paper_std", "diff", "test_acc", "best_params",
              "unreachable", "note", "wall_time_s"]


def _clean(x):
    """JSON-safe copy: NaN/inf become null (``json`` would write invalid ``NaN``)."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def to_json(results: dict) -> str:
    return json.dumps(_clean(results), indent=1) + "\n"


def _fmt(x, nd: int = 2) -> str:
    return f"{x:.{nd}f}" if isinstance(x, (int, float)) and math.isfinite(x) else "-"


def _sweep(row) -> str:
    s = row.get("sweep")
    return "" if not s else ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in s.items())


def _method(row) -> str:
    """The method label plus its non-default options; the kernel-PCA ``support`` is always shown
    (``SP-topd (t) [support=labeled]``), so every row says which variant ran."""
    opts = row.get("options") or {}
    suffix = options_suffix(opts)
    if "support" in opts and "support=" not in suffix:
        shown = f"support={opts['support']}"
        suffix = f" [{shown},{suffix[2:]}" if suffix else f" [{shown}]"
    return row["method"] + suffix


# ---------------------------------------------------------------- one-line reasons beside degenerate rows
DEGENERATE_SHARE = 0.5   # a row is degenerate when at least this share of its test nodes is unreachable


def row_note(row: dict) -> str:
    """One line saying why a row is degenerate (``""`` if it is not): most of its test nodes are
    reached by no label, so its accuracy says more about the scoring convention than the method."""
    unreach = sum(row.get("unreachable") or [])
    n_test = sum(row.get("n_test") or [])
    mean, m0, mw = row.get("mean"), row.get("mean_class0"), row.get("mean_wrong")
    if not n_test:
        return ""
    if unreach < DEGENERATE_SHARE * n_test:
        return "every test prediction is wrong" if mean == 0.0 else ""
    head = f"{unreach} of {n_test} test nodes are reached by no label (all-zero scores)"
    if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in (mean, m0, mw)) or m0 == mw:
        return head
    if mean == mw:
        return f"{head}, counted wrong; plain argmax (class 0) gives {_fmt(m0)}"
    return f"{head}, predicted as class 0; counting them wrong gives {_fmt(mw)}"


def unreachable_note(convention: str) -> str:
    """The line under the table that says how unreachable test nodes were scored."""
    if convention == "class0":
        return ("Accuracies use the paper's convention (`unreachable: class0`): plain argmax, so a node no label "
                "reaches (all-zero score row) predicts class 0. Counting those as wrong instead: `mean_wrong` / "
                "`test_acc_wrong` in results.json and results.csv.")
    return ("Accuracies count nodes no label reaches (all-zero score row) as wrong (`unreachable: wrong`). The "
            "paper's convention (plain argmax, class 0): `mean_class0` / `test_acc_class0` in results.json and "
            "results.csv.")


def _diff(row):
    paper = row.get("paper")
    if paper and isinstance(row.get("mean"), float) and math.isfinite(row["mean"]):
        return row["mean"] - paper["mean"]
    return None


def _params(p: dict) -> str:
    return ",".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in p.items())


def to_csv(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        paper = r.get("paper") or {}
        d = _diff(r)
        w.writerow({
            "dataset": r["dataset"], "method": r["method"], "setting": r["setting"], "p_test": r["p_test"],
            "sweep": _sweep(r), "options": _params(r.get("options") or {}), "n_seeds": len(r["seeds"]),
            "mean": _fmt(r["mean"], 4), "std": _fmt(r["std"], 4),
            "mean_class0": _fmt(r.get("mean_class0"), 4), "mean_wrong": _fmt(r.get("mean_wrong"), 4),
            "paper_mean": paper.get("mean", ""), "paper_std": paper.get("std", ""),
            "diff": "" if d is None else f"{d:.4f}",
            "test_acc": ";".join(_fmt(a, 4) for a in r["test_acc"]),
            "best_params": json.dumps(r["best_params"]),
            "unreachable": sum(r.get("unreachable") or []),
            "note": row_note(r),
            "wall_time_s": f"{r['wall_time_s']:.3f}",
        })
    return buf.getvalue()


def _table(rows: list[dict]) -> tuple[list[str], list[list[str]]]:
    has_sweep = any(r.get("sweep") for r in rows)
    has_note = any(row_note(r) for r in rows)
    head = ["dataset", "method", "p_test"] + (["sweep"] if has_sweep else []) + \
        ["ours (mean ± std)", "paper", "diff", "seeds", "unreachable", "time (s)"] + (["note"] if has_note else [])
    body = []
    for r in rows:
        paper = r.get("paper")
        d = _diff(r)
        body.append([r["dataset"], _method(r), f"{r['p_test']:g}"] + ([_sweep(r)] if has_sweep else []) + [
            f"{_fmt(r['mean'])} ± {_fmt(r['std'])}",
            f"{_fmt(paper['mean'])} ± {_fmt(paper['std'])}" if paper else "-",
            "-" if d is None else f"{d:+.2f}",
            str(len(r["seeds"])), str(sum(r.get("unreachable") or [])), f"{r['wall_time_s']:.1f}",
        ] + ([row_note(r)] if has_note else []))
    return head, body


def console_table(rows: list[dict]) -> str:
    head, body = _table(rows)
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return "\n".join([line(head), line(["-" * w for w in widths])] + [line(b) for b in body])


def to_markdown(results: dict) -> str:
    cfg = results["config"]
    rows = results["rows"]
    out = [f"# Results: {cfg['name']}", ""]
    if cfg.get("description"):
        out += [cfg["description"], ""]
    out += [f"- seeds: {cfg['seeds']}; p_test: {cfg['p_test']}" + ("; **quick mode**" if cfg.get("quick") else ""),
            f"- wall time: {results['wall_time_s']:.1f} s (cache: {results['cache']['reused']} reused, "
            f"{results['cache']['computed']} computed)",
            "- accuracy: test accuracy in percent, mean ± sample std over seeds; hyperparameters selected on val "
            "(ties: first grid point)",
            "- paper: the cell of the STKR paper (source table in results.json), where it reports one", ""]
    if rows:
        head, body = _table(rows)
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "|".join("---" for _ in head) + "|")
        out += ["| " + " | ".join(b) + " |" for b in body]
        out.append("")
        out += [unreachable_note(cfg.get("unreachable", "wrong")), ""]
        out += _pivots(rows)
        out += ["## Chosen hyperparameters (per seed)", ""]
        for r in rows:
            sw = f" [{_sweep(r)}]" if r.get("sweep") else ""
            out.append(f"- {r['dataset']} / {_method(r)}{sw} / p_test={r['p_test']:g}: "
                       + "; ".join(_params(p) for p in r["best_params"]))
        out.append("")
    else:
        out += ["No rows (every dataset was skipped).", ""]
    if results.get("skipped"):
        out += ["## Skipped datasets", ""]
        out += [f"- {s['dataset']}: {s['reason'].splitlines()[0]}" for s in results["skipped"]]
        out.append("")
    return "\n".join(out)


def _pivots(rows: list[dict]) -> list[str]:
    """Paper-style tables (methods x datasets, "ours (paper)") per p_test, for rows without sweep."""
    plain = [r for r in rows if not r.get("sweep")]
    datasets = list(dict.fromkeys(r["dataset"] for r in plain))
    if len(datasets) < 2:
        return []
    out = []
    for p in dict.fromkeys(r["p_test"] for r in plain):
        sub = {(_method(r), r["dataset"]): r for r in plain if r["p_test"] == p}
        methods = list(dict.fromkeys(m for m, _ in sub))
        out += [f"## p_test = {p:g}: ours (paper)", "", "| method | " + " | ".join(datasets) + " |",
                "|---|" + "---|" * len(datasets)]
        for m in methods:
            cells = []
            for d in datasets:
                r = sub.get((m, d))
                if r is None:
                    cells.append("")
                    continue
                paper = r.get("paper")
                cells.append(f"{_fmt(r['mean'])} ± {_fmt(r['std'])}"
                             + (f" ({_fmt(paper['mean'])} ± {_fmt(paper['std'])})" if paper else ""))
            out.append(f"| {m} | " + " | ".join(cells) + " |")
        out.append("")
    return out


def write_all(out_dir: str, results: dict) -> None:
    os.makedirs(out_dir, exist_ok=True)
    atomic_write_text(os.path.join(out_dir, "results.json"), to_json(results))
    atomic_write_text(os.path.join(out_dir, "results.csv"), to_csv(results["rows"]))
    atomic_write_text(os.path.join(out_dir, "results.md"), to_markdown(results))
