#!/usr/bin/env python3
"""dump-studies.py DB — every stored value of the sentence studies in DB, in line order, as
exact hex (float.hex), one line each: what "bit for bit on stored values" compares. Study ids
and creation times differ between databases and are left out; the params text (which names
the dataset, the line, the sentence's token hash and the settings) is kept."""
import json
import sqlite3
import sys

db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
rows = db.execute("SELECT id, params FROM studies WHERE kind = 'faithfulness' AND "
                  "status = 'complete'").fetchall()
studies = sorted(((json.loads(p)["line"], p, i) for i, p in rows if '"line":' in p))
def h(v):
    return "null" if v is None else float(v).hex()
for line, params, sid in studies:
    print("study", params)
    for s, pos, v in db.execute("SELECT series, pos, value FROM study_series WHERE study_id = ? "
                                "ORDER BY series, pos", (sid,)):
        print(" series", s, pos, h(v))
    for l, hd, m, v in db.execute("SELECT layer, head, metric, value FROM study_heads WHERE "
                                  "study_id = ? ORDER BY layer, head, metric", (sid,)):
        print(" head", l, hd, m, h(v))
