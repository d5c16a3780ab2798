"""Make the pictures of docs/viewing.md: a plan's step strip (`show --steps`) and a failed sample in
`forgeplan view`, photographed in the distribution's headless Chromium through Playwright.

    python docs/img/make_pictures.py docs/img                 # builds a small benchmark and run in a temporary folder
    python docs/img/make_pictures.py docs/img --run RUN_DIR   # photographs the page of an existing run instead
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]
PIN = "BayonetStructure_Part02_Pin"


def forgeplan(*args, stdout=None) -> None:
    subprocess.run([sys.executable, "-m", "forgeplan", *map(str, args)], check=True, stdout=stdout)


def step_strip(work: Path, out: Path) -> None:
    """A bayonet task with a hidden missing pin, its proven plan with the lock taken out before it is turned open."""
    forgeplan("task", "make", "bayonet_structure", "--out", work / "t", "--fault", f"missing_part:{PIN}")
    with open(work / "plan.json", "w") as fh:
        forgeplan("solve", work / "t", "--json", stdout=fh)
    plan = json.loads((work / "plan.json").read_text())
    acts = plan["rework_plan"]["actions"]
    acts[1], acts[2] = acts[2], acts[1]
    (work / "wrong.json").write_text(json.dumps({k: plan[k] for k in ("annotation", "rework_plan")}))
    forgeplan("show", work / "t", work / "wrong.json", "--steps", "--out", out / "steps.png")


def run_dir(work: Path) -> Path:
    """A 40-task benchmark and the local-repair baseline evaluated into a run folder."""
    forgeplan("bench", "build", "--out", work / "bench", "--tasks", "40", "--seed", "3", "--quiet",
              "--assemblies", "bayonet_structure", "burr_6_key", "luban_lock_3", "shaft_stack")
    forgeplan("baseline", "local-repair", "--bench", work / "bench", "--out", work / "preds.jsonl")
    forgeplan("evaluate", "--bench", work / "bench", "--predictions", work / "preds.jsonl", "--out", work / "run")
    return work / "run"


def photograph(run: Path, work: Path, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    forgeplan("view", run, "--out", work / "view.html")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1440, "height": 980})
        page.goto((work / "view.html").as_uri())
        page.select_option("#f-verdict", "incorrect")
        page.locator("#list tbody tr", has=page.locator("td:nth-child(6):not(:empty)")).first.click()
        page.wait_for_selector("#detail .step.failing")
        page.screenshot(path=str(out / "view.png"))
        browser.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--run", type=Path, help="an evaluate run folder to photograph (default: build one)")
    args = ap.parse_args()
    work = Path(tempfile.gettempdir()) / "forgeplan-pictures"   # a fixed name: the page's header shows it
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    try:
        step_strip(work, args.out)
        photograph(args.run or run_dir(work), work, args.out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"wrote {args.out / 'steps.png'} and {args.out / 'view.png'}")


if __name__ == "__main__":
    main()
