"""The cluster compare-jaccl runs on: what it checks before measuring, and how it reaches hosts.

The MLX hostfile is read by tbrdma's own parser, through tbrdma-doctor (--hostfile and
--mesh-file, --json): the hosts, whether each is reachable and has RDMA, Open MPI and tbrdma on
every host, the cables found, and the cables the hostfile's "rdma" matrix names. compare-jaccl
adds what the doctor does not look at: the matrix against the cables found, pair by pair (JACCL
needs a device for every pair), and macOS and MLX versions, gathered on every host by a small sh
probe sent through the launch agent (ssh, as mpirun and mlx.launch reach the Macs). Every
problem found is a line of the refusal, so one run names all of them.
"""

import json
import os
import shlex
import shutil
import socket
import subprocess

PROBE = r"""
py=$1
echo "os=$(uname -s)"
if command -v sw_vers >/dev/null 2>&1; then
    echo "macos=$(sw_vers -productVersion 2>/dev/null)"
else
    echo "macos=-"
fi
if command -v "$py" >/dev/null 2>&1; then
    "$py" -c 'import mlx.core as mx
print("mlx=" + str(mx.__version__))
try:
    print("jaccl=" + ("yes" if mx.distributed.is_available("jaccl") else "no"))
except TypeError:
    print("jaccl=-")' 2>/dev/null || echo "mlx=-"
else
    echo "mlx=-"
fi
echo "done=yes"
"""


class Refusal(Exception):
    """compare-jaccl will not measure: each line is one problem with its fix."""

    def __init__(self, lines):
        Exception.__init__(self, "\n".join(lines))
        self.lines = lines


class Agent:
    """How hosts are reached: the launch agent (ssh with BatchMode by default) or, for this
    host, sh directly, as mpirun and tbrdma-doctor do."""

    def __init__(self, agent):
        self.words = None
        for alt in (agent or os.environ.get("OMPI_MCA_plm_rsh_agent") or "ssh : rsh").split(":"):
            words = shlex.split(alt)
            if words and shutil.which(words[0]):
                self.words = words
                break
        self.text = agent or "ssh"
        if self.words and os.path.basename(self.words[0]) == "ssh":
            self.words = self.words[:1] + ["-o", "BatchMode=yes", "-o", "ConnectTimeout=10"] + \
                self.words[1:]

    @staticmethod
    def is_local(login):
        if "@" in login:
            return False
        self_name = socket.gethostname()
        return login in ("localhost", "127.0.0.1", self_name, self_name.split(".")[0])

    def command(self, login, shell_cmd):
        """argv running shell_cmd (one string for the remote shell) on login."""
        if self.is_local(login):
            return ["sh", "-c", shell_cmd]
        if self.words is None:
            raise Refusal(["no launch agent found (%s): install ssh, or give --launch-agent"
                           % self.text])
        return self.words + [login, shell_cmd]

    def start(self, login, shell_cmd):
        return subprocess.Popen(self.command(login, shell_cmd), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


# ---- tbrdma-doctor --------------------------------------------------------------------------

def run_doctor(o, hostfile, ompi_hostfile):
    """The doctor's JSON document; a Refusal when it cannot read the hosts or the hostfile."""
    cmd = [o.doctor, "--hostfile", hostfile, "--mesh-file", hostfile, "--json",
           "--write-hostfile", ompi_hostfile, "--timeout", str(o.timeout)]
    if o.launch_agent:
        cmd += ["--launch-agent", o.launch_agent]
    for name, value in o.mca:
        cmd += ["--mca", name, value]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
    except OSError as e:
        raise Refusal(["cannot run %s (%s); fix: build tbrdma (./build.sh) or install it, or "
                       "give --doctor PATH" % (o.doctor, e.strerror)])
    if p.returncode not in (0, 1):
        raise Refusal(["tbrdma-doctor could not check the cluster (exit %d): %s; fix: correct "
                       "the hostfile (MLX's JSON: docs/mesh.md)" % (p.returncode, "; ".join(
                           (p.stderr or p.stdout).strip().splitlines()))])
    try:
        return json.loads(p.stdout)
    except ValueError:
        raise Refusal(["tbrdma-doctor printed no JSON report (exit %d): %s"
                       % (p.returncode, p.stderr.strip())])


def _pairs(cables, index):
    """{(i, j): set of (device on i, device on j)} for i < j, hosts by index."""
    out = {}
    for c in cables:
        a, b = c["a"], c["b"]
        if a["host"] not in index or b["host"] not in index:
            continue
        if index[a["host"]] > index[b["host"]]:
            a, b = b, a
        out.setdefault((index[a["host"]], index[b["host"]]), set()).add((a["device"],
                                                                         b["device"]))
    return out


def _cable_text(names, i, j, cables):
    return " and ".join("%s %s <-> %s %s" % (names[i], da, names[j], db)
                        for da, db in sorted(cables))


def pair_lines(doc, path):
    """The hostfile's rdma matrix against the cables found, one line per pair that differs."""
    mesh = doc.get("mesh_file") or {}
    names = [h["name"] for h in doc["hosts"]]
    index = {n: k for k, n in enumerate(names)}
    found, named = _pairs(doc["cables"], index), _pairs(mesh.get("cables", []), index)
    # a host the doctor has a problem with (unreachable, RDMA off, ...) explains its pairs
    # with no cable found: its line says why, once
    explained = {f["host"] for f in doc["findings"] if f["problem"] and f["host"]}
    lines = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            f, m = found.get((i, j), set()), named.get((i, j), set())
            if m and m <= f:
                continue
            if not f and (not m or names[i] in explained or names[j] in explained):
                continue  # no cable found: the doctor's line says why
            pair = "hosts %s and %s: " % (names[i], names[j])
            if not m:
                what = ("cabled (%s), but the rdma matrix of %s has null for this pair: JACCL "
                        "needs a device for every pair" % (_cable_text(names, i, j, f), path))
            elif not f:
                what = "%s names %s, but tbrdma finds no cable between them" % (
                    path, _cable_text(names, i, j, m))
            else:
                what = "%s names %s, but tbrdma finds %s" % (
                    path, _cable_text(names, i, j, m), _cable_text(names, i, j, f))
            lines.append(pair + what + "; fix: correct the hostfile, or write it from the "
                         "cables found: tbrdma-doctor --hostfile %s --write-mlx-hostfile FILE"
                         % path)
    return lines


def doctor_lines(doc, have_pair_lines):
    """The doctor's problems (its mesh-file lines are said pair by pair when pair_lines are)."""
    return [f["text"] for f in doc["findings"]
            if f["problem"] and not (have_pair_lines and f["check"] == "mesh-file")]


# ---- versions -------------------------------------------------------------------------------

def probe_versions(agent, hosts, python, timeout):
    """({host name: {os, macos, mlx, jaccl}}, lines for the hosts where the probe did not run),
    every host at once."""
    procs = {}
    for h in hosts:
        procs[h["name"]] = agent.start(h["login"], "sh -s -- %s" % shlex.quote(python))
    out, bad = {}, []
    for h in hosts:
        p = procs[h["name"]]
        try:
            text, _ = p.communicate(PROBE.encode(), timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            text, _ = p.communicate()
        words = dict(x.partition("=")[::2] for x in text.decode(errors="replace").splitlines()
                     if "=" in x)
        if words.get("done") != "yes":
            last = text.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
            bad.append("host %s: the version probe did not run (exit %s: %s); fix: make "
                       "'%s %s true' work without a password"
                       % (h["name"], p.returncode, last[0], agent.text, h["login"]))
        out[h["name"]] = words
    return out, bad


def _spread(values):
    """{value: [hosts]} in first-seen order."""
    groups = {}
    for host, v in values:
        groups.setdefault(v, []).append(host)
    return groups


def _differ(what, values, fix):
    groups = _spread(values)
    if len(groups) < 2:
        return []
    return ["%s versions differ: %s; fix: %s" % (what, "; ".join(
        "%s on %s" % (v, ", ".join(hs)) for v, hs in groups.items()), fix)]


def _value(v, absent):
    return absent if v in (None, "", "-") else v


def version_lines(versions, want_mlx, python):
    """Refusal lines: macOS everywhere the same; MLX present, with JACCL, the same everywhere."""
    names = list(versions)
    lines = _differ("macOS", [(h, _value(versions[h].get("macos"), "none")) for h in names],
                    "install the same macOS on every Mac (RDMA between Macs on different "
                    "versions may fail, and the comparison would not be like for like)")
    if not want_mlx:
        return lines
    missing = [h for h in names if _value(versions[h].get("mlx"), None) is None]
    if missing:
        return lines + ["MLX is not installed for %s on %s (%s -c 'import mlx.core' fails); fix: "
                        "pip install mlx there, the same version on every Mac, or run "
                        "compare-jaccl --mpi-only" % (python, ", ".join(missing), python)]
    lines += _differ("MLX", [(h, versions[h]["mlx"]) for h in names],
                     "install the same MLX on every Mac (pip install mlx==VERSION)")
    nojaccl = [h for h in names if versions[h].get("jaccl") == "no"]
    if nojaccl:
        lines.append("MLX on %s has no JACCL backend (mx.distributed.is_available('jaccl') is "
                     "False); fix: MLX 0.30.1 or later on macOS 26.2 or later, on every Mac"
                     % ", ".join(nojaccl))
    return lines


def describe_versions(doc, versions):
    """One line per host: what it runs."""
    out = []
    for h in doc["hosts"]:
        v = versions.get(h["name"], {})
        out.append("%s: %s, macOS %s, MLX %s (JACCL %s), Open MPI %s, tbrdma %s"
                   % (h["name"], _value(v.get("os"), "?"), _value(v.get("macos"), "none"),
                      _value(v.get("mlx"), "not installed"), _value(v.get("jaccl"), "-"),
                      _value(h.get("ompi"), "?"), _value(h.get("tbrdma"), "?")))
    return out


def describe_cables(doc):
    return ["%s %s <-> %s %s (found by %s)" % (c["a"]["host"], c["a"]["device"], c["b"]["host"],
                                               c["b"]["device"], c["source"])
            for c in doc["cables"]]


# ---- files on every host --------------------------------------------------------------------

def copy_to_hosts(agent, hosts, files, remote_dir):
    """Copies each (local path, mode) into remote_dir on every host and here, one host after
    the other (hosts may share a file system); atomically, through a temporary name."""
    logins = [h["login"] for h in hosts]
    if not any(Agent.is_local(x) for x in logins):
        logins.append("localhost")  # mlx.launch looks for the script here too
    for login in logins:
        for path, mode in files:
            name = os.path.basename(path)
            dest = shlex.quote(os.path.join(remote_dir, name))
            tmp = shlex.quote(os.path.join(remote_dir, ".%s.tmp" % name))
            cmd = "mkdir -p %s && cat >%s && chmod %s %s && mv -f %s %s" % (
                shlex.quote(remote_dir), tmp, mode, tmp, tmp, dest)
            with open(path, "rb") as f:
                p = subprocess.run(agent.command(login, cmd), stdin=f, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT)
            if p.returncode != 0:
                raise Refusal(["copying %s to %s:%s failed (exit %d): %s"
                               % (name, login, remote_dir, p.returncode,
                                  p.stdout.decode(errors="replace").strip())])
