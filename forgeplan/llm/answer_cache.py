"""Answers from a server kept on disk, one file per request, so that no request is ever paid for twice.

The key of an answer is the SHA-256 of what was asked: the endpoint, the API path and the exact JSON
body (never the API key, which travels in a header). Each answer is written to a temporary file in
the cache folder and renamed over its final name, so a run killed at any moment leaves only whole
answers behind; a rerun reads them and sends only the requests that have none. A cache file that does
not read back (edited, or from another version) is treated as absent and replaced.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from ..io.guarded import output_folder, read_json
from ..model.errors import InputError


def request_key(endpoint: str, path: str, body: dict) -> str:
    """The hex SHA-256 of (endpoint, path, body) in canonical JSON: equal requests, equal keys."""
    text = json.dumps({"endpoint": endpoint, "path": path, "body": body}, sort_keys=True, ensure_ascii=False,
                      separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class AnswerCache:
    """A folder of `<key>.json` files, each {"endpoint", "path", "response"}."""

    def __init__(self, folder: Path, flag: str = "--cache"):
        self.folder = output_folder(Path(folder), flag, create=False)   # created with the first answer
        self.flag = flag

    def get(self, key: str) -> dict | None:
        """The server's response kept for `key`, or None (absent, or a file that does not read back)."""
        path = self.folder / f"{key}.json"
        if not path.is_file():
            return None
        try:
            record = read_json(path, "response")
        except InputError:
            return None
        response = record.get("response") if isinstance(record, dict) else None
        return response if isinstance(response, dict) else None

    def put(self, key: str, record: dict) -> None:
        """Write `record` as the answer of `key`: whole or not at all (temporary file, fsync, rename)."""
        data = json.dumps(record, ensure_ascii=False, allow_nan=False).encode("utf-8")
        output_folder(self.folder, self.flag)
        try:
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, self.folder / f"{key}.json")
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError as exc:
            raise InputError(f"cannot keep an answer: {exc.strerror or exc}", file=str(self.folder),
                             field=self.flag) from None
