#!/usr/bin/env python3
"""Python baseline for `cargo bench -p levh-embed --bench embed`: the same model, texts and
protocol with onnxruntime + tokenizers (what sentence-transformers runs underneath).

    python3 scripts/bench-embed-python.py MODEL_DIR TEXTS.json ROUNDS

Prints one JSON line: texts per second for one text per call, and for batches of 32.
"""
import json
import sys
import time
from pathlib import Path

import numpy as np
import onnxruntime
import tokenizers


def main() -> None:
    model_dir, texts_file, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    texts = json.load(open(texts_file))
    tokenizer = tokenizers.Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=256)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    session = onnxruntime.InferenceSession(
        str(model_dir / "model.onnx"), providers=["CPUExecutionProvider"]
    )
    names = {i.name for i in session.get_inputs()}

    def embed(batch):
        encodings = tokenizer.encode_batch(batch)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": mask,
        }
        if "token_type_ids" in names:
            feeds["token_type_ids"] = np.array([e.type_ids for e in encodings], dtype=np.int64)
        hidden = session.run(["last_hidden_state"], feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    embed(texts[:32])  # warm-up
    started = time.perf_counter()
    for i in range(rounds * 32):
        embed([texts[i % len(texts)]])
    single = rounds * 32 / (time.perf_counter() - started)
    started = time.perf_counter()
    for i in range(rounds):
        embed(texts[(i * 32) % len(texts):][:32] or texts[:32])
    batch = rounds * 32 / (time.perf_counter() - started)
    print(json.dumps({"single_texts_per_s": single, "batch32_texts_per_s": batch,
                      "onnxruntime": onnxruntime.__version__}))


if __name__ == "__main__":
    main()
