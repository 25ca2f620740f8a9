"""The runs compare-jaccl makes: tbrdma's MPI program and MLX's script, launched, logged, read.

  mlx-jaccl   mlx.launch --backend jaccl, bench/mlx_collectives.py (MLX over JACCL)
  mpi-tbrdma  mpirun with only tbrdma between Macs (pml ob1, btl self,tbrdma), tb_coll_bench
  mlx-mpi     mlx.launch --backend mpi with the same MCA parameters: MLX over Open MPI over
              tbrdma, the same script as mlx-jaccl (an MLX program switches transports unchanged)

Every run names the MLX hostfile as tbrdma's mesh file (btl_tbrdma_mesh_file), so both stacks
use the same cables. mpirun is a command line with {hostfile} and {np} (--mpirun): the real
one on Macs, `tbcluster mpirun` on the simulated ones; everything else is the same code.
"""

import os
import shlex
import signal
import subprocess
import time

from .records import RecordError, parse_run

IMPLS = ("mlx-jaccl", "mpi-tbrdma", "mlx-mpi")
DEFAULT_MPIRUN = "mpirun --hostfile {hostfile} --map-by node -np {np}"


class RunFailed(Exception):
    """A run that did not give a full, verified set of results; the text says where to look."""


def build_mpi_program(o, src, outdir):
    os.makedirs(outdir, exist_ok=True)
    out = os.path.join(outdir, "tb_coll_bench")
    cmd = shlex.split(o.mpicc) + ["-O2", "-Wall", "-o", out, src]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
    except OSError as e:
        raise RunFailed("cannot run %s (%s): install Open MPI, or give --mpicc CMD"
                        % (o.mpicc, e.strerror))
    if p.returncode != 0:
        raise RunFailed("%s does not build with %s:\n%s" % (src, o.mpicc, p.stdout))
    return out


def bench_args(o, impl):
    return ["--impl", impl, "--min", str(o.min_bytes), "--max", str(o.max_bytes), "--factor",
            str(o.factor), "--reps", str(o.reps), "--warmup", str(o.warmup), "--scale",
            "%g" % o.scale, "--ops", o.ops, "--dtypes", o.dtypes]


def tbrdma_mca(o, remote):
    """tbrdma alone between Macs, the MLX hostfile as its mesh file, then the user's --mca."""
    return [("pml", "ob1"), ("btl", "self,tbrdma"),
            ("btl_tbrdma_mesh_file", os.path.join(remote, "hostfile.json"))] + list(o.mca)


def mpi_command(o, np, ompi_hostfile, remote):
    cmd = shlex.split(o.mpirun.format(hostfile=shlex.quote(ompi_hostfile), np=np))
    for name, value in tbrdma_mca(o, remote):
        cmd += ["--mca", name, value]
    return cmd + [os.path.join(remote, "tb_coll_bench")] + bench_args(o, "mpi-tbrdma")


def mlx_command(o, backend, remote):
    cmd = shlex.split(o.mlx_launch) + ["--backend", backend, "--hostfile",
                                       os.path.join(remote, "hostfile.json"), "--python",
                                       o.python]
    if backend == "mpi":
        for name, value in tbrdma_mca(o, remote):
            cmd += ["--mpi-arg", "--mca %s %s" % (shlex.quote(name), shlex.quote(value))]
    return cmd + ["--", os.path.join(remote, "mlx_collectives.py"), "--backend", backend] + \
        bench_args(o, "mlx-" + backend)


def command_for(o, impl, np, ompi_hostfile, remote):
    if impl == "mpi-tbrdma":
        return mpi_command(o, np, ompi_hostfile, remote)
    return mlx_command(o, impl.split("-", 1)[1], remote)


def run_logged(cmd, log, timeout):
    """Runs cmd with its output in log (after a "$ cmd" line); returns (exit status, text).
    A run past its timeout is killed with its whole process group (status 124)."""
    with open(log, "w") as f:
        f.write("$ %s\n" % " ".join(shlex.quote(c) for c in cmd))
        f.flush()
        try:
            p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=f,
                                 stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as e:
            f.write("compare-jaccl: cannot run %s: %s\n" % (cmd[0], e.strerror))
            return 127, "cannot run %s: %s\n" % (cmd[0], e.strerror)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            rc = 124
        except KeyboardInterrupt:
            os.killpg(p.pid, signal.SIGTERM)
            raise
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    with open(log, errors="replace") as f:
        return rc, f.read()


def one_run(o, impl, label, cmd, log, nhosts):
    """Launches one run and reads its records; RunFailed unless all is there and verified."""
    t0 = time.time()
    rc, text = run_logged(cmd, log, o.run_timeout)
    lines = text.rstrip().splitlines()
    own = [x for x in lines if x.startswith(("tb_coll_bench:", "mlx_collectives:"))][:5]
    tail = "\n".join("  | " + x for x in own + (["  ..."] if own else []) + lines[-15:])
    if rc != 0:
        raise RunFailed("%s (%s) failed: exit %d%s; last lines of %s:\n%s"
                        % (label, impl, rc, " (timed out)" if rc == 124 else "", log, tail))
    try:
        run = parse_run(text, log)
    except RecordError as e:
        raise RunFailed("%s (%s): %s; last lines:\n%s" % (label, impl, e, tail))
    if run.ranks != nhosts:
        raise RunFailed("%s (%s) ran %d ranks, expected one per host (%d): see %s"
                        % (label, impl, run.ranks, nhosts, log))
    print("compare-jaccl: %s: %s, %d results in %.0f s (%s)"
          % (label, impl, len(run.results), time.time() - t0, run.lib), flush=True)
    return run


def interleaved(o, impls, nhosts, ompi_hostfile, remote, logdir):
    """Every implementation once per round, rounds one after the other: the runs of each see
    the same cluster at about the same time."""
    os.makedirs(logdir, exist_ok=True)
    runs = []
    for r in range(1, o.rounds + 1):
        for impl in impls:
            log = os.path.join(logdir, "round%d-%s.log" % (r, impl))
            cmd = command_for(o, impl, nhosts, ompi_hostfile, remote)
            runs.append(one_run(o, impl, "round %d/%d" % (r, o.rounds), cmd, log, nhosts))
    return runs
