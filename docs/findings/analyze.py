# analyze.py — the tables of docs/findings.md ("Ablation and faithfulness") from the JSON
# files docs/findings/run-heads.sh writes: python3 docs/findings/analyze.py [OUT]
import json, math, os, statistics as st, sys
os.chdir(sys.argv[1] if len(sys.argv) > 1 else "/tmp/findings")
N = 12
rows = []
tvsum = [0.0]*270; lpsum = [0.0]*270; top10count = [0]*270; flips=[0]*270
faith = []; hl = []; dlarho = []
for i in range(1, N+1):
    h = json.load(open(f'heads-{i}.json')); f = json.load(open(f'faith-{i}.json')); d = json.load(open(f'dla-{i}.json'))
    heads = h['heads']
    tv = [x['tv'] for x in heads]; lp = [x['delta_logp'] for x in heads]
    order = sorted(range(270), key=lambda k: -tv[k])
    for k in order[:10]: top10count[k] += 1
    for k in range(270):
        tvsum[k] += tv[k]; lpsum[k] += lp[k]; flips[k] += heads[k]['flip']
    nflip = sum(x['flip'] for x in heads)
    best = order[0]
    rows.append((i, h['n_tokens'], d['target']['piece'], math.exp(h['logp_clean']), nflip, f"{best//9}.{best%9}", tv[best],
                 sum(1 for x in tv if x > 0.05)))
    s = f['sources']
    bh = max(f['heads'], key=lambda x: x['tau'] if x['defined'] else -9)
    faith.append((i, s['last-mean']['tau'], s['last-mean']['tau_p'], s['rollout']['tau'], s['flow']['tau'], s['flow']['tau_p'], f"{bh['layer']}.{bh['head']}", bh['tau']))
    hl.append({x['statistic']: (x['rho_tv'], x['p_tv'], x['rho_delta_logp']) for x in f['head_level']})
    dlarho.append(d['ablation']['spearman_rho'])
print("| # | n | target | p(target) | heads that flip top-1 | head with largest TV | its TV | heads with TV > 0.05 |")
print("|---:|---:|---|---:|---:|---|---:|---:|")
for r in rows: print("| %d | %d | %s | %.3f | %d | %s | %.3f | %d |" % (r[0], r[1], repr(r[2]), r[3], r[4], r[5], r[6], r[7]))
print()
print("Top heads by mean TV over the 12 sentences:")
print("| head | mean TV | mean Δ log p | sentences in its top 10 | flips |")
print("|---|---:|---:|---:|---:|")
for k in sorted(range(270), key=lambda k: -tvsum[k])[:12]:
    print("| %d.%d | %.3f | %+.3f | %d | %d |" % (k//9, k%9, tvsum[k]/N, lpsum[k]/N, top10count[k], flips[k]))
# layer profile
print()
print("mean TV by layer:", " ".join("%d:%.3f" % (l, sum(tvsum[l*9:(l+1)*9])/9/N) for l in range(30)))
print()
print("| # | τ last-mean | p | τ rollout | τ flow | p | best head | its τ |")
print("|---:|---:|---:|---:|---:|---:|---|---:|")
for r in faith: print("| %d | %+.3f | %.3f | %+.3f | %+.3f | %.3f | %s | %+.3f |" % r)
print()
for stat in ['entropy','confidence','sink','previous-token','dla']:
    v=[x[stat][0] for x in hl if stat in x]; sig=sum(1 for x in hl if stat in x and x[stat][1] < 0.05)
    v2=[x[stat][2] for x in hl if stat in x]
    print("%s: rho(stat, TV) median %+.3f range [%+.3f, %+.3f], p<0.05 in %d/%d; rho(stat, dlogp) median %+.3f" % (stat, st.median(v), min(v), max(v), sig, len(v), st.median(v2)))
print("rho(DLA, dlogp) per sentence:", " ".join("%+.2f" % x for x in dlarho), "median %+.3f" % st.median(dlarho))

# Erasure curves: the fraction of the erasable tokens removed when the top-1 first flips.
SENT = [l for l in open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "run-heads.sh"),
                       encoding="utf-8").read().split("<<'LIST'\n")[1].split("\nLIST")[0].splitlines()]
print()
print("| # | sentence | erasable tokens | attention | leave-one-out | random (median of 8) |")
print("|---:|---|---:|---:|---:|---:|")
for i in range(1, N + 1):
    d = json.load(open(f"erasure-{i}.json"))
    o = {x["ordering"]: x for x in d["orderings"] if not x["ordering"].startswith("random")}
    f = lambda x: "never" if x["never_flips"] else "%.2f (%d)" % (x["fraction"], x["flip_k"])
    rm = "never" if d["random_median_never"] else "%.2f" % d["random_median_fraction"]
    print("| %d | %s | %d | %s | %s | %s |" % (i, SENT[i - 1].replace("|", "\\|"), d["n_tokens"] - 1,
                                              f(o["attention"]), f(o["leave-one-out"]), rm))

# Mean- against zero-ablation on the seed sentences: Spearman ρ of the heads' TV.
def ranks(v):
    s = sorted(range(len(v)), key=lambda k: v[k]); r = [0] * len(v)
    for j, k in enumerate(s): r[k] = j
    return r
print()
for i in (1, 2):
    m = [h["tv"] for h in json.load(open(f"mean-{i}.json"))["heads"]]
    z = [h["tv"] for h in json.load(open(f"heads-{i}.json"))["heads"]]
    rm, rz = ranks(m), ranks(z); c = (len(m) - 1) / 2
    rho = sum((a - c) * (b - c) for a, b in zip(rm, rz)) / math.sqrt(sum((a - c) ** 2 for a in rm) * sum((b - c) ** 2 for b in rz))
    top = lambda v: ", ".join("%d.%d (%.3f)" % (k // 9, k % 9, v[k]) for k in sorted(range(270), key=lambda k: -v[k])[:5])
    print("sentence %d: mean-ablation top 5 by TV %s; zero-ablation %s; Spearman rho of TV %.3f" % (i, top(m), top(z), rho))
