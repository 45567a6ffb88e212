"""Scaling curves: how memory and time grow with idle sessions, tools, payload size, calls in flight
and workers, ours beside the official SDK and FastMCP in the same run.

    .venv/bin/python -m benchmarks.curves [--quick | --smoke] [--only sessions,tools,...] [--out DIR]

(``python -m benchmarks`` runs them too, as its ``curves`` section.) Each curve gives a markdown table
(median [min-max] per point), a line fit per series (per-unit cost, R², and a verdict on linearity)
and a PNG plot, written to ``benchmarks/results/curves/`` unless ``--out`` says otherwise.
"""
