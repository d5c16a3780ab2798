"""`forgeplan view RUN_DIR`: the page is one self-contained file, every piece of run text stays text, and
the data it holds is the run's (the headless-browser test is tests/test_view_browser.py)."""

import json
import re

import pytest

from forgeplan.cli import main
from forgeplan.io.quoting import html_text, script_json
from runs import HOSTILE, make_run

@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return make_run(tmp_path_factory.mktemp("view"))


def page_json(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="data">(.*?)</script>', html, re.S)
    return json.loads(m.group(1))


def test_view_writes_one_self_contained_page(run_dir, tmp_path, capsys):
    out = tmp_path / "page.html"
    assert main(["view", str(run_dir), "--out", str(out)]) == 0
    assert f"wrote {out} (" in capsys.readouterr().out
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "@@" not in html
    assert not re.search(r'(src|href)="(?!data:)', html), "nothing is loaded from outside the file"
    assert "http://" not in html and "https://" not in html
    assert "default-src 'none'" in html
    data = page_json(html)
    rows = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().split("\n") if line]   # not splitlines: U+2028 is no line end in JSONL
    assert [s["row"]["sample_id"] for s in data["samples"]] == [r["sample_id"] for r in rows]
    failed = [s for s in data["samples"] if s["row"]["failing_step"] is not None]
    assert failed, "the local-repair baseline fails some samples at a step"
    for s in failed:
        steps = s["prediction"]["steps"]
        assert not steps[s["row"]["failing_step"] - 1]["legal"] and steps[-1]["reason"]
        assert len(s["prediction"]["states"]) == s["row"]["failing_step"]
    assert set(data["assemblies"]) == {r["assembly_id"] for r in rows}


def test_a_hostile_prediction_stays_text(run_dir, tmp_path):
    out = tmp_path / "page.html"
    assert main(["view", str(run_dir), "--out", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert html.count("</script>") == 2, "only the page's own two script elements close"
    assert "<img" not in html and "onerror=\"" not in html.replace('onerror=\\"', "")
    sample = next(s for s in page_json(html)["samples"] if s["row"]["raw_output"].startswith(HOSTILE))
    assert sample["prediction"]["steps"], "the plan inside the chatty answer is still drawn"


def test_quoting_for_html():
    assert html_text('<a href="x">&\'</a>') == "&lt;a href=&quot;x&quot;&gt;&amp;&#x27;&lt;/a&gt;"
    text = script_json({"k": HOSTILE})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"k": HOSTILE}


def test_view_bad_input_is_one_line(run_dir, tmp_path, capsys):
    assert main(["view", str(tmp_path)]) == 2
    assert "samples.jsonl" in capsys.readouterr().err
    assert main(["view", str(run_dir), "--out", str(tmp_path / "page.txt")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "run.json").write_text((run_dir / "run.json").read_text())
    (broken / "samples.jsonl").write_text('{"sample_id": 3}\n')
    assert main(["view", str(broken), "--out", str(tmp_path / "p.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "line 1.sample_id" in err
    (broken / "run.json").write_text(json.dumps({"bench": str(tmp_path / "nowhere")}))
    assert main(["view", str(broken), "--out", str(tmp_path / "p.html")]) == 2
    assert "--bench" in capsys.readouterr().err
