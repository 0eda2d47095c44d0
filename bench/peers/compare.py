"""Ratios of the peers' times to topo-bench's on the same names and shapes, written as a markdown section of
the --doc file (run.sh: docs/performance/peers.md) between the markers <!-- peers:begin --> and
<!-- peers:end --> (replaced in place, or appended with a heading the first time; written to a temporary file
and renamed).

ratio = peer median / topo median: above 1 means Topograph is faster.
"""
import argparse
import json
import os


def by_name(report):
    return {r["name"]: r for r in report["results"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peers", required=True)
    ap.add_argument("--topo-kernels", required=True)
    ap.add_argument("--topo-models", required=True)
    ap.add_argument("--doc", required=True)
    ap.add_argument("--command", default="bench/peers/run.sh")
    a = ap.parse_args()
    peers = json.load(open(a.peers))
    topo_k, topo_m = json.load(open(a.topo_kernels)), json.load(open(a.topo_models))
    tk, tm = by_name(topo_k), by_name(topo_m)
    v = peers["versions"]
    lines = [
        f"`{a.command}` — PyTorch {v.get('torch')} (CPU), DGL {v.get('dgl', 'not run')}, fastNLP "
        f"{v.get('fastNLP', 'not run')}, Python {v.get('python')}; {peers['threads']} threads for both sides; "
        f"load average {peers['load_average_start']:.2f} -> {peers['load_average_end']:.2f} (peers), "
        f"{topo_k['machine']['load_average_start']:.2f} -> {topo_k['machine']['load_average_end']:.2f} (topo-bench kernels), "
        f"{topo_m['machine']['load_average_start']:.2f} -> {topo_m['machine']['load_average_end']:.2f} (topo-bench models). "
        "Ratio = peer median / Topograph median (above 1: Topograph faster).",
        "",
    ]
    for what, err in peers.get("not_run", {}).items():
        lines += [f"Not run: {what}: {err}", ""]
    lines += ["| kernel (128 × n = 128, 6 heads × 50) | DGL ms | Topograph ms | ratio |", "|---|---:|---:|---:|"]
    # DGL has no fused attention: its composition is compared with both of ours.
    for r in peers["results"]:
        if not r["name"].startswith("kernels/"):
            continue
        name = r["name"].split("/", 1)[1]
        candidates = [name]
        if "attention composed" in name:
            candidates.insert(0, name.replace("composed", "fused"))
        for mine in candidates:
            t = tk.get(f"kernels/{mine}")
            if t:
                label = name if mine == name else f"{name} vs our fused"
                lines.append(f"| {label} | {r['median_ms']:.3f} | {t['median_ms']:.3f} | {r['median_ms'] / t['median_ms']:.2f} |")
    lines += ["", "| model step (d = 300, 2 layers, min(128, 16384/n) sentences) | peer ms | Topograph ms | ratio |",
              "|---|---:|---:|---:|"]
    pairs = {"fastNLP StarTransformer": "star", "torch TransformerEncoder": "dense"}
    for r in peers["results"]:
        if not r["name"].startswith("models/"):
            continue
        name = r["name"].split("/", 1)[1]
        for peer, ours in pairs.items():
            if name.startswith(peer):
                mine = f"models/{ours}{name[len(peer):]}"
                t = tm.get(mine)
                if t:
                    lines.append(f"| {name} vs {mine.split('/', 1)[1]} | {r['median_ms']:.1f} | {t['median_ms']:.1f} | "
                                 f"{r['median_ms'] / t['median_ms']:.2f} |")
    section = "\n".join(lines)
    text = open(a.doc).read()
    begin, end = "<!-- peers:begin -->", "<!-- peers:end -->"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + begin + "\n" + section + "\n" + end + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n## Against DGL, fastNLP and PyTorch (issue #20) — `bench/peers/run.sh`\n\n" + \
            begin + "\n" + section + "\n" + end + "\n"
    tmp = a.doc + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, a.doc)


if __name__ == "__main__":
    main()
