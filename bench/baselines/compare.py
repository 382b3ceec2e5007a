"""Two builds of the CLI side by side, command by command, in one run: a refactor's before and after.

    python3 compare.py OLD NEW RESULTS COMMAND...

Each command runs with OLD, then with NEW. `bench` commands are compared row by row (median ms
of each configuration), the others by their `time:` line (median ms). The NEW runs also leave
their results for the report: the (first) sweep in RESULTS/scan, records in RESULTS/apps.csv and
RESULTS/batched.csv, with CUB's times from RESULTS/cub35.csv where it exists. Prints a Markdown
table: the command, both times, and NEW's time over OLD's.
"""
import os
import re
import subprocess
import sys
import tempfile

TIME = re.compile(r"^time: ([0-9.]+) ms")


def run(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    return out.returncode, out.stdout + out.stderr


def bench_rows(text):
    """(algorithm, type, op, n) -> ms of a `bench` table."""
    rows = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 9 and f[3].isdigit() and re.match(r"^[0-9.]+$", f[4]):
            rows[(f[0], f[1], f[2], int(f[3]))] = float(f[4])
    return rows


def main():
    old, new, results = sys.argv[1:4]
    os.makedirs(results, exist_ok=True)
    cub = os.path.join(results, "cub35.csv")
    print("| command | before ms | after ms | after / before |")
    print("|---|---|---|---|")
    worst = 0.0
    benches = 0
    for command in sys.argv[4:]:
        args = command.split()
        if args[0] == "bench":
            # The first sweep is the report's; any later one keeps its files in a folder of its own.
            benches += 1
            folder = "scan" if benches == 1 else f"scan-{benches}"
            extra = ["--out", os.path.join(results, folder)] + (["--baseline", cub] if os.path.exists(cub) else [])
            # OLD's bench files go to a folder of their own, removed after, so two bench
            # commands never meet there.
            with tempfile.TemporaryDirectory(prefix="compare-old-") as scratch:
                rc_old, out_old = run([old] + args + ["--out", scratch])
            rc_new, out_new = run([new] + args + extra)
        else:
            extra = ["--baseline", cub] if args[0] in ("compact", "sort") and os.path.exists(cub) else []
            record = ["--record", os.path.join(results, "batched.csv" if args[0] == "batched" else "apps.csv")]
            rc_old, out_old = run([old] + args)
            rc_new, out_new = run([new] + record + args + extra)
        if rc_old != 0 or rc_new != 0:
            print(f"| `{command}` | exit {rc_old} | exit {rc_new} | FAILED |")
            sys.stderr.write(out_old[-2000:] + out_new[-2000:])
            continue
        if args[0] == "bench":
            before, after = bench_rows(out_old), bench_rows(out_new)
            pairs = [(f"{k[1]} {k[2]} n={k[3]}", before[k], after[k]) for k in sorted(after) if k in before]
        else:
            t_old = [float(m.group(1)) for m in map(TIME.match, out_old.splitlines()) if m]
            t_new = [float(m.group(1)) for m in map(TIME.match, out_new.splitlines()) if m]
            pairs = [(command, t_old[0], t_new[0])] if t_old and t_new else []
        for what, b, a in pairs:
            worst = max(worst, a / b)
            print(f"| `{what}` | {b:.4f} | {a:.4f} | {a / b:.3f} |", flush=True)
    print(f"\nslowest after / before: {worst:.3f}")


if __name__ == "__main__":
    main()
