"""Export a benchmark split as JSONL for SFT: chat prompt (public task) + target answer."""

from __future__ import annotations

import json
from pathlib import Path

from .store import load_manifest, load_sample_task, read_sample_file


def export_jsonl(bench: Path, out: Path, splits=("train", "test"), progress=None) -> dict[str, int]:
    from ..llm.prompt import build_prompt, target_text

    manifest = load_manifest(bench)
    out.mkdir(parents=True, exist_ok=True)
    counts = {}
    for split in splits:
        ids = manifest["splits"][split]
        with (out / f"{split}.jsonl").open("w", encoding="utf-8") as fh:
            for sid in ids:
                task = load_sample_task(bench, sid)
                ref = read_sample_file(bench, sid, "reference.json")
                row = {"sample_id": sid, "messages": build_prompt(task), "target": target_text(ref)}
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                if progress:
                    progress(1)
        counts[split] = len(ids)
    return counts
