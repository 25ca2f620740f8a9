"""A stand-in for MLX used ONLY by test/bench/mlx_script.sh: MLX cannot be installed here.

It is not MLX and measures nothing. It implements just the part of MLX's public API that
bench/mlx_collectives.py calls, on Python lists, with MLX's semantics for a group of one
process (what mx.distributed.init returns when this process is the only rank: all_sum and
all_gather return their input), so that the script's control flow, its verification and the
records it prints can be run and read back. See core.py for the knobs a test turns.
"""
