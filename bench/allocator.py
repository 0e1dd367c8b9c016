"""What a fresh wide block costs, with glibc's defaults and with freed blocks reused (``run.py``'s setting).

Run from the repository root::

    python bench/allocator.py                                        # [18333, 300] float64, 2 threads
    python bench/allocator.py --out docs/results/speed/allocator.md  # the recorded run
    python bench/allocator.py --quick                                # small blocks: seconds, no report

The propagation engines create ``[N, K]`` temporaries on every iteration. With glibc's defaults a block
above ``M_MMAP_THRESHOLD`` is mapped fresh and its pages are faulted in when first written; with
:func:`graphstk.memory.reuse_freed_memory` (what ``run.py`` sets) freed blocks stay in the heap and
the next block of that size reuses their pages. The allocator setting is process-wide, so each
setting is timed in a child process of its own; inside each child, side by side, this script times

* ``out-of-place``: ``torch.addcmul(a, b, c)``, which allocates its result;
* ``in-place``: ``a.addcmul_(b, c)``, the same arithmetic into an existing block;

(median of ``--repeats`` runs each) and prints the ratio out-of-place / in-place for both settings, and
the out-of-place time with defaults over the out-of-place time with reuse. The shape defaults to Coauthor
CS's node count by 300 columns, an engine block of a 300-column multi-right-hand-side solve.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphstk.memory import reuse_freed_memory  # noqa: E402


def _median_seconds(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def child(rows: int, cols: int, repeats: int, reuse: bool) -> dict:
    """Time both forms in this process, with freed blocks reused when ``reuse`` (and glibc allows it)."""
    applied = reuse_freed_memory() if reuse else False
    g = torch.Generator().manual_seed(0)
    a, b, c = (torch.rand(rows, cols, generator=g, dtype=torch.float64) for _ in range(3))
    keep = []

    def out_of_place():
        keep.append(torch.addcmul(a, b, c))
        keep.clear()             # freed at once, as an engine's temporary is

    out_of_place()               # the first block of this size: reuse has nothing to reuse yet
    fresh = _median_seconds(out_of_place, repeats)
    inplace = _median_seconds(lambda: a.addcmul_(b, c, value=0.0), repeats)
    return {"reuse_requested": reuse, "reuse_applied": bool(applied), "out_of_place_s": fresh, "in_place_s": inplace}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=18333)
    ap.add_argument("--cols", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=21)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="[2000, 300] blocks, 5 repeats, 1 thread, no report file")
    ap.add_argument("--out", type=Path, default=None, help="markdown report (default: none)")
    ap.add_argument("--child", choices=["reuse", "default"], help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.quick:
        args.rows, args.repeats, args.out, args.threads = 2000, 5, None, 1
    torch.set_num_threads(args.threads)
    if args.child:
        print(json.dumps(child(args.rows, args.cols, args.repeats, args.child == "reuse")))
        return 0
    res = {}
    for setting in ("default", "reuse"):
        cmd = [sys.executable, __file__, "--child", setting, "--rows", str(args.rows), "--cols", str(args.cols),
               "--repeats", str(args.repeats), "--threads", str(args.threads)]
        env = {**os.environ, "GRAPHSTK_MALLOC": "reuse"}
        out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
        res[setting] = json.loads(out.stdout.strip().splitlines()[-1])
    mb = args.rows * args.cols * 8 / 2 ** 20
    lines = [f"A fresh `[{args.rows}, {args.cols}]` float64 block ({mb:.0f} MiB), `python bench/allocator.py` on "
             f"{platform.machine()} ({os.cpu_count()} cores), torch {torch.__version__}, {args.threads} threads, "
             f"median of {args.repeats} runs; load average "
             f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}.", "",
             "| allocator | out-of-place `addcmul` (ms) | in-place `addcmul_` (ms) | out-of-place / in-place |",
             "|---|---|---|---|"]
    for setting, r in res.items():
        name = {"default": "glibc defaults", "reuse": "freed blocks reused (run.py)"}[setting]
        if setting == "reuse" and not r["reuse_applied"]:
            name += " (not applied: no glibc)"
        lines.append(f"| {name} | {1e3 * r['out_of_place_s']:.2f} | {1e3 * r['in_place_s']:.2f} | "
                     f"{r['out_of_place_s'] / r['in_place_s']:.1f}x |")
    lines += ["", f"Out-of-place with defaults over out-of-place with reuse: "
                  f"{res['default']['out_of_place_s'] / res['reuse']['out_of_place_s']:.1f}x."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
