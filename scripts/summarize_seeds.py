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
    scripts/summarize_seeds.py papers [RUNS]
        issue #38's table from scripts/reproduce_papers.sh's runs under RUNS (default runs): each row's mean +- sd
        over seeds beside the papers' figures and the goal, and whether the goal is met (exit 1 when a row has no
        runs).
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


def mtl16_seed_averages(sets, model, domains):
    """Per run set, the model's dev accuracy averaged over `domains` (None where a domain has no run)."""
    out = []
    for s in sets:
        accs = [load(f"{s}/{model}/{d}/result.json", "dev_acc") for d in domains]
        out.append(statistics.mean(accs) if accs and None not in accs else None)
    return out


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


MTL16_DOMAINS = ["MR", "apparel", "baby", "books", "camera_photo", "dvd", "electronics", "health_personal_care", "imdb",
                 "kitchen_housewares", "magazines", "music", "software", "sports_outdoors", "toys_games", "video"]
PAPER_MODELS = ["star", "multiscale", "transformer"]


def mean_of(values):
    values = [v for v in values if v is not None]
    return statistics.mean(values) if values else None


def papers(root):
    """Issue #38's table from reproduce_papers.sh's runs: (row, paper, ours, goal, met)."""
    rows = []
    missing = False

    def cell(values):
        n = len([v for v in values if v is not None])
        return f"{mean_sd(values)} ({n} seed{'s' if n > 1 else ''})" if n else "-"

    mtl = {m: mtl16_seed_averages(seeds_of(f"{root}/mtl16-papers"), m, MTL16_DOMAINS) for m in PAPER_MODELS}
    sst = {m: [load(f"{s}/{m}/result.json", "test_acc") for s in seeds_of(f"{root}/sst5-subtrees-papers")]
           for m in PAPER_MODELS}

    def tag_runs(data_set, model, split):  # the run's own metric (F1 for chunks, accuracy for POS) on split
        results = [load_json(f"{s}/result.json") for s in seeds_of(f"{root}/tagging/{data_set}/{model}-papers")]
        return [r.get(f"{split}_{r.get('metric', 'f1')}") if isinstance(r, dict) else None for r in results]

    def ordered(means):  # Star and Multi-Scale ahead of the Transformer
        if None in means.values():
            return "no runs"
        return "yes" if means["star"] > means["transformer"] and means["multiscale"] > means["transformer"] else "no"

    def at_least(value, goal):
        return "no runs" if value is None else ("yes" if 100 * value >= goal else "no")

    means = {m: mean_of(mtl[m]) for m in PAPER_MODELS}
    rows.append(("MTL-16 average, dev (test held back), Star / Multi-Scale / Transformer", "86.98 / 86.34 / 82.78 (test)",
                 " / ".join(cell(mtl[m]) for m in PAPER_MODELS), "Star ≥ 84; Star and Multi-Scale ahead of the Transformer",
                 f"{at_least(means['star'], 84)}; {ordered(means)}"))
    means = {m: mean_of(sst[m]) for m in PAPER_MODELS}
    rows.append(("SST-5 test accuracy (trained on phrases), Star / Multi-Scale / Transformer", "52.9 / 51.9 / 50.4",
                 " / ".join(cell(sst[m]) for m in PAPER_MODELS), "Star ≥ 47", at_least(means["star"], 47)))
    conll = tag_runs("conll", "star", "test")
    rows.append(("CoNLL-2003 test F1, Star (+ CRF, characters)", "91.89 (91.98 with a CRF)", cell(conll), "≥ 89",
                 at_least(mean_of(conll), 89)))
    ewt = tag_runs("ewt", "star", "test")
    rows.append(("UD English EWT UPOS test accuracy, Star", "(PTB: 97.14)", cell(ewt), "≥ 95.5", at_least(mean_of(ewt), 95.5)))
    for data_set, paper, goal in (("resume", "LSTM 91.87", 90), ("weibo", "LSTM 56.75", 45)):
        # The best model is chosen on dev (the protocol), then its test mean is the figure.
        dev = {m: mean_of(tag_runs(data_set, m, "dev")) for m in ("star", "big")}
        chosen = [m for m in dev if dev[m] is not None]
        if not chosen:
            rows.append((f"{data_set.capitalize()} NER test F1, best model on dev", paper, "-", f"≥ {goal}", "no runs"))
            continue
        best = max(chosen, key=lambda m: dev[m])
        test = tag_runs(data_set, best, "test")
        rows.append((f"{data_set.capitalize()} NER test F1, best model on dev", paper, f"{best}: {cell(test)}",
                     f"≥ {goal}", at_least(mean_of(test), goal)))
    for size in ("5k", "10k"):
        sets = seeds_of(f"{root}/mirrored-papers-{size}")
        models = ["transformer", "ms-flex", "ms-hier-s", "ms-hier-s-deep", "star"]
        ks = sorted({int(os.path.basename(p)[1:]) for s in sets for p in glob.glob(f"{s}/*/k*") if os.path.isdir(p)})
        ratio = {(m, k): mean_of([load(f"{s}/{m}/k{k}/result.json", "mse_over_baseline") for s in sets])
                 for m in models for k in ks}
        if not ks or None in ratio.values():
            rows.append((f"Mirrored summation, {size} sequences", "Multi-Scale below the Transformer at every K", "-",
                         "the figure at two sizes", "no runs"))
            continue
        best_ms = {k: min(ratio[(m, k)] for m in models if m.startswith("ms-")) for k in ks}
        shown = "; ".join(f"K={k}: best Multi-Scale {best_ms[k]:.3f}, Transformer {ratio[('transformer', k)]:.3f}" for k in ks)
        held = all(best_ms[k] < ratio[("transformer", k)] for k in ks)
        rows.append((f"Mirrored summation, {size} sequences (test MSE / mean guess, {len(sets)} seeds)",
                     "Multi-Scale below the Transformer at every K", shown, "the paper's order", "yes" if held else "no"))
    print("| result | paper | ours (mean ± sd over seeds) | goal | met |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
        missing |= r[4] == "no runs" or "no runs" in r[4]
    return 1 if missing else 0


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "papers":
        sys.exit(papers(sys.argv[2] if len(sys.argv) > 2 else "runs"))
    if len(sys.argv) < 3 or sys.argv[1] not in ("mtl16", "sst", "tag", "mirrored"):
        sys.exit(__doc__)
    if sys.argv[1] == "tag":
        sys.exit(tag(sys.argv[2:]))
    if sys.argv[1] == "mirrored":
        sys.exit(mirrored(sys.argv[2], sys.argv[3:] or ["transformer", "ms-flex", "ms-hier-s", "ms-hier-s-deep", "star"]))
    kind, prefix, models = sys.argv[1], sys.argv[2], sys.argv[3:] or ["star", "transformer", "multiscale"]
    (mtl16 if kind == "mtl16" else sst)(prefix, models)
