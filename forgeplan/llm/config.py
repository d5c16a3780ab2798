"""Training configuration: models/NAME.toml with three tables, each mapping one-to-one to its consumer.

[run] holds forgeplan's own settings (`RunSettings`), [lora] the keyword arguments of
`peft.LoraConfig` and [trainer] those of `trl.SFTConfig` (itself a `transformers.TrainingArguments`).
A key the consumer does not know is an error naming the file, table and key, so a typo never trains
silently with a default. The resolved configuration is saved beside the adapter.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from ..io.guarded import MAX_DEPTH, read_json, read_text
from ..io.output import write_text
from ..io.resources import models_dir
from ..model.choices import PROMPTS, TARGETS
from ..model.errors import InputError

MODELS_DIR = models_dir()
DEFAULT_CONFIG = MODELS_DIR / "forge-qwen3.5-9b.toml"
SAVED_NAME = "forgeplan_train.json"
TABLES = ("run", "lora", "trainer")
# set from the command line, never from a file: where to write, and whether to resume
OWNED_BY_CLI = ("output_dir", "resume_from_checkpoint")


@dataclass
class RunSettings:
    """forgeplan's side of a run: data, prompt rendering, model loading."""

    name: str = "unnamed"
    split: str = "train"             # benchmark split to train on
    eval_fraction: float = 0.05      # held-out slice of that split for the evaluation loss (0 = none)
    prompt: str = "forge"            # forge (FORGE's prompt contract) | compact (llm.prompt)
    dtype: str = "bfloat16"          # dtype the base model is loaded in: float32 | bfloat16 | float16
    device: str = "auto"             # auto | cpu | cuda
    load_in_4bit: bool = False       # QLoRA: 4-bit NF4 base weights via bitsandbytes (CUDA only)
    # the budget is [trainer] max_steps; these two are safety stops only (0 = none), and a run they stop is not
    # reproducible: how far it got depends on the machine's load
    max_minutes: float = 0.0         # stop training after this wall time; the adapter is saved
    max_cpu_minutes: float = 0.0     # stop after this much CPU time of the training process, all threads
    threads: int = 0                 # torch CPU threads while training (0 = torch's default); fix it for reruns
    finetune: str = "lora"           # lora: a peft adapter per [lora]; full: every weight trains ([lora] unused)
    targets: str = "reference"       # order of a reference's actions: reference | structured | plain (llm.targets)
    grounding: bool = False          # the engine's state after each action in the context, no loss (llm.grounding)


@dataclass
class TrainConfig:
    run: RunSettings = field(default_factory=RunSettings)
    lora: dict = field(default_factory=dict)
    trainer: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"run": asdict(self.run), "lora": dict(self.lora), "trainer": dict(self.trainer)}


def _known(table: str) -> set[str]:
    if table == "run":
        return {f.name for f in fields(RunSettings)}
    if table == "lora":
        from peft import LoraConfig  # noqa: PLC0415

        return {f.name for f in fields(LoraConfig)}
    from trl import SFTConfig  # noqa: PLC0415

    return {f.name for f in fields(SFTConfig)} - set(OWNED_BY_CLI)


def _run_settings(data: dict, path: Path) -> RunSettings:
    defaults = RunSettings()
    for key, value in data.items():
        want = type(getattr(defaults, key))
        if want is float and isinstance(value, int) and not isinstance(value, bool):
            data[key] = float(value)
        elif not isinstance(value, want) or isinstance(value, bool) != (want is bool):
            raise InputError(f"must be {want.__name__}, got {value!r}", file=str(path), field=f"run.{key}")
    if data.get("prompt", defaults.prompt) not in PROMPTS:
        raise InputError(f"must be one of {list(PROMPTS)}, got {data['prompt']!r}", file=str(path), field="run.prompt")
    if data.get("targets", defaults.targets) not in TARGETS:
        raise InputError(f"must be one of {list(TARGETS)}, got {data['targets']!r}", file=str(path), field="run.targets")
    return RunSettings(**data)


def load_config(path: Path | None) -> TrainConfig:
    """A TrainConfig from a TOML file, or from the name of a bundled one (`tiny-cpu`, `reference-cpu`,
    `forge-qwen3.5-9b`: the models/NAME.toml that ships with forgeplan); unknown tables and keys are errors
    naming the file and key."""
    path = Path(path) if path else DEFAULT_CONFIG
    if not path.exists() and path.parent == Path(".") and (MODELS_DIR / f"{path.stem}.toml").is_file():
        path = MODELS_DIR / f"{path.stem}.toml"
    if not path.exists():
        names = ", ".join(sorted(p.stem for p in MODELS_DIR.glob("*.toml")))
        raise InputError(f"no such configuration {str(path)!r}: expected a TOML file or the name of a bundled one "
                         f"({names})", field="--config")
    try:
        data = tomllib.loads(read_text(path, "config file"))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"malformed TOML: {exc}", file=str(path)) from None
    except RecursionError:
        raise InputError(f"nests deeper than {MAX_DEPTH} levels", file=str(path)) from None
    _check_depth(data, path)
    for table, body in data.items():
        if table not in TABLES or not isinstance(body, dict):
            raise InputError(f"expected only the tables {list(TABLES)}", file=str(path), field=table)
        known = _known(table)
        for key in body:
            if key not in known:
                hint = " (set on the command line)" if key in OWNED_BY_CLI else ""
                raise InputError(f"unknown key for {_CONSUMER[table]}{hint}", file=str(path), field=f"{table}.{key}")
    for table in ("lora", "trainer"):
        _check_types(table, data.get(table, {}), path)
    return TrainConfig(_run_settings(dict(data.get("run", {})), path), dict(data.get("lora", {})),
                       dict(data.get("trainer", {})))


def _check_depth(data, path: Path) -> None:
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise InputError(f"nests deeper than {MAX_DEPTH} levels", file=str(path))
        if isinstance(value, dict):
            stack += [(v, depth + 1) for v in value.values()]
        elif isinstance(value, list):
            stack += [(v, depth + 1) for v in value]


_SCALARS = (bool, int, float, str)


def _check_types(table: str, body: dict, path: Path) -> None:
    """Each value of [lora] / [trainer] against its consumer's annotation, where that is a scalar (or an
    optional one), before any model loads: `learning_rate = "abc"` fails here, not after loading."""
    import typing  # noqa: PLC0415

    consumer = _consumer_class(table)
    try:
        hints = typing.get_type_hints(consumer)
    except Exception:  # noqa: BLE001 - an annotation this Python cannot resolve: nothing to check against
        return
    for key, value in body.items():
        want = _scalar_types(hints.get(key))
        if want is None or (value is None and type(None) in want):
            continue
        if isinstance(value, bool):
            ok = bool in want
        elif isinstance(value, int):
            ok = int in want or float in want
        else:
            ok = isinstance(value, want)
        if not ok:
            names = " or ".join(t.__name__ for t in want if t is not type(None))
            raise InputError(f"must be {names}, got {value!r}", file=str(path), field=f"{table}.{key}")


def _scalar_types(hint) -> tuple | None:
    """The accepted Python types of a scalar annotation (X or Optional[X], X a scalar), else None."""
    import typing  # noqa: PLC0415

    if hint in _SCALARS:
        return (hint,)
    args = typing.get_args(hint)
    if typing.get_origin(hint) is typing.Union and args and all(a in _SCALARS or a is type(None) for a in args):
        return args
    return None


def _consumer_class(table: str):
    if table == "lora":
        from peft import LoraConfig  # noqa: PLC0415

        return LoraConfig
    from trl import SFTConfig  # noqa: PLC0415

    return SFTConfig


_CONSUMER = {"run": "forgeplan's [run] settings", "lora": "peft.LoraConfig", "trainer": "trl.SFTConfig"}


def save_config(config: TrainConfig, folder: Path, extra: dict | None = None) -> None:
    write_text(Path(folder) / SAVED_NAME, json.dumps({**config.to_json(), **(extra or {})}, indent=1) + "\n")


def saved_grounding(adapter: Path | None) -> bool:
    """Whether an adapter was trained with Action Grounding (then its decoding writes the state renderings)."""
    saved = Path(adapter) / SAVED_NAME if adapter else None
    if saved is None or not saved.is_file():
        return False
    return json.loads(saved.read_text(encoding="utf-8")).get("run", {}).get("grounding") is True


def saved_prompt_style(adapter: Path | None) -> str | None:
    """The prompt rendering an adapter was trained with (None without an adapter or a saved config)."""
    saved = Path(adapter) / SAVED_NAME if adapter else None
    if saved is None or not saved.is_file():
        return None
    data = read_json(saved, "config file")   # an adapter folder is untrusted: the guarded reader's JSON
    run = data.get("run") if isinstance(data, dict) else None
    style = run.get("prompt") if isinstance(run, dict) else None
    if style is not None and style not in PROMPTS:
        raise InputError(f"the adapter was trained with an unknown prompt {str(style)[:40]!r}; pass --prompt "
                         f"{' or '.join(PROMPTS)}", file=str(saved), field="run.prompt")
    return style
