"""`forgeplan view RUN_DIR`: one self-contained HTML page to browse the samples of an evaluate run."""
