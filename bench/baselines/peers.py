"""What a Python user would reach for, on the same GPU in the same run as gpu-scan:
torch.cumsum and cupy.cumsum of 1-D arrays, and torch.cumsum along either axis of 2-D tensors.

    python3 peers.py scans [--log2 20,24,28,30] > peers.csv
    python3 peers.py batched ROWSxCOLS ... > peers-batched.csv

Every time is the median of 20 CUDA-event timings after 3 warm-ups. CSV on stdout:
lib,type,n,ms (scans) and lib,shape,dim,ms,type (batched).
"""
import argparse

import torch


def median_ms(f, iters=20):
    for _ in range(3):
        f()
    times = []
    for _ in range(iters):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        f()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


TYPES = {"u8": torch.uint8, "i32": torch.int32, "f32": torch.float32, "i64": torch.int64, "f64": torch.float64}


def scans(log2s):
    import cupy

    print("lib,type,n,ms")
    for name, dtype in TYPES.items():
        for e in log2s:
            n = 1 << e
            if dtype.itemsize * n * 3 > torch.cuda.mem_get_info()[0]:
                continue
            x = torch.ones(n, dtype=dtype, device="cuda")
            out = torch.empty(n, dtype=torch.int64 if name == "u8" else dtype, device="cuda")
            print(f"torch,{name},{n},{median_ms(lambda: torch.cumsum(x, 0, out=out)):.5f}", flush=True)
            cx = cupy.asarray(x)
            print(f"cupy,{name},{n},{median_ms(lambda: cupy.cumsum(cx)):.5f}", flush=True)
            del x, out, cx
            torch.cuda.empty_cache()


def batched(shapes):
    print("lib,shape,dim,ms,type")
    for shape in shapes:
        rows, cols = (int(v) for v in shape.split("x"))
        x = torch.rand(rows, cols, dtype=torch.float32, device="cuda")
        for dim in (0, 1):
            # The outer axis of very narrow, very tall matrices takes seconds per call in torch.
            if dim == 0 and cols <= 8 and rows > 1 << 22:
                continue
            ms = median_ms(lambda: torch.cumsum(x, dim=dim))
            print(f"torch,{rows}x{cols},{dim},{ms:.5f},f32", flush=True)
        del x
        torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["scans", "batched"])
    ap.add_argument("shapes", nargs="*")
    ap.add_argument("--log2", default="20,24,28,30")
    args = ap.parse_args()
    if args.what == "scans":
        scans([int(s) for s in args.log2.split(",")])
    else:
        batched(args.shapes)


if __name__ == "__main__":
    main()
