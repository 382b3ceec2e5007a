"""gpu_scan against torch and CuPy in one run: medians of CUDA-event timings after a warm-up.

    python bench.py [--quick]

1-D sums from 2^20 to 2^30 elements, 2-D sums along each dim, sort, argsort and nonzero. Prints
a Markdown table of milliseconds and each yardstick's time over ours. torch has no keys-only
sort: torch.sort computes the indices too, so the keys-only ``sort`` row gives torch more work
than us; the ``sort with indices`` row has both sides return keys and positions. ``--overhead`` instead
measures the host's time per call on a small array, ours and torch's, and where ours goes.
"""

import argparse
import statistics

import torch

import gpu_scan

try:
    import cupy
except ImportError:
    cupy = None


def time_ms(f, iters):
    f()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        f()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def cupy_of(x):
    return cupy.from_dlpack(x) if cupy is not None else None


def cases(quick):
    sizes = [20, 24, 28] if quick else [20, 22, 24, 26, 28, 30]
    for log2 in sizes:
        for dtype in (torch.int32, torch.float32, torch.float64):
            x = torch.ones(1 << log2, device="cuda", dtype=dtype)
            c = cupy_of(x)
            yield (f"cumsum 1-D 2^{log2} {str(dtype)[6:]}", lambda x=x: gpu_scan.cumsum(x, dtype=x.dtype),
                   lambda x=x: torch.cumsum(x, 0, dtype=x.dtype), (lambda c=c: cupy.cumsum(c)) if c is not None else None)
    for shape in ((1 << 20, 8), (8, 1 << 20), (1 << 14, 1 << 14)):
        x = torch.ones(shape, device="cuda", dtype=torch.float32)
        c = cupy_of(x)
        for dim in (0, 1):
            yield (f"cumsum {shape[0]}x{shape[1]} f32 dim {dim}", lambda x=x, d=dim: gpu_scan.cumsum(x, d),
                   lambda x=x, d=dim: torch.cumsum(x, d), (lambda c=c, d=dim: cupy.cumsum(c, axis=d)) if c is not None else None)
    n = 1 << (24 if quick else 28)
    keys = torch.randint(0, 1 << 31, (n,), device="cuda", dtype=torch.int32)
    ck = cupy_of(keys)
    yield (f"sort 2^{n.bit_length() - 1} i32 (keys; torch.sort: and indices)", lambda: gpu_scan.sort(keys),
           lambda: torch.sort(keys, stable=True), (lambda: cupy.sort(ck)) if ck is not None else None)
    # Sorted keys and their positions from each side (CuPy's by argsort and a gather).
    yield (f"sort with indices 2^{n.bit_length() - 1} i32", lambda: gpu_scan.sort(keys, return_indices=True),
           lambda: torch.sort(keys, stable=True),
           (lambda: (lambda p: (ck[p], p))(cupy.argsort(ck))) if ck is not None else None)
    yield (f"argsort 2^{n.bit_length() - 1} i32", lambda: gpu_scan.argsort(keys), lambda: torch.argsort(keys, stable=True),
           (lambda: cupy.argsort(ck)) if ck is not None else None)
    mask = torch.rand(n, device="cuda") < 0.5
    cm = cupy_of(mask)
    yield (f"nonzero 2^{n.bit_length() - 1} half set", lambda: gpu_scan.nonzero(mask), lambda: torch.nonzero(mask),
           (lambda: cupy.flatnonzero(cm)) if cm is not None else None)


def overhead(calls):
    """Microseconds of host time per call on 1024 elements (the device work is far shorter), and
    the functions of ours that take it, by their own time."""
    import cProfile
    import pstats
    import time

    x = torch.ones(1024, device="cuda", dtype=torch.int32)
    for name, f in (("gpu_scan.cumsum", lambda: gpu_scan.cumsum(x, dtype=x.dtype)),
                    ("torch.cumsum", lambda: torch.cumsum(x, 0, dtype=x.dtype))):
        f()
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(calls):
            f()
        torch.cuda.synchronize()
        print(f"{name}: {(time.perf_counter() - t) / calls * 1e6:.1f} us a call")
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        gpu_scan.cumsum(x, dtype=x.dtype)
    prof.disable()
    torch.cuda.synchronize()
    pstats.Stats(prof).sort_stats("tottime").print_stats(15)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer and smaller sizes")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--overhead", action="store_true", help="the host's time per call, and where it goes")
    args = p.parse_args()
    if args.overhead:
        overhead(5000)
        return
    print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}"
          + (f"; CuPy {cupy.__version__}" if cupy is not None else "; no CuPy"))
    print("| workload | gpu_scan ms | torch ms | vs torch | CuPy ms | vs CuPy |")
    print("|---|---|---|---|---|---|")
    for name, ours, theirs, cupys in cases(args.quick):
        t_ours = time_ms(ours, args.iters)
        t_torch = time_ms(theirs, args.iters)
        row = f"| {name} | {t_ours:.3f} | {t_torch:.3f} | {t_torch / t_ours:.2f}x |"
        if cupys is not None:
            t_cupy = time_ms(cupys, args.iters)
            row += f" {t_cupy:.3f} | {t_cupy / t_ours:.2f}x |"
        else:
            row += " – | – |"
        print(row, flush=True)
    print("\ntorch.sort returns the indices too (torch has no keys-only sort): the keys-only sort row "
          "is not like for like against torch; the sort-with-indices row is.")


if __name__ == "__main__":
    main()
