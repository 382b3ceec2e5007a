"""torch.cumsum along either axis of 2-D tensors, for the batched-scan comparison.

Runs on the GPU machine (PyTorch needed), in the same job as `host batched`, so the ratios compare
timings of one run:  python3 tools/peers_batched.py > peers-batched.csv
Each figure is the median of 20 CUDA-event timings after 3 warm-ups. Output CSV:
lib,shape,dim,type,ms
"""
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


def main():
    print("lib,shape,dim,type,ms")
    # The outer axis of (33554432, 8) would take seconds per call, so only its rows are timed.
    for rows, cols, dims in [
        (1048576, 8, (0, 1)),
        (16384, 16384, (0, 1)),
        (33554432, 8, (1,)),
        (1048576, 256, (0, 1)),
        (256, 1048576, (0, 1)),
    ]:
        x = torch.rand(rows, cols, dtype=torch.float32, device="cuda")
        for dim in dims:
            ms = median_ms(lambda: torch.cumsum(x, dim=dim))
            print(f"torch,{rows}x{cols},{dim},f32,{ms:.5f}", flush=True)


if __name__ == "__main__":
    main()
