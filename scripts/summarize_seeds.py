#!/usr/bin/env python3
"""Mean and standard deviation over seeds of the runs reproduce_classification.sh writes (issue #38 item 4).

    scripts/summarize_seeds.py mtl16 PREFIX [MODEL ...]
        PREFIX-s1, PREFIX-s2, ... are run sets (runs/mtl16-new-s1/star/books/result.json): per domain the mean
        dev accuracy over seeds, then per model the 16-domain average of each seed and their mean +- sd, and the
        runs that stayed near the majority rate (dev accuracy under 0.6: a stuck start).
    scripts/summarize_seeds.py sst PREFIX [MODEL ...]
        PREFIX-s1/MODEL/result.json ...: test and dev accuracy per seed, mean +- sd.

The standard deviation is the sample one (n - 1). Reads only result.json's dev_acc / test_acc; a missing run
is shown as "-" and left out of the means (the count says how many there were).
"""
import glob
import json
import os
import statistics
import sys


def seeds_of(prefix):
    found = sorted(glob.glob(prefix + "-s*"), key=lambda p: int(p.rsplit("-s", 1)[1]) if p.rsplit("-s", 1)[1].isdigit() else 0)
    return [p for p in found if p.rsplit("-s", 1)[1].isdigit()]


def load(path, key):
    try:
        with open(path) as f:
            return json.load(f).get(key)
    except (OSError, ValueError):
        return None


def mean_sd(values):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    if len(values) == 1:
        return f"{100 * values[0]:.2f}"
    return f"{100 * statistics.mean(values):.2f} ± {100 * statistics.stdev(values):.2f}"


def mtl16(prefix, models):
    sets = seeds_of(prefix)
    if not sets:
        sys.exit(f"summarize_seeds: no run sets {prefix}-s*")
    domains = sorted({os.path.basename(os.path.dirname(p))
                      for s in sets for p in glob.glob(f"{s}/*/*/result.json")})
    print("| domain | " + " | ".join(models) + " |")
    print("|---|" + "---:|" * len(models))
    per_seed = {m: {s: [] for s in sets} for m in models}
    stuck = []
    for d in domains:
        cells = []
        for m in models:
            accs = []
            for s in sets:
                a = load(f"{s}/{m}/{d}/result.json", "dev_acc")
                per_seed[m][s].append(a)
                if a is not None:
                    accs.append(a)
                    if a < 0.6:
                        stuck.append(f"{m} {d} {os.path.basename(s)} {100 * a:.1f}")
            cells.append(mean_sd(accs))
        print(f"| {d} | " + " | ".join(cells) + " |")
    averages = []
    for m in models:
        seed_avgs = []
        for s in sets:
            accs = [a for a in per_seed[m][s] if a is not None]
            if len(accs) == len(domains) and accs:
                seed_avgs.append(statistics.mean(accs))
        averages.append(mean_sd(seed_avgs) + f" ({len(seed_avgs)} seeds: "
                        + ", ".join(f"{100 * a:.2f}" for a in seed_avgs) + ")")
    print("| **average** | " + " | ".join(averages) + " |")
    print()
    print("runs under 0.6 dev accuracy: " + ("; ".join(stuck) if stuck else "none"))


def sst(prefix, models):
    sets = seeds_of(prefix)
    if not sets:
        sys.exit(f"summarize_seeds: no run sets {prefix}-s*")
    print("| model | test per seed | test | dev |")
    print("|---|---|---:|---:|")
    for m in models:
        test = [load(f"{s}/{m}/result.json", "test_acc") for s in sets]
        dev = [load(f"{s}/{m}/result.json", "dev_acc") for s in sets]
        shown = ", ".join("-" if t is None else f"{100 * t:.2f}" for t in test)
        print(f"| {m} | {shown} | {mean_sd(test)} | {mean_sd(dev)} |")


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("mtl16", "sst"):
        sys.exit(__doc__)
    kind, prefix, models = sys.argv[1], sys.argv[2], sys.argv[3:] or ["star", "transformer", "multiscale"]
    (mtl16 if kind == "mtl16" else sst)(prefix, models)
