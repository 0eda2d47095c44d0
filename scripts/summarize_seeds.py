#!/usr/bin/env python3
"""Mean and standard deviation over seeds of the runs reproduce_classification.sh writes (issue #38 item 4).

    scripts/summarize_seeds.py mtl16 PREFIX [MODEL ...]
        PREFIX-s1, PREFIX-s2, ... are run sets (runs/mtl16-new-s1/star/books/result.json): per domain the mean
        dev accuracy over seeds, then per model the 16-domain average of each seed and their mean +- sd, and the
        runs that stayed near the majority rate (dev accuracy under 0.6: a stuck start).
    scripts/summarize_seeds.py sst PREFIX [MODEL ...]
        PREFIX-s1/MODEL/result.json ...: test and dev accuracy per seed, mean +- sd.
    scripts/summarize_seeds.py tag PREFIX [PREFIX ...]
        PREFIX-s1/result.json ... (scripts/reproduce_tagging.sh's runs/tagging/SET/MODEL-sN): a row per prefix
        with the test figure per seed, test and dev mean +- sd, and the train seconds per run (F1 for chunk
        tags, token accuracy for POS: result.json's metric).
    scripts/summarize_seeds.py mirrored PREFIX [MODEL ...]
        PREFIX-s1/MODEL/kK/result.json ... (scripts/reproduce_mirrored_sum.sh with SEED and OUT): per model and K
        the test MSE over the mean-guess baseline, mean +- sd over seeds, and per K the best model of each seed.

The standard deviation is the sample one (n - 1). Reads only result.json's dev_ / test_ figures (and train_seconds); a missing run
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


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def load(path, key):
    result = load_json(path)
    return result.get(key) if isinstance(result, dict) else None


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


def tag(prefixes):
    print("| runs | metric | test per seed | test | dev | train s |")
    print("|---|---|---|---:|---:|---:|")
    missing = False
    for prefix in prefixes:
        sets = seeds_of(prefix)
        if not sets:
            print(f"| {prefix} | - | no runs | - | - | - |")
            missing = True
            continue
        results = [load_json(f"{s}/result.json") for s in sets]
        metric = next((r.get("metric") for r in results if r), "f1")
        test = [r.get(f"test_{metric}") if r else None for r in results]
        dev = [r.get(f"dev_{metric}") if r else None for r in results]
        seconds = [r.get("train_seconds") for r in results if r and r.get("train_seconds") is not None]
        shown = ", ".join("-" if t is None else f"{100 * t:.2f}" for t in test)
        span = f"{min(seconds):.0f}-{max(seconds):.0f}" if seconds else "-"
        print(f"| {prefix} | {metric} | {shown} | {mean_sd(test)} | {mean_sd(dev)} | {span} |")
        missing |= None in test
    return 1 if missing else 0


def mirrored(prefix, models):
    sets = seeds_of(prefix)
    if not sets:
        sys.exit(f"summarize_seeds: no run sets {prefix}-s*")
    ks = sorted({int(os.path.basename(p)[1:]) for s in sets for p in glob.glob(f"{s}/*/k*") if os.path.isdir(p)})
    ratio = {(m, k): [load(f"{s}/{m}/k{k}/result.json", "mse_over_baseline") for s in sets] for m in models for k in ks}
    print(f"Test MSE over the mean-guess baseline, mean ± sd over {len(sets)} seeds ({', '.join(os.path.basename(s) for s in sets)}):")
    print()
    print("| model | " + " | ".join(f"K={k}" for k in ks) + " |")
    print("|---|" + "---:|" * len(ks))
    for m in models:
        cells = []
        for k in ks:
            values = [v for v in ratio[(m, k)] if v is not None]
            if not values:
                cells.append("-")
            elif len(values) == 1:
                cells.append(f"{values[0]:.3f} (1 seed)")
            else:
                cells.append(f"{statistics.mean(values):.3f} ± {statistics.stdev(values):.3f}")
        print(f"| {m} | " + " | ".join(cells) + " |")
    print()
    for k in ks:
        best = []
        for i, s in enumerate(sets):
            runs = [(ratio[(m, k)][i], m) for m in models if ratio[(m, k)][i] is not None]
            best.append(f"{os.path.basename(s)} {min(runs)[1]}" if runs else f"{os.path.basename(s)} -")
        print(f"K={k}: lowest per seed: " + ", ".join(best))
    return 1 if any(v is None for values in ratio.values() for v in values) else 0


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("mtl16", "sst", "tag", "mirrored"):
        sys.exit(__doc__)
    if sys.argv[1] == "tag":
        sys.exit(tag(sys.argv[2:]))
    if sys.argv[1] == "mirrored":
        sys.exit(mirrored(sys.argv[2], sys.argv[3:] or ["transformer", "ms-flex", "ms-hier-s", "ms-hier-s-deep", "star"]))
    kind, prefix, models = sys.argv[1], sys.argv[2], sys.argv[3:] or ["star", "transformer", "multiscale"]
    (mtl16 if kind == "mtl16" else sst)(prefix, models)
