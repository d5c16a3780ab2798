"""The model side: grammar, constrained decoding, prompts, LoRA training and inference.

Modules that need torch / transformers / peft (processor, train, infer, tiny) import them inside their
functions, so `forgeplan --help` and the grammar tools work without the `[llm]` extra.
"""
