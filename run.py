#!/usr/bin/env python
"""Run benchmarks from a config: ``python run.py [CONFIG] [--out DIR] [--data-root PATH] [--seeds N] [--quick]``.

Same program as ``python -m graphstk``; see ``python run.py --help`` and docs/experiments.md.
"""
import sys

from graphstk.__main__ import main

if __name__ == "__main__":
    sys.exit(main(prog="run.py"))
