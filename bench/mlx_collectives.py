#!/usr/bin/env python3
"""MLX's all_sum and all_gather over float32 and bfloat16, 8 B to MAX, every result checked.

Run by bench/compare-jaccl on every Mac through mlx.launch (`--backend jaccl` or `--backend
mpi`); it uses only MLX's public mlx.core.distributed API. Rank 0 prints the records of
bench/README.md ("tbbench 1 begin|result|end key=value ..."), the same records as
bench/tb_coll_bench.c, so that compare-jaccl reads both the same way.

Sizes, warm-up, repetitions and iteration counts are those of tb_coll_bench.c: sizes MIN,
MIN * FACTOR, ... and MAX (each rank's input, in bytes); per size WARMUP untimed calls, then
REPS repetitions of ITERS calls, ITERS = clamp(SCALE * 2e8 / (bytes + 4096), 1, 1000); a
repetition's time per call is the slowest rank's (each call is evaluated before the next, on
the CPU device, where MLX runs its collectives). Every repetition is verified against the exact
expected values (the small integers of tb_coll_bench.c, exact in bfloat16 whatever the
reduction order); a wrong value ends the run with exit status 1 and no record for that size.

Needs Python 3.9+ and MLX (0.30.1+ for JACCL). Exit status: 0 done, 1 a wrong result,
2 usage or a backend that does not start.
"""

import argparse
import sys
import time

FORMAT_VERSION = 1
ITERS_MAX = 1000
PERIOD = {"float32": 1021, "bfloat16": 16}  # the input values repeat with these periods
BF16_RANKS_MAX = 16  # 16 ranks of values up to 16: sums up to 256, exact in bfloat16
OPS = ("all_sum", "all_gather")
DTYPES = ("float32", "bfloat16")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--backend", required=True, help="mx.distributed.init backend: jaccl, mpi, ...")
    p.add_argument("--impl", help="the name in the records (default mlx-BACKEND)")
    p.add_argument("--min", type=int, default=8, help="smallest size in bytes (8)")
    p.add_argument("--max", type=int, default=256 << 20, help="largest size in bytes (256 MiB)")
    p.add_argument("--factor", type=int, default=4, help="size step (4)")
    p.add_argument("--reps", type=int, default=5, help="repetitions per size (5)")
    p.add_argument("--warmup", type=int, default=2, help="untimed calls per size (2)")
    p.add_argument("--scale", type=float, default=1.0, help="iteration count scale (1.0)")
    p.add_argument("--ops", default=",".join(OPS), help="all_sum,all_gather")
    p.add_argument("--dtypes", default=",".join(DTYPES), help="float32,bfloat16")
    a = p.parse_args(argv)
    a.impl = a.impl or "mlx-" + a.backend
    a.ops = a.ops.split(",")
    a.dtypes = a.dtypes.split(",")
    bad = [x for x in a.ops if x not in OPS] + [x for x in a.dtypes if x not in DTYPES]
    if bad:
        p.error("unknown op or dtype: " + ", ".join(bad))
    if (a.min < 4 or a.min % 4 or a.max < a.min or a.max % 4 or a.max > 1 << 30
            or a.factor < 2 or not 1 <= a.reps <= 100 or a.warmup < 0 or not a.scale > 0):
        p.error("sizes must be multiples of 4 from 4 B to 1 GiB, factor >= 2, "
                "1 to 100 repetitions, scale > 0")
    return a


def sizes(a):
    s = a.min
    while s <= a.max:
        yield s
        s = a.max if s < a.max < s * a.factor else s * a.factor


def iters_for(nbytes, scale):
    n = scale * 2e8 / (nbytes + 4096)
    return 1 if n < 1 else (ITERS_MAX if n > ITERS_MAX else int(n))


class Bench:
    """One process's view: the group, its rank and size, and the typed collectives."""

    def __init__(self, mx, a):
        self.mx = mx
        self.a = a
        self.group = mx.distributed.init(strict=True, backend=a.backend)
        self.rank = self.group.rank()
        self.size = self.group.size()
        self.dtype = {"float32": mx.float32, "bfloat16": mx.bfloat16}

    def values(self, dtype, rank, count):
        """Rank's input: the small integers of tb_coll_bench.c's value_of()."""
        mx = self.mx
        i = mx.arange(count, dtype=mx.int32) % PERIOD[dtype]  # no int32 overflow below
        if dtype == "float32":
            v = (i * 13 + rank * 7) % PERIOD[dtype] + 1
        else:
            v = (i * 7 + rank * 3) % PERIOD[dtype] + 1
        return v.astype(self.dtype[dtype])

    def expected(self, op, dtype, count):
        mx = self.mx
        if op == "all_gather":
            return mx.concatenate([self.values(dtype, r, count) for r in range(self.size)])
        total = mx.zeros((count,), dtype=mx.float32)
        for r in range(self.size):
            total = total + self.values(dtype, r, count).astype(mx.float32)
        return total.astype(self.dtype[dtype])

    def call(self, op, x):
        f = self.mx.distributed.all_sum if op == "all_sum" else self.mx.distributed.all_gather
        return f(x, group=self.group)

    def barrier(self):
        self.mx.eval(self.mx.distributed.all_sum(self.mx.ones((1,)), group=self.group))

    def slowest(self, seconds):
        """The largest of every rank's time (all_gather of one float32 each)."""
        t = self.mx.distributed.all_gather(self.mx.array([seconds], dtype=self.mx.float32),
                                           group=self.group)
        return max(t.tolist())

    def repetition(self, op, x, want, iters):
        """One verified repetition: the slowest rank's time per call (us), None if wrong."""
        mx = self.mx
        self.barrier()
        t0 = time.perf_counter()
        for _ in range(iters):
            y = self.call(op, x)
            mx.eval(y)
        us = (time.perf_counter() - t0) * 1e6 / iters
        ok = bool(mx.array_equal(y, want).item())
        bad = mx.distributed.all_sum(mx.array([0.0 if ok else 1.0], dtype=mx.float32),
                                     group=self.group)
        return self.slowest(us) if bad.item() == 0 else None

    def measure(self, op, dtype, nbytes):
        """Warm-up, repetitions, one record; False after a wrong value."""
        mx = self.mx
        count = nbytes // self.dtype[dtype].size
        iters = iters_for(nbytes, self.a.scale)
        x = self.values(dtype, self.rank, count)
        want = self.expected(op, dtype, count)
        mx.eval(x, want)
        for _ in range(self.a.warmup):
            mx.eval(self.call(op, x))
        t = []
        for _ in range(self.a.reps):
            us = self.repetition(op, x, want, iters)
            if us is None:
                print("mlx_collectives: rank %d: %s %s %d B: wrong result" % (
                    self.rank, op, dtype, nbytes), file=sys.stderr)
                return False
            t.append(us)
        t.sort()
        n = len(t)
        median = t[n // 2] if n % 2 else (t[n // 2 - 1] + t[n // 2]) / 2
        self.record("result", op=op, dtype=dtype, bytes=nbytes, count=count, iters=iters,
                    reps=n, best_us="%.3f" % t[0], median_us="%.3f" % median, verified="yes")
        return True

    def record(self, kind, **fields):
        if self.rank == 0:
            words = ["%s=%s" % (k, v) for k, v in fields.items()]
            print("tbbench %d %s impl=%s %s" % (FORMAT_VERSION, kind, self.a.impl,
                                                " ".join(words)), flush=True)


def run(mx, a):
    try:
        b = Bench(mx, a)
    except Exception as e:  # MLX raises RuntimeError or ValueError when a backend cannot start
        print("mlx_collectives: mx.distributed.init(backend=%r) failed: %s" % (a.backend, e),
              file=sys.stderr)
        return 2
    if "bfloat16" in a.dtypes and b.size > BF16_RANKS_MAX:
        print("mlx_collectives: bfloat16 sums are exact up to %d ranks, not %d"
              % (BF16_RANKS_MAX, b.size), file=sys.stderr)
        return 2
    b.record("begin", ranks=b.size, reps=a.reps, warmup=a.warmup, scale="%g" % a.scale,
             lib="mlx-" + str(mx.__version__), backend=a.backend)
    n = 0
    for op in [o for o in OPS if o in a.ops]:
        for dtype in [d for d in DTYPES if d in a.dtypes]:
            for s in sizes(a):
                if not b.measure(op, dtype, s):
                    return 1
                n += 1
    b.record("end", results=n)
    return 0


def main(argv):
    a = parse_args(argv)
    try:
        import mlx.core as mx
    except ImportError as e:
        print("mlx_collectives: MLX is not installed for %s (%s): pip install mlx"
              % (sys.executable, e), file=sys.stderr)
        return 2
    mx.set_default_device(mx.cpu)
    return run(mx, a)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
