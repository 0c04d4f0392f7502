#!/usr/bin/env python3
"""Reference vectors for levh's local embedder, computed independently of levh.

Runs the same model files with Python's onnxruntime and the `tokenizers` package the way
sentence-transformers does for all-MiniLM-L6-v2: truncate at 256 tokens, pad each batch to
its longest text, mean-pool last_hidden_state over the attention mask, L2-normalise.
tests/it/embed.rs compares levh's vectors with these.

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install onnxruntime==1.31.1 tokenizers numpy
    eval "$(scripts/fetch-test-assets.sh)"
    /tmp/venv/bin/python scripts/embedding-reference.py "$LEVH_MODEL_DIR" \
        > fixtures/embeddings/all-MiniLM-L6-v2-int8.json
"""
import json
import sys
from pathlib import Path

import numpy as np
import onnxruntime
import tokenizers

TEXTS = [
    "The deploy pipeline runs every Friday at noon.",
    "Deployments go out at midday on Fridays.",
    "Alice prefers tea over coffee in the morning.",
    "levh remembers",
    "",
    "Toplantı yarın saat onda, proje planını konuşacağız.",
    "Der Zug nach Berlin fährt um acht Uhr ab.",
    "ERROR 42: connection refused (errno=111) at db.internal:5432 — retrying in 5s",
    # Longer than 256 tokens: the vector must come from the first 256 only.
    " ".join(f"word{i} of a very long note about quarterly planning" for i in range(80)),
]


def main() -> None:
    model_dir = Path(sys.argv[1])
    tokenizer = tokenizers.Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=256)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # pads to the batch's longest
    session = onnxruntime.InferenceSession(
        str(model_dir / "model.onnx"), providers=["CPUExecutionProvider"]
    )
    names = {i.name for i in session.get_inputs()}
    encodings = tokenizer.encode_batch(TEXTS)
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in names:
        feeds["token_type_ids"] = np.array([e.type_ids for e in encodings], dtype=np.int64)
    hidden = session.run(["last_hidden_state"], feeds)[0]
    weights = mask[:, :, None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
    json.dump(
        {
            "about": "all-MiniLM-L6-v2 (int8 ONNX from scripts/fetch-test-assets.sh) via "
            f"onnxruntime {onnxruntime.__version__} + tokenizers {tokenizers.__version__}; "
            "made by scripts/embedding-reference.py",
            "tokens": [len(e.ids) - e.ids.count(0) for e in encodings],
            "texts": TEXTS,
            "vectors": [[round(float(x), 7) for x in row] for row in pooled],
        },
        sys.stdout,
        ensure_ascii=False,
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
