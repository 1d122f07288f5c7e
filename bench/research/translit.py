"""Research: cross-lingual name evidence (Russian question → English text) by transliteration and
character-trigram matching, plus shared numbers."""
from __future__ import annotations
import sys
sys.argv = ["x"]
exec(open("bench/research/xquad_signals.py").read().split('if __name__ == "__main__":')[0])
from footnote.retrieve.plan import keywords, STOP_WORDS

TR = dict(zip("абвгдеёжзийклмнопрстуфхцчшщъыьэюя",
  ["a","b","v","g","d","e","e","zh","z","i","y","k","l","m","n","o","p","r","s","t","u","f","kh","ts","ch","sh","shch","","y","","e","yu","ya"]))
def translit(w):
    return "".join(TR.get(ch, ch) for ch in w.lower())
def grams(w):
    w = f" {w} "
    return {w[i:i+3] for i in range(len(w)-2)}
ftoks = [set(x.lower() for x in TOK.findall(t)) for t in frag_text]
fgrams = [{t: grams(t) for t in ts if len(t) >= 3} for ts in ftoks]
def name_ev(q, i, thr):
    s = 0.0
    kws = [w for w in keywords(q)]
    for w in kws:
        if w.isdigit():
            s += 1.0 if w in ftoks[i] else 0; continue
        if not re.search("[а-яё]", w.lower()):
            s += 1.0 if w.lower() in ftoks[i] else 0; continue
        if not w[0].isupper() and len(w) < 5: continue
        g = grams(translit(w))
        best = max((len(g & fg)/len(g | fg) for fg in fgrams[i].values()), default=0)
        if best >= thr: s += best
    return s
if __name__ == "__main__":
    idx = np.where((lang=="ru")&(cat=="in_corpus"))[0]
    # precompute evidence on top-10 dense
    EV = {}
    for i in idx:
        top = np.argsort(-S[i])[:10]
        EV[i] = {j: name_ev(qs[i]["question"], j, 0.3) for j in top}
    for w in (0.0, 0.005, 0.01, 0.02, 0.03):
        def f(i, w=w):
            s = S[i].copy()
            for j, e in EV[i].items(): s[j] += w * e
            return s
        print(w, recall1(f, "ru", [0,1]))
