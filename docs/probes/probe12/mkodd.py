"""Odd single-record JSONL files under /tmp/p12/odd (see PROBE12.md, claim 5)."""
import json, os
os.makedirs("/tmp/p12/odd", exist_ok=True)
base = "We propose a transformer model for graph neural network training on ImageNet and CIFAR-10 with contrastive learning."
recs = {
 "sur_id": {"id": "odd-\ud800-id", "title": "Surrogate id", "abstract": base},
 "sur_title": {"id": "odd-sur-title", "title": "Title \udc00 here", "abstract": base + " one"},
 "sur_abs": {"id": "odd-sur-abs", "title": "Sur abs", "abstract": base + " \ud83d two"},
 "sur_ref": {"id": "odd-sur-ref", "title": "Sur ref", "abstract": base + " three", "references": ["ref \udfff x"]},
 "sur_kw": {"id": "odd-sur-kw", "title": "Sur kw", "abstract": base + " four", "keywords": ["graph \ud800 learning"]},
 "long": {"id": "odd-long", "title": "Long", "abstract": (base + " ") * 20000},
 "emoji": {"id": "odd-emoji", "title": "😀😀", "abstract": "😀😀😀 🚀🚀 … ‽‽ ——"},
 "punct": {"id": "odd-punct", "title": "...", "abstract": ".... ,,,, ;;;; !!!!"},
 "nul": {"id": "odd-nul\u0000id", "title": "Nul", "abstract": base + " five"},
 "zw": {"id": "odd\u200bzw\u202eid", "title": "Zero\u200bwidth \u202eRTL", "abstract": base + " six \u200b\u200d\ufeff"},
 "selfref": {"id": "odd-self", "title": "A self citing paper", "abstract": base + " seven", "references": ["odd-self", "A self citing paper", " odd-self "]},
 "nfc": {"id": "caf\u00e9-paper", "title": "Caf\u00e9 NFC", "abstract": base + " eight", "references": ["cafe\u0301-paper"]},
 "nfd": {"id": "cafe\u0301-paper", "title": "Cafe\u0301 NFD", "abstract": base + " nine"},
 "title_is_id": {"id": "odd-tid", "title": "p-000b98f8a699", "abstract": base + " ten", "references": ["odd-tid"]},
 "combining": {"id": "odd-comb", "title": "Z\u0351\u0352\u0353a\u0354\u0355l\u0356g\u0357o" * 50, "abstract": "Z\u0351\u0352a\u0354l\u0356g\u0357o " * 200 + base},
 "controls": {"id": "odd-ctrl", "title": "ctrl\u0001\u0007\u001b[31m red", "abstract": base + " eleven \u0085 \u2028 \u2029"},
 "bigref": {"id": "odd-bigref", "title": "Many refs", "abstract": base + " twelve", "references": [f"r{i}" for i in range(20000)]},
 "hugetitle": {"id": "odd-hugetitle", "title": "T" * 200000, "abstract": base + " thirteen"},
}
for name, r in recs.items():
    with open(f"/tmp/p12/odd/{name}.jsonl", "w") as f:
        f.write(json.dumps(r) + "\n")
with open("/tmp/p12/odd/all.jsonl", "w") as f:
    for r in recs.values():
        f.write(json.dumps(r) + "\n")
