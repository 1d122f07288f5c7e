# ruff: noqa  (research notes: numpy scripts that exec each other; not library code)
"""Research: cross-lingual name evidence by consonant skeletons (Russian → English)."""
from __future__ import annotations
import sys
sys.argv = ["x"]
exec(open("bench/research/xquad_signals.py").read().split('if __name__ == "__main__":')[0])
from footnote.retrieve.plan import keywords

MULTI = [("дж", "j"), ("кс", "x"), ("кв", "q"), ("шч", "sh"), ("щ", "sh"), ("ч", "ch"), ("ш", "sh"), ("ж", "j"), ("х", "h"), ("ц", "c")]
SINGLE = dict(zip("абвгдеёзийклмнопрстуфыьъэюя", list("abvgdeeziyklmnoprstufy") + ["", "", "e", "u", "a"]))
def translit(w):
    w = w.lower()
    for a, b in MULTI: w = w.replace(a, b)
    return "".join(SINGLE.get(ch, ch) for ch in w)
def skeleton(w):
    w = w.lower()
    for a, b in (("ph", "f"), ("th", "t"), ("ck", "k"), ("sch", "sh"), ("x", "ks"), ("qu", "kv"), ("w", "v"), ("c", "k"), ("q", "k"), ("z", "s"), ("j", "g"), ("h", "")):
        w = w.replace(a, b)
    w = re.sub(r"[aeiouy]", "", w)
    return re.sub(r"(.)\1+", r"\1", w)
fsk = [set(skeleton(t) for t in ts if len(t) >= 3 and not t.isdigit()) for ts in [set(x.lower() for x in TOK.findall(t)) for t in frag_text]]
ftok = [set(x.lower() for x in TOK.findall(t)) for t in frag_text]
df = Counter(s for f in fsk for s in f)
N = len(frag_text)
def qfeats(q):
    out = []
    for w in keywords(q):
        if w.isdigit(): out.append(("tok", w.lower())); continue
        if re.search("[а-яё]", w.lower()):
            if not w[0].isupper(): continue
            sk = skeleton(translit(w))
            if len(sk) >= 2: out.append(("sk", sk))
        else:
            out.append(("tok", w.lower()))
    return out
def ev(feats, j):
    s = 0.0
    for kind, v in feats:
        if kind == "tok":
            if v in ftok[j]: s += 1
        else:
            hit = v in fsk[j] or (len(v) >= 3 and any(x.startswith(v) or (len(x) >= 3 and v.startswith(x)) for x in fsk[j]))
            if hit: s += math.log(1 + N / (1 + df.get(v, 0)))/math.log(1+N)
    return s
if __name__ == "__main__":
    idx = np.where((lang=="ru")&(cat=="in_corpus"))[0]
    E = {i: np.array([ev(qfeats(qs[i]["question"]), j) for j in range(N)]) for i in idx}
    print(qfeats("Сколько мешков за карьеру было у Джареда Аллена? Кто выиграл Суперкубок XLIX в 2015?"), skeleton("Jared"), skeleton("Allen"))
    for w in (0.0, 0.005, 0.01, 0.015, 0.02, 0.03):
        print(w, [recall1(lambda i, w=w: S[i] + w * E[i], "ru", [h]) for h in (0, 1)])
