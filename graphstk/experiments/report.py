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
from .registry import options_suffix

__all__ = ["write_all", "to_json", "to_csv", "to_markdown", "console_table", "row_note", "format_params",
           "level_label"]

CSV_FIELDS = ["dataset", "method", "setting", "p_test", "sweep", "options", "n_seeds", "mean", "std",
              "mean_class0", "mean_wrong", "paper_mean", "paper_std", "diff", "test_acc", "best_params",
              "unreachable", "note", "wall_time_s", "task", "protocol", "metric", "n_labeled"]


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


def _pm(cell: dict, nd: int) -> str:
    """``"mean ± std"`` of a row or a paper cell."""
    return f"{_fmt(cell['mean'], nd)} ± {_fmt(cell.get('std'), nd)}"


def format_params(params: dict | None, sep: str = ",") -> str:
    """``k=v`` pairs of a parameter (or sweep) dict, floats as ``%g``: ``"eta=0.99,T=8"``."""
    return sep.join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in (params or {}).items())


def level_label(row: dict) -> str:
    """A row's level: ``"p_test=0.01"`` or ``"n_labeled=10"``."""
    return f"p_test={row['p_test']:g}" if row.get("p_test") is not None else f"n_labeled={row.get('n_labeled')}"


def _sweep(row) -> str:
    return format_params(row.get("sweep"), ", ")


def _method(row) -> str:
    """The method label plus its non-default options; the kernel-PCA ``support`` is always shown."""
    opts = row.get("options") or {}
    suffix = options_suffix(opts, row["method"])
    if "support" in opts and "support=" not in suffix:
        shown = f"support={opts['support']}"
        suffix = f" [{shown},{suffix[2:]}" if suffix else f" [{shown}]"
    return row["method"] + suffix


# ---------------------------------------------------------------- one-line reasons beside degenerate rows
DEGENERATE_SHARE = 0.5   # a row is degenerate when at least this share of its test nodes is unreachable


def row_note(row: dict) -> str:
    """One line saying why a row is degenerate (``""`` if it is not): most of its test nodes are
    reached by no label, so its accuracy says more about the scoring convention than the method."""
    if row.get("note"):
        return row["note"]
    if row.get("metric", "accuracy") != "accuracy":
        return ""   # error / AUC rows of the vector protocols have no unreachable nodes
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


def to_csv(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        paper = r.get("paper") or {}
        d = _diff(r)
        w.writerow({
            "dataset": r["dataset"], "method": r["method"], "setting": r["setting"],
            "p_test": "" if r.get("p_test") is None else r["p_test"],
            "sweep": _sweep(r), "options": format_params(r.get("options")), "n_seeds": len(r["seeds"]),
            "mean": _fmt(r["mean"], 4), "std": _fmt(r["std"], 4), "mean_class0": _fmt(r.get("mean_class0"), 4),
            "mean_wrong": _fmt(r.get("mean_wrong"), 4), "paper_mean": paper.get("mean", ""),
            "paper_std": paper.get("std", ""), "diff": "" if d is None else f"{d:.4f}",
            "test_acc": ";".join(_fmt(a, 4) for a in r["test_acc"]), "best_params": json.dumps(r["best_params"]),
            "unreachable": sum(r.get("unreachable") or []), "note": row_note(r),
            "wall_time_s": f"{r['wall_time_s']:.3f}", "task": r.get("task") or "", "protocol": r.get("protocol", ""),
            "metric": r.get("metric", ""),
            "n_labeled": "" if r.get("n_labeled") is None else json.dumps(r["n_labeled"]),
        })
    return buf.getvalue()


def _nd(row) -> int:
    return 3 if row.get("metric") == "auc" else 2


def _level(row) -> str:
    if row.get("p_test") is not None:
        return f"{row['p_test']:g}"
    return str(row.get("n_labeled", "-"))


def _table(rows: list[dict]) -> tuple[list[str], list[list[str]]]:
    has_sweep = any(r.get("sweep") for r in rows)
    has_note = any(row_note(r) for r in rows)
    node = all(r.get("p_test") is not None for r in rows)
    level = "p_test" if node else ("n_labeled" if all(r.get("p_test") is None for r in rows) else "p_test/n_labeled")
    head = ["dataset", "method", level] + (["sweep"] if has_sweep else []) + ([] if node else ["metric"]) + \
        ["ours (mean ± std)", "paper", "diff", "seeds", "unreachable", "time (s)"] + \
        (["time per seed (s)"] if any("fit_time_s" in r for r in rows) else []) + (["note"] if has_note else [])
    if not node:
        head.remove("unreachable")
    body = []
    for r in rows:
        d, nd = _diff(r), _nd(r)
        body.append([r["dataset"], _method(r), _level(r)] + ([_sweep(r)] if has_sweep else [])
                    + ([] if node else [_metric_label(r)]) + [
            _pm(r, nd), _pm(r["paper"], nd) if r.get("paper") else "-", "-" if d is None else f"{d:+.{nd}f}",
            str(len(r["seeds"]))] + ([str(sum(r.get("unreachable") or []))] if node else [])
            + [f"{r['wall_time_s']:.1f}"] + ([_fmt(r.get("fit_time_s"))] if "time per seed (s)" in head else [])
            + ([row_note(r)] if has_note else []))
    return head, body


def _metric_label(r) -> str:
    return {"accuracy": "accuracy %", "error": "error %", "auc": "AUC"}.get(r.get("metric"), r.get("metric", ""))


def console_table(rows: list[dict]) -> str:
    """The results table for the terminal; one table per task for a multi-task config."""
    tasks = list(dict.fromkeys(r.get("task") for r in rows))
    if len(tasks) > 1:
        return "\n\n".join(f"[task {t}]\n" + console_table([r for r in rows if r.get("task") == t]) for t in tasks)
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
    tasks = cfg.get("tasks") or [cfg]
    described = results.get("protocol") or {}
    out += [f"- wall time: {results['wall_time_s']:.1f} s (cache: {results['cache']['reused']} reused, "
            f"{results['cache']['computed']} computed)" + ("; **quick mode**" if cfg.get("quick") else "")]
    if results.get("peak_rss_gb") is not None:
        out += [peak_memory_line(results)]
    if len(tasks) > 1:
        out += [f"- tasks: {', '.join(t.get('task') or t['name'] for t in tasks)} (one section each)", ""]
    for t in tasks:
        name = t.get("task")
        trows = [r for r in rows if r.get("task") == name] if len(tasks) > 1 else rows
        desc = described.get(name) if len(tasks) > 1 else described
        if len(tasks) > 1:
            out += [f"## Task {name}: {t.get('protocol', 'node-classification')}", ""]
        out += _section(t, trows, desc or {}, "###" if len(tasks) > 1 else "##")
    if results.get("skipped"):
        out += ["## Skipped datasets", ""]
        out += [f"- {s['dataset']}: {s['reason'].splitlines()[0]}" for s in results["skipped"]]
        out.append("")
    return "\n".join(out)


def peak_memory_line(results: dict) -> str:
    """The results' peak resident memory: the process's, every process's of a distributed run, or the
    workers' of a run with ``--jobs``."""
    per = (results.get("distributed") or {}).get("peak_rss_gb")
    if per:
        return (f"- peak resident memory per process: {', '.join(f'{g:.3f}' for g in per)} GB "
                f"({len(per)} processes; process 0 first)")
    jobs = results.get("jobs")
    if jobs:
        return (f"- peak resident memory per worker process: {', '.join(f'{g:.3f}' for g in jobs['peak_rss_gb'])} GB "
                f"({jobs['processes']} worker processes of {jobs['threads']} thread{'s' * (jobs['threads'] > 1)} "
                f"each, `--jobs`); the run's largest process: {results['peak_rss_gb']:.3f} GB")
    return f"- peak resident memory: {results['peak_rss_gb']:.3f} GB (one process)"


def _table_lines(rows: list[dict]) -> list[str]:
    head, body = _table(rows)
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(b) + " |" for b in body]
    return out + [""]


def _chosen_lines(rows: list[dict], per: str = "seed", h: str = "##") -> list[str]:
    out = [f"{h} Chosen hyperparameters (per {per})", ""]
    for r in rows:
        sw = f" [{_sweep(r)}]" if r.get("sweep") else ""
        out.append(f"- {r['dataset']} / {_method(r)}{sw} / {level_label(r)}: "
                   + "; ".join(format_params(p) for p in r["best_params"]))
    return out + [""]


def _section(cfg: dict, rows: list[dict], desc: dict, h: str = "##") -> list[str]:
    """The results.md section of one task: its protocol's summary, the table, pivots, chosen parameters."""
    proto = cfg.get("protocol", "node-classification")
    if proto == "node-classification":
        out = [f"- seeds: {cfg['seeds']}; p_test: {cfg['p_test']}",
               "- accuracy: test accuracy in percent, mean ± sample std over seeds; hyperparameters selected on val "
               "(ties: first grid point)",
               "- paper: the cell of the STKR paper (source table in results.json), where it reports one", ""]
    else:
        reps = "splits" if proto == "fixed-splits" else "seeds"
        which = cfg.get("splits", "all") if proto == "fixed-splits" else cfg.get("seeds")
        out = [f"- protocol: **{proto}**; {reps}: {which}"]
        out += [f"- {key}: {desc[key]}" for key in ("metric", "n_labeled", "selection", "test", "unlabeled", "sets",
                                                   "std") if desc.get(key)]
        table = '' if cfg.get("paper_table") in (None, "auto") else f" ({cfg['paper_table']})"
        out += ["- paper: " + (f"`graphstk/experiments/paper_numbers/{cfg['paper']}.json`{table}" if cfg.get("paper")
                               else "none (no published cell to compare with)"), ""]
    if not rows:
        return out + ["No rows (every dataset was skipped).", ""]
    out += _table_lines(rows)
    if proto == "node-classification":
        out += [unreachable_note(cfg.get("unreachable", "wrong")), ""]
    return out + _pivots(rows, h) + _chosen_lines(rows, "split" if proto == "fixed-splits" else "seed", h)


def _pivots(rows: list[dict], h: str = "##") -> list[str]:
    """Paper-style tables (methods x datasets, "ours (paper)") per level, for rows without sweep."""
    plain = [r for r in rows if not r.get("sweep")]
    datasets = list(dict.fromkeys(r["dataset"] for r in plain))
    if len(datasets) < 2:
        return []
    out = []
    for lv in dict.fromkeys(_level(r) for r in plain):
        sub = {(_method(r), r["dataset"]): r for r in plain if _level(r) == lv}
        methods = list(dict.fromkeys(m for m, _ in sub))
        first = next(iter(sub.values()))
        what = f"p_test = {lv}" if first.get("p_test") is not None else \
            f"n_labeled = {lv} ({first.get('n_labeled_unit', '')}), {_metric_label(first)}"
        out += [f"{h} {what}: ours (paper)", "", "| method | " + " | ".join(datasets) + " |",
                "|---|" + "---|" * len(datasets)]
        for m in methods:
            cells = [_pivot_cell(sub.get((m, d))) for d in datasets]
            out.append(f"| {m} | " + " | ".join(cells) + " |")
        out.append("")
    return out


def _pivot_cell(r: dict | None) -> str:
    """``"ours (paper)"`` of a row, ``""`` for none."""
    if r is None:
        return ""
    return _pm(r, _nd(r)) + (f" ({_pm(r['paper'], _nd(r))})" if r.get("paper") else "")


def write_all(out_dir: str, results: dict) -> None:
    os.makedirs(out_dir, exist_ok=True)
    atomic_write_text(os.path.join(out_dir, "results.json"), to_json(results))
    atomic_write_text(os.path.join(out_dir, "results.csv"), to_csv(results["rows"]))
    atomic_write_text(os.path.join(out_dir, "results.md"), to_markdown(results))
