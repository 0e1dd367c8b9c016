"""Shared helpers of the examples: the Cora public split, seeds, timing and the results file."""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import torch

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results" / "nn"


def parser(description: str) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--data-root", default=os.environ.get("GRAPHSTK_DATA", "datasets"),
                    help="folder holding Cora/raw (default: $GRAPHSTK_DATA, else ./datasets)")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--out", default=None, help="results JSON (default: docs/results/nn/<script>.json)")
    return ap


def cora(root: str):
    """Cora with the public Planetoid split (20 labels a class, 500 validation, 1000 test nodes)."""
    from torch_geometric.datasets import Planetoid
    return Planetoid(root, "Cora")[0]


def accuracy(out: torch.Tensor, y: torch.Tensor, mask: torch.Tensor) -> float:
    return float((out.argmax(1)[mask] == y[mask]).float().mean())


def time_ms(fn, repeats: int = 20) -> float:
    """Median wall time of ``fn()`` in milliseconds (after one warm-up call)."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def summary(values: list[float]) -> dict:
    return {"mean": statistics.mean(values), "std": statistics.pstdev(values), "runs": values}


def write(name: str, rows: list[dict], args, note: str = "") -> None:
    """Write ``{"script", "rows", "seeds", "threads", "note"}`` and print the rows."""
    path = Path(args.out) if args.out else RESULTS / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"script": f"examples/{name}.py", "seeds": args.seeds,
                                "threads": torch.get_num_threads(), "note": note, "rows": rows}, indent=1))
    for row in rows:
        acc = row.get("test_acc")
        extra = f"  {row['ms_per_forward']:.2f} ms/forward" if "ms_per_forward" in row else ""
        print(f"{row['method']:<48} test acc {100 * acc['mean']:.1f} +- {100 * acc['std']:.1f}{extra}")
    print(f"wrote {path}")
