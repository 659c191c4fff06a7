"""The graph as a picture (issue 27.4): a failing gradient test writes a page with the
learner's graph and torch's side by side, the first wrong node marked, drawn by Graphviz and
checked in a real headless browser; without Graphviz, the text tree; the lessons' pictures
come from the same code and are kept up to date."""
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import reference
from kit import REPO, learner_source, make_checkout, write_learner_file
from plugin.grading import graph_picture
from plugin.grading.oracle import KataMismatch, Oracle
from reference import pieces

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
needs_graphviz = pytest.mark.skipif(not graph_picture.can_render(),
                                    reason="Graphviz is not installed here (apt-get install graphviz; pip install graphviz)")


def forgets_the_chain_rule(ctx, grad):
    (out,) = ctx.saved_tensors
    return (out,)  # exp's rule without grad


def mismatch():
    with pieces.swapped({"exp_backward": forgets_the_chain_rule}), pytest.raises(KataMismatch) as caught:
        Oracle(reference).check_grads(lambda lib, x, w: ((x * w).exp().sigmoid() * x).sum(), op="f",
                                      x=np.array([0.3, -0.8]), w=np.array([1.5, 0.5]))
    return caught.value


def test_a_failing_gradient_test_writes_the_page_and_says_where(pytester, tmp_path):
    make_checkout(pytester, katas=["01_elementwise_rules"])
    write_learner_file(pytester, "01_elementwise_rules", "rules.py",
                       learner_source("rules").replace("return (grad * out,)", "return (out,)"))
    page = tmp_path / "pages" / "graph.html"
    result = pytester.runpytest("--kata", "1", "-p", "no:randomly", "-k", "test_unary", "--kata-html", str(page))
    out = result.stdout.str()
    assert page.exists(), out
    assert page.resolve().as_uri() in out, out  # a terminal makes the address a link
    text = page.read_text()
    assert "your engine" in text and "torch" in text and "ExpBackward0" in text
    # without --kata-html: in pytest's cache, the address given the same way
    again = pytester.runpytest("--kata", "1", "-p", "no:randomly", "-k", "test_unary")
    cached = re.search(r"(file://\S+autograd_katas_graphs/01_elementwise_rules\.html)", again.stdout.str())
    assert cached, again.stdout.str()


def test_without_graphviz_the_page_shows_the_text_tree(monkeypatch, tmp_path):
    monkeypatch.setattr(graph_picture.shutil, "which", lambda name: None)
    path = graph_picture.write_page(mismatch().picture, tmp_path / "graph.html")
    text = path.read_text()
    assert "<svg" not in text
    assert "ExpBackward0   &lt;== here" in text, text
    assert "install Graphviz" in text


@needs_graphviz
def test_the_page_draws_both_graphs_with_the_wrong_node_marked(tmp_path):
    error = mismatch()
    text = graph_picture.write_page(error.picture, tmp_path / "graph.html").read_text()
    assert text.count("<svg") == 2
    # the marked node of each graph is the one the message names
    assert "where: ExpBackward0 received the right gradient" in str(error)
    for side in ("yours", "torch"):
        marked = re.search(rf'<g id="wrong_{side}" class="node wrong">(.*?)</g>', text, re.S)
        assert marked and "ExpBackward0" in marked.group(1), side


@needs_graphviz
@pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER), reason="no headless browser here (apt-get install chromium chromium-driver)")
def test_the_page_renders_in_a_real_browser(tmp_path):
    """Loaded by Chromium, headless: both pictures have a size on the page, and the node marked
    wrong is the one the message names, drawn in red, in both graphs."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    page = graph_picture.write_page(mismatch().picture, tmp_path / "graph.html")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}",
                 "--window-size=1400,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        driver.get(page.as_uri())
        pictures = driver.find_elements(By.CSS_SELECTOR, "section svg")
        assert len(pictures) == 2 and all(p.size["width"] > 100 and p.size["height"] > 100 for p in pictures)
        for side in ("yours", "torch"):
            node = driver.find_element(By.ID, f"wrong_{side}")
            assert "ExpBackward0" in node.text, node.text
            shape = node.find_element(By.CSS_SELECTOR, "path, polygon")
            fill = driver.execute_script("return getComputedStyle(arguments[0]).fill", shape)
            assert fill.replace(" ", "") == "rgb(214,39,40)", fill  # graph_picture.WRONG
            assert node.size["width"] > 0 and node.size["height"] > 0
        others = [n for n in driver.find_elements(By.CSS_SELECTOR, "g.node") if "wrong" not in n.get_attribute("class")]
        assert others and all("rgb(214" not in driver.execute_script(
            "return getComputedStyle(arguments[0]).fill", n.find_element(By.CSS_SELECTOR, "path, polygon")) for n in others)
        png = tmp_path / "page.png"
        driver.save_screenshot(str(png))
        assert png.stat().st_size > 10_000  # a picture, not a blank page
    finally:
        driver.quit()


def test_the_lessons_pictures_are_drawn_by_the_same_code_and_up_to_date():
    """Each lesson picture is the SVG graph_picture.py draws of the graph the lesson explains
    (the hash of its DOT text is in the file: `python -m plugin.grading.graph_picture --lessons`
    redraws them), and its lesson shows it."""
    for path, drawing in graph_picture.lesson_drawings().items():
        svg = (REPO / path).read_text()
        assert f"dot source {graph_picture.fingerprint(drawing)}" in svg, (
            f"{path} is out of date: python -m plugin.grading.graph_picture --lessons")
        lesson = (REPO / path).parent / "README.md"
        assert f"]({Path(path).name})" in lesson.read_text(), f"{lesson} does not show {path}"
