"""Training configuration: a dataclass read from models/NAME.toml and saved beside the adapter."""

from __future__ import annotations

import json
import tomllib
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from ..io.guarded import read_text
from ..io.resources import models_dir
from ..model.errors import InputError

MODELS_DIR = models_dir()
DEFAULT_CONFIG = MODELS_DIR / "forge-qwen3.5-9b.toml"
SAVED_NAME = "forgeplan_train.json"


@dataclass
class TrainConfig:
    """LoRA SFT recipe; defaults are the paper's (FORGE C.2)."""

    name: str = "forge-qwen3.5-9b"
    lora_r: int = 8
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    target_modules: str = "all-linear"
    learning_rate: float = 1e-4
    epochs: float = 2.0
    scheduler: str = "cosine"
    warmup_ratio: float = 0.03
    batch_size: int = 1
    grad_accum: int = 4
    seed: int = 42
    max_input_tokens: int = 12288
    dtype: str = "bfloat16"          # float32 | bfloat16 | float16
    device: str = "auto"             # auto | cpu | cuda
    max_steps: int = 0               # exactly this many optimizer steps (data cycled); 0 = from epochs
    max_seconds: float = 0.0         # stop after this wall time; 0 = no limit
    max_grad_norm: float = 1.0
    split: str = "train"

    def to_json(self) -> dict:
        return asdict(self)


def load_config(path: Path | None) -> TrainConfig:
    """A TrainConfig from a TOML file, or from the name of a bundled one (`tiny-cpu`, `forge-qwen3.5-9b`: the
    models/NAME.toml that ships with forgeplan); unknown keys are an error, naming the file and key."""
    path = Path(path) if path else DEFAULT_CONFIG
    if not path.exists() and path.parent == Path(".") and (MODELS_DIR / f"{path.stem}.toml").is_file():
        path = MODELS_DIR / f"{path.stem}.toml"
    try:
        data = tomllib.loads(read_text(path, "config file"))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"malformed TOML: {exc}", file=str(path)) from None
    known = {f.name: f for f in fields(TrainConfig)}
    for key, value in data.items():
        if key not in known:
            raise InputError(f"unknown setting (known: {sorted(known)})", file=str(path), field=key)
        want = type(getattr(TrainConfig(), key))
        if want is float and isinstance(value, int) and not isinstance(value, bool):
            data[key] = float(value)
        elif not isinstance(value, want) or isinstance(value, bool) != (want is bool):
            raise InputError(f"must be {want.__name__}, got {value!r}", file=str(path), field=key)
    return TrainConfig(**data)


def save_config(config: TrainConfig, folder: Path, extra: dict | None = None) -> None:
    (Path(folder) / SAVED_NAME).write_text(json.dumps({**config.to_json(), **(extra or {})}, indent=1) + "\n",
                                           encoding="utf-8")
