"""The benchmark records of bench/README.md, read back: "tbbench 1 KIND key=value ...".

bench/tb_coll_bench.c (MPI) and bench/mlx_collectives.py (MLX) print them on rank 0. A run's
output (what mpirun or mlx.launch printed, their own lines included) holds one begin record, its
result records, then one end record. Lines that do not start with "tbbench" are the launchers'
and are ignored. Any record that is not exactly right refuses the whole run, naming the file and
the line: a comparison built on a truncated, unverified or garbled run would mislead.
"""

import math
import re

VERSION = "1"
KINDS = ("begin", "result", "end")
OPS = ("all_sum", "all_gather")
DTYPE_SIZE = {"float32": 4, "bfloat16": 2}
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")  # impl and lib values


class RecordError(Exception):
    """A run's output that cannot be used; the text names the file and line."""


class Result:
    """One measured size: op, dtype, bytes (each rank's input), count, iters, reps, times."""

    KEYS = ("op", "dtype", "bytes", "count", "iters", "reps", "best_us", "median_us")

    def __init__(self, f):
        for k in self.KEYS:
            setattr(self, k, f[k])

    @property
    def key(self):
        return (self.op, self.dtype, self.bytes)


class Run:
    """One run of one implementation: its begin fields and its results by (op, dtype, bytes)."""

    KEYS = ("impl", "ranks", "reps", "warmup", "scale", "lib")

    def __init__(self, path, begin):
        for k in self.KEYS:
            setattr(self, k, begin[k])
        self.path = path
        self.results = {}


def _int(v, low):
    if not re.match(r"^[0-9]+$", v) or int(v) < low:
        raise ValueError("an integer >= %d" % low)
    return int(v)


def _positive(v):
    try:
        x = float(v)
    except ValueError:
        x = float("nan")
    if not math.isfinite(x) or x <= 0:
        raise ValueError("a positive number")
    return x


def _one_of(choices):
    def check(v):
        if v not in choices:
            raise ValueError("one of " + ", ".join(choices))
        return v
    return check


def _name(v):
    if not NAME_RE.match(v):
        raise ValueError("a name of letters, digits and _.+-")
    return v


def _yes(v):
    if v != "yes":
        raise ValueError("yes (a result that was not verified is no result)")
    return v


FIELDS = {
    "begin": {"impl": _name, "ranks": lambda v: _int(v, 1), "reps": lambda v: _int(v, 1),
              "warmup": lambda v: _int(v, 0), "scale": _positive, "lib": _name},
    "result": {"impl": _name, "op": _one_of(OPS), "dtype": _one_of(tuple(DTYPE_SIZE)),
               "bytes": lambda v: _int(v, 1), "count": lambda v: _int(v, 1),
               "iters": lambda v: _int(v, 1), "reps": lambda v: _int(v, 1),
               "best_us": _positive, "median_us": _positive, "verified": _yes},
    "end": {"impl": _name, "results": lambda v: _int(v, 0)},
}


def _fields(kind, words):
    """key=value words to a dict of checked values; later versions may add keys (kept as text)."""
    raw = {}
    for w in words:
        k, eq, v = w.partition("=")
        if not eq or not k or not v:
            raise ValueError("'%s' is not key=value" % w)
        if k in raw:
            raise ValueError("%s given twice" % k)
        raw[k] = v
    out = dict(raw)
    for k, check in FIELDS[kind].items():
        if k not in raw:
            raise ValueError("no %s= in the %s record" % (k, kind))
        try:
            out[k] = check(raw[k])
        except ValueError as e:
            raise ValueError("%s=%s: expected %s" % (k, raw[k], e))
    return out


def _check_result(run, f):
    if f["impl"] != run.impl:
        raise ValueError("impl=%s in a run of %s" % (f["impl"], run.impl))
    if f["bytes"] != f["count"] * DTYPE_SIZE[f["dtype"]]:
        raise ValueError("bytes=%d is not count=%d %s elements of %d bytes"
                         % (f["bytes"], f["count"], f["dtype"], DTYPE_SIZE[f["dtype"]]))
    if f["reps"] != run.reps:
        raise ValueError("reps=%d, the begin record says %d" % (f["reps"], run.reps))
    if f["median_us"] < f["best_us"]:
        raise ValueError("median_us=%g is below best_us=%g" % (f["median_us"], f["best_us"]))
    r = Result(f)
    if r.key in run.results:
        raise ValueError("%s %s %d bytes measured twice" % r.key)
    run.results[r.key] = r


def _record(run, kind, f, ended):
    """Applies one record to the run so far (None before begin); returns the run."""
    if ended:
        raise ValueError("a %s record after the end record" % kind)
    if kind == "begin":
        if run is not None:
            raise ValueError("a second begin record")
        return Run(None, f)
    if run is None:
        raise ValueError("a %s record before the begin record" % kind)
    if kind == "result":
        _check_result(run, f)
    elif f["impl"] != run.impl or f["results"] != len(run.results):
        raise ValueError("the end record says %s ran %d results, but %s printed %d"
                         % (f["impl"], f["results"], run.impl, len(run.results)))
    return run


def parse_run(text, path):
    """The Run in one output; raises RecordError naming PATH:LINE."""
    run, ended, last = None, False, 0
    for n, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if not words or words[0] != "tbbench":
            continue
        last = n
        try:
            if len(words) < 3:
                raise ValueError("expected 'tbbench VERSION KIND key=value ...'")
            if words[1] != VERSION:
                raise ValueError("format version %s; this compare-jaccl reads version %s"
                                 % (words[1], VERSION))
            if words[2] not in KINDS:
                raise ValueError("unknown record kind %s" % words[2])
            run = _record(run, words[2], _fields(words[2], words[3:]), ended)
            ended = words[2] == "end"
        except ValueError as e:
            raise RecordError("%s:%d: %s" % (path, n, e))
    if run is None:
        raise RecordError("%s: no tbbench records: the run printed none (see the log)" % path)
    if not ended:
        raise RecordError("%s:%d: no end record after this line: the run stopped early"
                          % (path, last))
    run.path = path
    return run


def check_same_ranks(runs):
    """Every run must have had the same number of ranks."""
    for r in runs[1:]:
        if r.ranks != runs[0].ranks:
            raise RecordError("%s ran %s on %d ranks, but %s ran %s on %d: not comparable"
                              % (r.path, r.impl, r.ranks, runs[0].path, runs[0].impl,
                                 runs[0].ranks))
