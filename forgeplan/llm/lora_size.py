"""The number of LoRA parameters a training recipe adds to an architecture, without loading weights.

The model is built from its config.json on PyTorch's meta device (no memory for weights), the recipe's
LoraConfig applied, and the trainable parameters counted: the figure for a 9B model on a laptop.
"""

from __future__ import annotations

from pathlib import Path

from ..model.errors import InputError
from .config import DEFAULT_CONFIG, load_config


def lora_parameters(config_json: Path, recipe: Path | None = None) -> dict:
    """Trainable and total parameters of the recipe's LoRA on an architecture, built without weights."""
    import torch  # noqa: PLC0415
    from peft import get_peft_model  # noqa: PLC0415
    from transformers import AutoConfig, AutoModelForCausalLM  # noqa: PLC0415

    from .train import lora_config  # noqa: PLC0415

    if not Path(config_json).is_file():
        raise InputError("no such file (expected a model's config.json)", file=str(config_json))
    try:
        arch = AutoConfig.from_pretrained(Path(config_json).parent if Path(config_json).name == "config.json"
                                          else config_json)
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(f"not a transformers config: {exc}", file=str(config_json)) from None
    recipe_config = load_config(recipe or DEFAULT_CONFIG)
    with torch.device("meta"):
        model = get_peft_model(AutoModelForCausalLM.from_config(arch), lora_config(recipe_config))
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())
    return {"config_json": str(config_json), "model_type": arch.model_type, "recipe": recipe_config.run.name,
            "lora": recipe_config.lora, "trainable_parameters": trainable, "total_parameters": total,
            "trainable_percent": round(100 * trainable / total, 4)}
