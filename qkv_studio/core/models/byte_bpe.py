"""Byte-level BPE (GPT-2's alphabet), as a GGUF file's tokenizer metadata describes it (NumPy-free, never Qt).

:func:`build_tokenizer_json` builds the ``tokenizers`` tokenizer transformers builds from the same
metadata; :func:`readable_piece` spells a byte-level piece as people read it ("Ġcat" → "␣cat").
``tokenizers`` is imported only when a tokenizer is built.
"""

from __future__ import annotations

from collections.abc import Sequence

# readable byte-level pieces: a space as "␣", a newline as "↵", a tab as "⇥"
_VISIBLE = {" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍"}


# ---- byte-level BPE ------------------------------------------------------------------------------------------
def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte → printable character table (the alphabet byte-level BPE vocabularies are spelled in)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs), strict=False))


_BYTE_OF = {c: b for b, c in bytes_to_unicode().items()}


def readable_piece(token: str) -> str:
    """A byte-level piece as people read it: "Ġcat" → "␣cat", "Ċ" → "↵"; control tokens unchanged."""
    if not token or any(c not in _BYTE_OF for c in token):
        return token
    text = bytes(_BYTE_OF[c] for c in token).decode("utf-8", errors="backslashreplace")
    return "".join(_VISIBLE.get(c, c) for c in text)


def build_tokenizer_json(tokens: Sequence[str], merges: Sequence[str], token_types: Sequence[int]) -> str:
    """The tokenizer a GGUF's metadata describes, as ``tokenizers`` JSON — built as transformers builds it
    from the same file (byte-level BPE, GPT-2's pre-tokenizer without a prefix space, control tokens
    (type 3) special and user-defined ones (type 4) whole, no BOS added)."""
    from tokenizers import AddedToken, Tokenizer, decoders, pre_tokenizers
    from tokenizers.models import BPE

    spelling = bytes_to_unicode()
    alphabet = set(spelling.values())
    vocab = {(t if set(t) <= alphabet else "".join(spelling[b] for b in t.encode("utf-8"))): i
             for i, t in enumerate(tokens)}
    pairs = [(m.partition(" ")[0], m.partition(" ")[2]) for m in merges]
    tok = Tokenizer(BPE(vocab=vocab, merges=pairs, dropout=None, continuing_subword_prefix="",
                        end_of_word_suffix="", fuse_unk=False))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    control = [AddedToken(t, normalized=False, special=True) for t, kind in zip(tokens, token_types, strict=False)
               if kind == 3 and set(t) <= alphabet]
    if control:
        tok.add_special_tokens(control)
    user = [AddedToken(t, normalized=False, special=False) for t, kind in zip(tokens, token_types, strict=False)
            if kind == 4 and t in vocab]
    if user:
        tok.add_tokens(user)
    return tok.to_str()
