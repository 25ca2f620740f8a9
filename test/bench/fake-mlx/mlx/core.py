"""The stand-in's mlx.core (see __init__.py): test-only, not MLX.

Knobs (environment): FAKE_MLX_VERSION (mx.__version__, default 0.0.0+fake),
FAKE_MLX_CORRUPT=OP (that collective returns a wrong first element), FAKE_MLX_INIT_FAIL=1
(mx.distributed.init raises as MLX does when a backend cannot start), FAKE_MLX_NO_JACCL=1
(is_available("jaccl") is False).
"""

import os
import struct
import types

__version__ = os.environ.get("FAKE_MLX_VERSION", "0.0.0+fake")


class Dtype:
    def __init__(self, name, size):
        self.name = name
        self.size = size

    def __repr__(self):
        return "mlx.core." + self.name


float32 = Dtype("float32", 4)
bfloat16 = Dtype("bfloat16", 2)
int32 = Dtype("int32", 4)
cpu = "cpu"


def _round(v, dtype):
    if dtype is int32:
        return int(v)
    if dtype is float32:
        return struct.unpack("<f", struct.pack("<f", float(v)))[0]
    u = struct.unpack("<I", struct.pack("<f", float(v)))[0]  # bfloat16: nearest, ties to even
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("<f", struct.pack("<I", u))[0]


class array:
    def __init__(self, values, dtype=float32):
        self.dtype = dtype
        self.values = [_round(v, dtype) for v in values]

    def _op(self, other, f):
        o = other.values if isinstance(other, array) else [other] * len(self.values)
        return array([f(a, b) for a, b in zip(self.values, o)], self.dtype)

    def __mul__(self, other):
        return self._op(other, lambda a, b: a * b)

    def __add__(self, other):
        return self._op(other, lambda a, b: a + b)

    def __mod__(self, other):
        return self._op(other, lambda a, b: a % b)

    def astype(self, dtype):
        return array(self.values, dtype)

    def tolist(self):
        return list(self.values)

    def item(self):
        assert len(self.values) == 1
        return self.values[0]

    @property
    def size(self):
        return len(self.values)


def arange(n, dtype=float32):
    return array(range(n), dtype)


def zeros(shape, dtype=float32):
    return array([0] * shape[0], dtype)


def ones(shape, dtype=float32):
    return array([1] * shape[0], dtype)


def concatenate(arrays):
    return array([v for a in arrays for v in a.values], arrays[0].dtype)


def array_equal(a, b):
    return array([a.values == b.values], int32)


def eval(*arrays):
    return None


def set_default_device(device):
    return None


class _Group:
    def rank(self):
        return 0

    def size(self):
        return 1


def _collective(name):
    def run(x, group=None, stream=None):
        if os.environ.get("FAKE_MLX_CORRUPT") == name and x.size > 1:
            return array([x.values[0] + 1] + x.values[1:], x.dtype)
        return array(x.values, x.dtype)  # one process: the sum and the gather are the input
    return run


def _init(strict=False, backend="any"):
    if os.environ.get("FAKE_MLX_INIT_FAIL"):
        raise RuntimeError("[%s] Couldn't initialize (fake)" % backend)
    return _Group()


def _is_available(backend="any"):
    return not (backend == "jaccl" and os.environ.get("FAKE_MLX_NO_JACCL"))


distributed = types.SimpleNamespace(init=_init, is_available=_is_available,
                                    all_sum=_collective("all_sum"),
                                    all_gather=_collective("all_gather"))
