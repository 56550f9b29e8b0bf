"""Issue 3: the report loads in headless Chromium from disk, with no console error, and renders non-blank.

Skips (with the reason) when no Chromium binary is found; CI installs the Debian packages
``chromium`` and ``chromium-driver`` (see .ci/run). Set THEORY_CHROMIUM to use another binary.
"""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from theory.analysis import verdicts
import theory.report as report

from . import _chromium, _synthetic

BINARY = _chromium.find()
pytestmark = pytest.mark.skipif(BINARY is None, reason="no Chromium binary found (looked for $THEORY_CHROMIUM, "
                                f"{', '.join(_chromium.CANDIDATES)}); install the Debian package 'chromium'")

# Injected first into <head> of a copy of the page: collects JS errors, console.error calls and failed
# resource loads; after load it also clicks the summary's Verdict header (exercising the sort script),
# then writes everything into a <pre> that --dump-dom prints.
PROBE = """<script>
window.__errs=[];
window.addEventListener('error',function(e){var t=e.target;
  window.__errs.push(t&&t!==window&&t.tagName?('resource '+t.tagName+' '+(t.src||t.href||'')):('js '+e.message));},true);
(function(){var ce=console.error;console.error=function(){window.__errs.push('console.error '+
  Array.prototype.join.call(arguments,' '));ce.apply(console,arguments);};})();
window.addEventListener('load',function(){var first='';
  try{var th=document.querySelectorAll('#summary-table thead th')[4];th.click();th.click();
      first=document.querySelector('#summary-table tbody tr.row').getAttribute('data-claim');}
  catch(x){window.__errs.push('sort '+x);}
  var mm=document.querySelector('.statement .math math'),box=mm?mm.getBoundingClientRect():null,
      kids=mm?mm.querySelectorAll('mi,mo,mn').length:0;
  var math={found:!!mm,mathml:!!(mm&&typeof MathMLElement!=='undefined'&&mm instanceof MathMLElement),
            w:box?box.width:0,h:box?box.height:0,tokens:kids};
  var d=document.createElement('pre');d.id='__probe';
  d.textContent=JSON.stringify({errors:window.__errs,svgs:document.querySelectorAll('svg').length,first:first,
                                math:math});
  document.body.appendChild(d);});
</script>"""


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    d = tmp_path_factory.mktemp("browser")
    return report.build(_synthetic.doc(), d)


def test_loads_without_console_errors(page, tmp_path):
    probed = tmp_path / "probed.html"
    probed.write_text(page.read_text(encoding="utf-8").replace("<head>", "<head>" + PROBE, 1), encoding="utf-8")
    r = _chromium.run(BINARY, tmp_path / "profile", "--virtual-time-budget=5000", "--dump-dom", probed.as_uri())
    m = re.search(r'<pre id="__probe">(.*?)</pre>', r.stdout, re.S)
    assert m, f"the page did not finish loading in Chromium (rc={r.returncode}): {r.stderr[-2000:]}"
    probe = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<")
                       .replace("&gt;", ">"))
    assert probe["errors"] == []
    assert probe["svgs"] >= 4
    assert probe["first"] == "wang2024/thm-4.5"  # sorted by severity, descending: the one violated claim
    # issue 34: a statement's formula is a MathML element the browser lays out (not LaTeX source in a code font)
    m = probe["math"]
    assert m["found"] and m["mathml"] and m["tokens"] > 0 and m["w"] > 0 and m["h"] > 0, m
    uncaught = [ln for ln in r.stderr.splitlines() if "CONSOLE" in ln and ("Uncaught" in ln or "Error" in ln)]
    assert uncaught == []


def test_probe_sees_errors(tmp_path):
    """The probe itself works: a broken page is reported (so the test above can fail)."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!doctype html><html><head></head><body><img src='missing.png'>"
                   "<script>console.error('boom');</script></body></html>")
    bad.write_text(bad.read_text().replace("<head>", "<head>" + PROBE, 1))
    r = _chromium.run(BINARY, tmp_path / "profile", "--virtual-time-budget=5000", "--dump-dom", bad.as_uri())
    m = re.search(r'<pre id="__probe">(.*?)</pre>', r.stdout, re.S)
    assert m and "console.error boom" in m.group(1) and "resource IMG" in m.group(1)


@pytest.mark.e2e
def test_screenshot_is_not_blank(page, tmp_path):
    import matplotlib.image as mpimg

    png = tmp_path / "shot.png"
    r = _chromium.run(BINARY, tmp_path / "profile", f"--screenshot={png}", "--window-size=1280,1600",
                      page.as_uri())
    assert png.exists(), f"no screenshot (rc={r.returncode}): {r.stderr[-2000:]}"
    img = mpimg.imread(png)[..., :3]
    assert img.shape[0] >= 1000 and img.shape[1] >= 1000
    nonwhite = (img < 0.95).any(axis=-1).mean()
    colours = len(np.unique((img * 255).astype(np.uint8).reshape(-1, 3), axis=0))
    assert nonwhite > 0.02, f"screenshot nearly blank ({nonwhite:.3%} non-white pixels)"
    assert colours > 20  # text, badges and table borders, not a flat fill


# Issue 16: the overview figure. After load: the overview's marks, and for each mark whether its link
# resolves to an element of the page and whether that element is a claim's <section>.
OVERVIEW_PROBE = """<script>
window.__errs=[];
window.addEventListener('error',function(e){window.__errs.push('js '+(e.message||e.type));},true);
(function(){var ce=console.error;console.error=function(){window.__errs.push('console.error '+
  Array.prototype.join.call(arguments,' '));ce.apply(console,arguments);};})();
window.addEventListener('load',function(){
  var fig=document.querySelector('#overview svg');var marks=document.querySelectorAll('#overview a.ov-mark');
  var bad=[];var claims=[];
  for(var i=0;i<marks.length;i++){var h=marks[i].getAttribute('href');claims.push(marks[i].getAttribute('data-mark'));
    var t=h&&h.charAt(0)==='#'?document.getElementById(h.slice(1)):null;
    if(!t||t.tagName!=='SECTION'){bad.push(h);}}
  var box=fig?fig.getBoundingClientRect():{width:0,height:0};
  var d=document.createElement('pre');d.id='__probe';
  d.textContent=JSON.stringify({errors:window.__errs,overview:!!fig,marks:marks.length,bad:bad,claims:claims,
    w:box.width,h:box.height});
  document.body.appendChild(d);});
</script>"""


def _probe_overview(html_path, tmp_path) -> dict:
    probed = tmp_path / "probed-overview.html"
    probed.write_text(html_path.read_text(encoding="utf-8").replace("<head>", "<head>" + OVERVIEW_PROBE, 1),
                      encoding="utf-8")
    r = _chromium.run(BINARY, tmp_path / "profile", "--virtual-time-budget=5000", "--dump-dom", probed.as_uri())
    m = re.search(r'<pre id="__probe">(.*?)</pre>', r.stdout, re.S)
    assert m, f"the page did not finish loading in Chromium (rc={r.returncode}): {r.stderr[-2000:]}"
    return json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<")
                      .replace("&gt;", ">"))


def test_overview_marks_link_to_claim_sections(page, tmp_path):
    from theory.report import summary

    probe = _probe_overview(page, tmp_path)
    assert probe["errors"] == [] and probe["overview"] and probe["w"] > 600 and probe["h"] > 100
    assert sorted(probe["claims"]) == sorted(r.id for r in verdicts.build_rows(_synthetic.doc()))
    assert probe["bad"] == []


@pytest.mark.e2e
def test_sweep_page_overview_in_chromium(tmp_path):
    from theory.runs.merge import merge
    from theory.runs.write import write

    docs = []
    for s in range(3):
        d = _synthetic.doc(seed=s)
        for r in d["records"]:
            r["seed"] = s
        d["_source"] = f"seed {s}"
        docs.append(d)
    out = write(merge(docs), tmp_path / "sweep")
    probe = _probe_overview(out, tmp_path)
    assert probe["errors"] == [] and probe["overview"] and probe["marks"] == len(set(probe["claims"])) > 100
    assert probe["bad"] == []
