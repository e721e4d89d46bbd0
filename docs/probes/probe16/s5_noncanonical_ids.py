"""Scenario 5: a stored id that is in neither NFC nor NFD (an Ångström sign U+212B, a
Kelvin sign U+212A, an id mixing a composed and a decomposed accent). graph.ids says
canonically equivalent spellings are one id (id_key: NFC of the trimmed text), and
8604e98 says a remove finds a paper "by any spelling of its id (trimmed, NFC, NFD), as
lookups and adds do". Here: does an add by the NFC spelling update that paper, and does a
remove by the same NFC spelling find it? On the region path (long-lived pipeline) and the
whole path (one-shot reference)."""
import unicodedata

from atoms import ATOMS
from harness16 import P, Harness, main, papers_of

from graph.errors import NotFoundError
from graph.ids import id_key, spellings


def T(*atoms: int) -> str:
    return " ".join(ATOMS[a] for a in atoms)


NFC = lambda s: unicodedata.normalize("NFC", s)  # noqa: E731
NFD = lambda s: unicodedata.normalize("NFD", s)  # noqa: E731


def run() -> int:
    h = Harness("s5")
    ang = "\u212bngstr\u00f6m-1"  # ANGSTROM SIGN: NFC and NFD both change it
    mixed = "e\u0301t\u00e9-2"  # first accent decomposed, second composed
    kel = "\u212a-3"  # KELVIN SIGN: NFC is ASCII "K-3"
    for x in (ang, mixed, kel):
        print(f"   id {ascii(x)}: NFC {ascii(NFC(x))} NFD {ascii(NFD(x))} id_key "
              f"{ascii(id_key(x))} spellings(NFC) {[ascii(s) for s in spellings(NFC(x))]}",
              flush=True)
    base = {"a": T(0, 1), "b": T(7, 8), "c": T(0, 10), "d": T(2, 3), "e": T(4, 5),
            "f": T(6, 9), ang: T(1, 13), mixed: T(3, 5, 8), kel: T(2, 6)}
    h.write("build", add=[P(k, v) for k, v in base.items()], replace=True)
    h.write("warm", add=[P("a", T(0, 2))])
    stored = set(papers_of(h.a.snapshot()))
    print(f"   stored: {sorted(ascii(s) for s in stored)}", flush=True)
    for x, new_text in ((ang, T(1, 12)), (mixed, T(3, 5)), (kel, T(2, 12))):
        # an add by the NFC spelling
        h.write(f"add {ascii(NFC(x))} (NFC of stored {ascii(x)})", add=[P(NFC(x), new_text)])
        now = papers_of(h.a.snapshot())
        upd = x in now and now[x].abstract == new_text and NFC(x) not in now
        print(f"   -> add by NFC: {'updated the stored paper' if upd else 'did NOT update it'}; "
              f"papers with that key: {[ascii(k) for k in now if id_key(k) == id_key(x)]}",
              flush=True)
        # a remove by the same NFC spelling (and by the NFD one)
        for form, spell in (("NFC", NFC(x)), ("NFD", NFD(x))):
            before = set(papers_of(h.a.snapshot()))
            h.write(f"remove {ascii(spell)} ({form} of stored {ascii(x)})", remove=[spell])
            went = before - set(papers_of(h.a.snapshot()))
            print(f"   -> remove by {form}: {h.last_error!r} removed {[ascii(w) for w in went]}",
                  flush=True)
            if h.last_error is None:
                h.write(f"re-add {ascii(x)}", add=[P(x, base[x])])
    return h.close()


if __name__ == "__main__":
    main(run)
