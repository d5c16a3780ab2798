"""`forgeplan view` in a real headless Chromium (the distribution's /usr/bin/chromium, driven by Playwright):
the page loads without a console error, the filters change the list, a failed sample opens on its
failing step (the engine's reason and a picture framed and drawn in red), and a hostile output stays text."""

import shutil
import tempfile

import pytest

from forgeplan.cli import main
from runs import HOSTILE, make_run

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def browser_page(tmp_path_factory):
    """The run's page open in Chromium, with every console error and page error it reports."""
    sync = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed "
                               "(the `test` extra installs it)")
    if shutil.which(CHROMIUM) is None:
        pytest.skip(f"no browser: {CHROMIUM} is missing (Debian: apt-get install chromium)")
    d = tmp_path_factory.mktemp("browser")
    run = make_run(d)
    assert main(["view", str(run), "--out", str(d / "page.html")]) == 0
    errors: list[str] = []
    profile = tempfile.mkdtemp(prefix="chromium-", dir=d)
    with sync.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=FLAGS, headless=True,
                                                       viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((d / "page.html").as_uri())
        page.wait_for_selector("#list tbody tr")
        yield page, errors
        context.close()


def rows(page) -> list[dict]:
    return page.eval_on_selector_all("#list tbody tr", "trs => trs.map(tr => ({id: tr.dataset.sample, "
                                     "verdict: tr.children[3].textContent, step: tr.children[5].textContent}))")


def test_the_page_loads_without_a_console_error(browser_page):
    page, errors = browser_page
    assert rows(page) and errors == []
    assert page.title().startswith("forgeplan view")


def test_the_filters_change_the_list(browser_page):
    page, errors = browser_page
    every = rows(page)
    page.select_option("#f-verdict", "incorrect")
    failed = rows(page)
    assert 0 < len(failed) < len(every) and {r["verdict"] for r in failed} == {"incorrect"}
    assert page.inner_text("#shown") == f"{len(failed)} of {len(every)} samples"
    assert page.eval_on_selector("#f-category option", "o => o.textContent") == f"(all) {len(failed)}", \
        "the other filters count within the chosen verdict"
    page.select_option("#f-verdict", "")
    assert len(rows(page)) == len(every) and errors == []


def test_a_failed_sample_opens_on_its_failing_step(browser_page):
    page, errors = browser_page
    failed = next(r for r in rows(page) if r["verdict"] == "incorrect" and r["step"])
    page.click(f'#list tbody tr[data-sample="{failed["id"]}"]')
    step = page.locator("#detail .step.failing")
    assert step.count() == 1
    assert step.locator(".action").inner_text().startswith(f"{failed['step']}. ")
    assert step.locator(".reason").inner_text().startswith("refused [")
    assert page.inner_text("#detail .why").startswith(f"step {failed['step']} ")
    red = page.eval_on_selector("#detail .step.failing canvas", """c => {
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 0; i < d.length; i += 4) if (d[i] === 214 && d[i + 1] === 39 && d[i + 2] === 40) n++;
        return n; }""")
    assert red > 20, "the refused action's parts are outlined in red"
    assert page.eval_on_selector("#detail .step.failing", "e => getComputedStyle(e).borderTopColor") == "rgb(214, 39, 40)"
    assert errors == []


def test_a_hostile_output_shows_as_text(browser_page):
    page, errors = browser_page
    ids = [r["id"] for r in rows(page)]
    for sid in ids:
        page.click(f'#list tbody tr[data-sample="{sid}"]')
        if page.inner_text("#detail pre.raw").startswith("</script>"):
            break
    assert page.inner_text("#detail pre.raw").startswith(HOSTILE.replace("\u2028", "\n")[:40])
    assert page.locator("img").count() == 0 and page.title() != "pwned" and page.locator("b").count() == 0
    assert errors == []
