"""compare-json.py EXPECTED GOT — the golden JSON of a study verb against what it prints now.

Identical but for what cannot repeat: wall-clock timings (keys "seconds", "timing", and any
key ending in "_s") are dropped from both before comparing. Every other field, numbers
included, must be equal exactly: the same stored study read back by the same arithmetic
prints the same digits. Exits 1 naming the first differing path.
"""
import json
import sys


def scrub(o):
    if isinstance(o, dict):
        return {k: scrub(v) for k, v in o.items()
                if k not in ("seconds", "timing") and not k.endswith("_s")}
    if isinstance(o, list):
        return [scrub(v) for v in o]
    return o


def first_diff(a, b, path="$"):
    if type(a) is not type(b):
        return f"{path}: {a!r} (expected) is not {b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}: only in {'expected' if k in a else 'the output'}"
            d = first_diff(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} entries expected, {len(b)} printed"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_diff(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    if isinstance(a, float) and a != a and b != b:
        return None  # NaN printed as NaN
    return None if a == b else f"{path}: {a!r} expected, {b!r} printed"


expected = scrub(json.load(open(sys.argv[1])))
got = scrub(json.load(open(sys.argv[2])))
diff = first_diff(expected, got)
if diff:
    print(diff)
    sys.exit(1)
