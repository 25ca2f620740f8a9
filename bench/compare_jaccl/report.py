"""What compare-jaccl prints and writes from the runs it read: one table, a CSV, a PNG plot.

Per (op, dtype, bytes) and implementation: the best time per call over every repetition of every
run (best of N: the least disturbed), the median of the runs' medians, the bandwidth (each rank's
input bytes / best time) and, when JACCL ran, "vs JACCL" = JACCL's best time / this best time
(above 1: faster than JACCL). The plot (gnuplot, when installed) draws the bandwidth per size,
one panel per op and dtype, one line per implementation.
"""

import csv
import os
import shutil
import subprocess

from .records import DTYPE_SIZE, OPS

REFERENCE = "mlx-jaccl"
ORDER = ("mlx-jaccl", "mpi-tbrdma", "mlx-mpi")  # the others follow, sorted


class Cell:
    """One implementation at one size, over every run of it."""

    def __init__(self):
        self.best_us = None
        self.medians = []
        self.runs = 0
        self.iters = 0
        self.reps = 0

    def add(self, result):
        self.best_us = result.best_us if self.best_us is None else min(self.best_us,
                                                                       result.best_us)
        self.medians.append(result.median_us)
        self.runs += 1
        self.iters = result.iters
        self.reps += result.reps

    @property
    def median_us(self):
        m = sorted(self.medians)
        n = len(m)
        return m[n // 2] if n % 2 else (m[n // 2 - 1] + m[n // 2]) / 2


class Summary:
    """Cells by (op, dtype, bytes) then implementation; the implementations in table order."""

    def __init__(self, runs):
        self.ranks = runs[0].ranks
        self.cells = {}
        names = set()
        for run in runs:
            names.add(run.impl)
            for key, result in run.results.items():
                self.cells.setdefault(key, {}).setdefault(run.impl, Cell()).add(result)
        self.impls = [i for i in ORDER if i in names] + sorted(names - set(ORDER))
        self.nruns = {i: sum(1 for r in runs if r.impl == i) for i in self.impls}

    def keys(self):
        order = {op: k for k, op in enumerate(OPS)}
        dorder = {d: k for k, d in enumerate(DTYPE_SIZE)}
        return sorted(self.cells, key=lambda k: (order[k[0]], dorder[k[1]], k[2]))

    def sections(self):
        seen = []
        for op, dtype, _ in self.keys():
            if (op, dtype) not in seen:
                seen.append((op, dtype))
        return seen

    def speedup(self, key, impl):
        """JACCL's best time / impl's, or None."""
        cells = self.cells[key]
        if REFERENCE not in cells or impl not in cells or impl == REFERENCE:
            return None
        return cells[REFERENCE].best_us / cells[impl].best_us


def gbps(nbytes, us):
    return nbytes / us / 1e3


def size_text(n):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return "%d %s" % (n >> shift, unit)
    return "%d B" % n


def _columns(s):
    cols = [("size", 9)]
    for impl in s.impls:
        cols += [(impl + " us", max(12, len(impl) + 3)), ("GB/s", 9)]
        if REFERENCE in s.impls and impl != REFERENCE:
            cols.append(("vs JACCL", 9))
    return cols


def _row(s, key):
    cells = s.cells[key]
    row = [size_text(key[2])]
    for impl in s.impls:
        c = cells.get(impl)
        row += ["-", "-"] if c is None else ["%.2f" % c.best_us, "%.3g" % gbps(key[2], c.best_us)]
        if REFERENCE in s.impls and impl != REFERENCE:
            x = s.speedup(key, impl)
            row.append("-" if x is None else "%.2fx" % x)
    return row


def table(s, header_lines):
    """The whole text: header lines, then one block per (op, dtype)."""
    cols = _columns(s)
    out = list(header_lines)
    for op, dtype in s.sections():
        out += ["", "%s, %s (%d rank%s)" % (op, dtype, s.ranks, "" if s.ranks == 1 else "s")]
        out.append("  ".join(name.rjust(w) for name, w in cols))
        for key in [k for k in s.keys() if k[:2] == (op, dtype)]:
            out.append("  ".join(v.rjust(w) for v, (_, w) in zip(_row(s, key), cols)))
    return "\n".join(out) + "\n"


def legend(s):
    runs = ", ".join("%s %d" % (i, s.nruns[i]) for i in s.impls)
    lines = ["times: best per call of the slowest rank over every repetition of every run "
             "(runs: %s); GB/s: each rank's input bytes / that time" % runs]
    if REFERENCE in s.impls:
        lines.append("vs JACCL: JACCL's time / this time (above 1: faster than JACCL)")
    else:
        lines.append("vs JACCL: - (JACCL did not run)")
    return lines


CSV_HEADER = ["op", "dtype", "bytes", "impl", "ranks", "runs", "reps", "iters", "best_us",
              "median_us", "GBps", "speedup_vs_jaccl"]


def write_csv(s, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(CSV_HEADER)
        for key in s.keys():
            for impl in s.impls:
                c = s.cells[key].get(impl)
                if c is None:
                    continue
                x = s.speedup(key, impl)
                w.writerow(list(key) + [impl, s.ranks, c.runs, c.reps, c.iters,
                                        "%.3f" % c.best_us, "%.3f" % c.median_us,
                                        "%.6g" % gbps(key[2], c.best_us),
                                        "" if x is None else "%.4f" % x])


def _plot_script(s, outdir, terminal, title):
    data = os.path.join(outdir, "plot-data")
    os.makedirs(data, exist_ok=True)
    sections = s.sections()
    lines = ["set terminal %s size 1400,%d" % (terminal, 500 * ((len(sections) + 1) // 2)),
             "set output '%s'" % os.path.join(outdir, "plot.png"),
             "set multiplot layout %d,2 title '%s'" % ((len(sections) + 1) // 2, title),
             "set logscale x 2", "set logscale y", "set grid", "set key top left",
             "set termoption noenhanced", "set format x '%.0b %BB'",
             "set xlabel 'bytes per rank'", "set ylabel 'GB/s'"]
    for op, dtype in sections:
        plots = []
        for impl in s.impls:
            path = os.path.join(data, "%s-%s-%s.dat" % (op, dtype, impl))
            with open(path, "w") as f:
                for key in [k for k in s.keys() if k[:2] == (op, dtype)]:
                    c = s.cells[key].get(impl)
                    if c is not None:
                        f.write("%d %.6g\n" % (key[2], gbps(key[2], c.best_us)))
            plots.append("'%s' using 1:2 with linespoints title '%s'" % (path, impl))
        lines += ["set title '%s, %s'" % (op, dtype), "plot " + ", ".join(plots)]
    return "\n".join(lines + ["unset multiplot", ""])


def write_plot(s, outdir, title):
    """plot.png by gnuplot; returns (True, path) or (False, why not)."""
    if shutil.which("gnuplot") is None:
        return False, ("gnuplot not found: no plot (Debian: apt-get install gnuplot-nox; "
                       "macOS: brew install gnuplot); the table and the CSV are written")
    err = ""
    for terminal in ("pngcairo", "png"):
        script = os.path.join(outdir, "plot.gp")
        with open(script, "w") as f:
            f.write(_plot_script(s, outdir, terminal, title))
        p = subprocess.run(["gnuplot", script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        if p.returncode == 0:
            return True, os.path.join(outdir, "plot.png")
        err = p.stdout.strip().splitlines()[-1:] or ["exit %d" % p.returncode]
    return False, "gnuplot failed (%s): no plot; the table and the CSV are written" % err[0]
