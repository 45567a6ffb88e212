"""A curve as a markdown table (points, then the fits) and as a PNG plot (matplotlib, one panel per
metric, min-max as error bars)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.curves.model import Curve
from benchmarks.report import fmt_num, fmt_stat

COLOURS = {"ours": "#1f77b4", "official": "#d62728", "fastmcp": "#2ca02c"}


def markdown(curve: Curve) -> str:
    peers_of = {m.name: list(m.series) for m in curve.metrics}
    header = [curve.x_label]
    for metric in curve.metrics:
        header += [f"{metric.name}, {peer} ({metric.unit})" for peer in peers_of[metric.name]]
    lines = [f"#### {curve.title}", "", _row(header), _row(["---"] * len(header))]
    for i, x in enumerate(curve.xs):
        cells = [fmt_num(x)]
        for metric in curve.metrics:
            cells += [fmt_stat(metric.series[peer][i]) for peer in peers_of[metric.name]]
        lines.append(_row(cells))
    fits = curve.fits()
    if fits:
        lines += ["", _row(["fit", "peer", "per-unit cost", "R²", "growth"]), _row(["---"] * 5)]
        for metric in curve.metrics:
            for peer in metric.series:
                found = fits.get((metric.name, peer))
                if found is None:
                    continue
                cost = f"{fmt_num(found.slope * metric.per_unit_scale)} {metric.per_unit}"
                lines.append(_row([metric.name, peer, cost, f"{found.r2:.3f}", found.verdict]))
    if curve.notes:
        lines += [""] + [f"* {note}" for note in curve.notes]
    return "\n".join(lines) + "\n"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def plot(curve: Curve, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = len(curve.metrics)
    columns = 2 if panels == 4 else panels
    rows = -(-panels // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(5.2 * columns, 4.0 * rows), squeeze=False)
    spread = max(curve.xs) / min(curve.xs) if min(curve.xs) > 0 else 1
    for ax, metric in zip(axes.flat, curve.metrics, strict=True):
        for peer, stats in metric.series.items():
            points = [(x, s) for x, s in zip(curve.xs, stats, strict=True) if s is not None]
            if not points:
                continue
            xs = [x for x, _ in points]
            ys = [s.median for _, s in points]
            err = [[s.median - s.min for _, s in points], [s.max - s.median for _, s in points]]
            ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=peer, color=COLOURS.get(peer))
        if spread >= 50:
            ax.set_xscale("log")
        if metric.log_y:
            ax.set_yscale("log")
        ax.set_xlabel(curve.x_label)
        ax.set_ylabel(f"{metric.name} ({metric.unit})")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle(curve.title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
