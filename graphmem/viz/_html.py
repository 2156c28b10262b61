"""The page itself: the template of ``viz/graph.html`` filled in, with vis-network, the
page's script and styles in-lined, the data embedded as JSON that cannot leave its
``<script>`` block, and a Content-Security-Policy that pins the two scripts by hash.

Example:
    >>> page = page_html("Ada & Bob", {"nodes": []})
    >>> "<title>Ada &amp; Bob</title>" in page, "https://" in page
    (True, False)
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from functools import lru_cache
from importlib import resources
from typing import Any

from graphmem._assets import asset_path

__all__ = ["page_html", "script_safe_json"]

#: vis-network build shipped inside pyvis 0.3.x.
_VIS_DIR = ("templates", "lib", "vis-9.1.2")

#: Characters that could end the JSON's ``<script>`` block or break it in older parsers.
_SCRIPT_JSON_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}
_PLACEHOLDER = re.compile(r"@@([A-Z_]+)@@")
#: Only these change how a browser reads a script block (``<script`` alone is harmless).
_SCRIPT_BREAKERS = re.compile(r"</script|<!--", re.IGNORECASE)


def page_html(title: str, page_data: dict[str, Any]) -> str:
    """Return the filled-in page: assets in-lined, data embedded, scripts pinned by hash."""
    vis_js, app_js = _vis_js(), _asset_text("viz", "graph.js")
    for script in (vis_js, app_js):
        if _SCRIPT_BREAKERS.search(script):
            raise RuntimeError("a script to in-line contains '</script' or '<!--'")
    style = _vis_css() + "\n" + _asset_text("viz", "style.css")
    if re.search(r"</style", style, re.IGNORECASE):
        raise RuntimeError("a stylesheet to in-line contains '</style'")
    csp = "; ".join(
        [
            "default-src 'none'",
            f"script-src {_csp_hash(vis_js)} {_csp_hash(app_js)}",
            "style-src 'unsafe-inline'",  # vis-network styles its elements from script
            "img-src data:",
            "font-src data:",
            "base-uri 'none'",
            "form-action 'none'",
        ]
    )
    escaped_title = html.escape(title, quote=True)
    return _fill_template(
        _asset_text("viz", "graph.html"),
        {
            "CSP": csp,
            "TITLE": escaped_title,
            "STYLE": style,
            "VIS_JS": vis_js,
            "DATA": script_safe_json(page_data),
            "APP_JS": app_js,
        },
    )


def _fill_template(template: str, values: dict[str, str]) -> str:
    """Replace every ``@@NAME@@`` in one pass, so no inserted text is searched again."""
    missing = set(_PLACEHOLDER.findall(template)) - values.keys()
    if missing:
        raise RuntimeError(f"no value for template placeholders {sorted(missing)}")
    return _PLACEHOLDER.sub(lambda match: values[match.group(1)], template)


def script_safe_json(value: object) -> str:
    """Return JSON that cannot end or escape the ``<script>`` block holding it.

    Example:
        >>> script_safe_json({"name": "</script><b>&"})
        '{"name":"\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e\\\\u0026"}'
    """
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.translate(_SCRIPT_JSON_ESCAPES)


def _csp_hash(script: str) -> str:
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def _asset_text(*parts: str) -> str:
    return asset_path(*parts).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def _vis_js() -> str:
    """Return pyvis's vis-network bundle, ready to in-line.

    The bundle holds a few URLs that are never fetched (licence headers, error messages, the
    SVG namespace). ``://`` becomes ``:\\/\\/``, which means the same inside JavaScript strings,
    regular expressions and comments, so the page holds no URL at all.
    """
    return _pyvis_vis_file("vis-network.min.js").replace("://", ":\\/\\/")


@lru_cache(maxsize=1)
def _vis_css() -> str:
    return _pyvis_vis_file("vis-network.css")


def _pyvis_vis_file(name: str) -> str:
    resource = resources.files("pyvis").joinpath(*_VIS_DIR, name)
    if not resource.is_file():
        raise FileNotFoundError(
            f"pyvis no longer ships {'/'.join((*_VIS_DIR, name))}; graphmem.viz needs pyvis 0.3.x"
        )
    return resource.read_text(encoding="utf-8")
