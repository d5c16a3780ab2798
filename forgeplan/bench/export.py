"""Export a benchmark's splits as JSONL for supervised fine-tuning.

`prompt-completion` (default) writes TRL's conversational prompt/completion rows, which
`datasets.load_dataset("json", ...)` and `trl.SFTTrainer` read as they are (loss on the completion);
`messages` writes the older {sample_id, messages, target} rows. `--targets` chooses the order of each
reference's actions in the completion (the reference's own, `structured` by the layers of the dependency
closure, or `plain`, llm.targets); every completion is replayed in the engine before it is written.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..io.output import staged
from ..model.choices import DEFAULT_PROMPT, DEFAULT_TARGETS
from ..model.errors import InputError
from ..model.names import sample_id_problem
from .folder import Bench, open_bench

FORMATS = ("prompt-completion", "messages")


def _messages_row(row: dict) -> dict:
    return {"sample_id": row["sample_id"], "messages": row["prompt"], "target": row["completion"][0]["content"]}


def export_jsonl(bench: Path | Bench, out: Path, splits=None, progress=None, *, fmt: str = "prompt-completion",
                 prompt: str = DEFAULT_PROMPT, targets: str = DEFAULT_TARGETS) -> dict[str, int]:
    """Write OUT/<split>.jsonl for each split (default: every split of the manifest); returns row counts.
    `targets` orders each reference's actions (llm.targets); every target is replayed in the engine."""
    from ..llm.families import prompt_completion_rows

    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r} must be one of {FORMATS}")
    bench = open_bench(bench)
    splits = list(splits or bench.manifest["splits"])
    for split in splits:
        if sample_id_problem(split) is not None:   # it names the file OUT/<split>.jsonl
            raise InputError(f"split name {repr(split)[:80]} is not a file name (letters, digits, '_', '-', '.')",
                             file=bench.manifest_file, field="splits")
    counts = {}
    with staged(out) as folder:   # the splits' files replace an earlier export together
        for split in splits:
            rows = prompt_completion_rows(bench, split, prompt, with_ids=True, targets=targets)
            with folder.open(f"{split}.jsonl") as fh:
                for row in rows:
                    fh.write(json.dumps(row if fmt == "prompt-completion" else _messages_row(row), ensure_ascii=False) + "\n")
                    if progress:
                        progress(1)
            counts[split] = len(rows)
    return counts
