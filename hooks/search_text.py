"""Search without TeX: plain-text renderings of math for Material's search index.

Material's search index holds each page's text with its math as TeX source
(``\\(r_i = L/\\lambda_i\\)``); after the build `clean_search_index` rewrites the index with
every ``\\( \\)`` and ``\\[ \\]`` span (and, on notebook pages, ``$ $`` and ``$$ $$``) turned
into plain text (``r_i = L/λ_i``, see `tex_to_text`). `strip_math` also gives the plain page
titles of "Cite this page".
"""

from __future__ import annotations

import json
import re
from pathlib import Path

__all__ = ["clean_search_index", "strip_math", "tex_to_text"]

_SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "vartheta": "θ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ",
    "nu": "ν", "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ", "varphi": "φ",
    "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ",
    "Pi": "Π", "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
    "cdot": "·", "times": "×", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "neq": "≠", "ne": "≠",
    "approx": "≈", "sim": "∼", "equiv": "≡", "infty": "∞", "sum": "Σ", "prod": "Π", "to": "→",
    "rightarrow": "→", "mapsto": "↦", "in": "∈", "pm": "±", "mp": "∓", "ldots": "…", "dots": "…",
    "cdots": "⋯", "lVert": "‖", "rVert": "‖", "Vert": "‖", "lvert": "|", "rvert": "|", "mid": "|",
    "langle": "⟨", "rangle": "⟩", "sqrt": "√", "partial": "∂", "nabla": "∇", "odot": "⊙",
    "otimes": "⊗", "oplus": "⊕", "top": "ᵀ", "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈",
    "rceil": "⌉", "circ": "∘", "forall": "∀", "exists": "∃", "quad": " ", "qquad": " ",
    "{": "{", "}": "}", "%": "%", "_": "_", "#": "#", "&": "&", ",": " ", ";": " ", ":": " ", "!": "",
    " ": " ",
}
_DROPPED = {"left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr", "displaystyle",
            "textstyle", "nonumber", "notag", "limits", "underbrace", "overbrace", "tag"}
_WRAPPERS = re.compile(r"\\(?:text|textrm|textit|textbf|mathrm|mathbf|mathit|mathsf|mathtt|mathcal|mathbb|"
                       r"boldsymbol|bm|operatorname|hat|tilde|bar|vec|overline|underline)\s*\{([^{}]*)\}")
_ROOT = re.compile(r"\\sqrt\s*\{([^{}]*)\}")
_FRACTION = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_ENVIRONMENT = re.compile(r"\\(?:begin|end)\s*\{[^{}]*\}(?:\{[^{}]*\})?")
_COMMAND = re.compile(r"\\([A-Za-z]+|.)")
_MATH = re.compile(r"\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL)
_DOLLAR_MATH = re.compile(r"\$\$(.+?)\$\$|\$([^$\s][^$]*?)\$", re.DOTALL)  # notebook cells


def tex_to_text(tex: str) -> str:
    """A readable plain-text rendering of a TeX formula, with no backslash commands left.

    >>> tex_to_text(r"r_i = L/\\lambda_i")
    'r_i = L/λ_i'
    >>> tex_to_text(r"\\frac{\\sin(m\\theta)}{\\sqrt{d}} \\le \\text{base}^{2i/d}")
    '(sin(mθ))/(√(d)) ≤ base^2i/d'
    """
    text = _ENVIRONMENT.sub(" ", tex).replace("\\\\", " ").replace("&", " ")
    for _ in range(8):  # innermost first: nested fractions and wrappers
        new = _FRACTION.sub(r"(\1)/(\2)", _ROOT.sub(r"√(\1)", _WRAPPERS.sub(r"\1", text)))
        if new == text:
            break
        text = new

    def command(match: re.Match[str]) -> str:
        name = match[1]
        if name in _DROPPED:
            return ""
        return _SYMBOLS.get(name, name)

    text = _COMMAND.sub(command, text)
    text = re.sub(r"[{}]", "", text)
    return re.sub(r"\s+", " ", text).strip()


def strip_math(text: str, *, dollars: bool = False) -> str:
    """Every ``\\( \\)`` / ``\\[ \\]`` span of ``text`` (and ``$ $``, ``$$ $$`` if ``dollars``, as
    in notebooks) as plain text (see `tex_to_text`).

    >>> strip_math(r"wavelength \\(2\\pi\\) and $m\\theta_i$", dollars=True)
    'wavelength 2π and mθ_i'
    """
    def plain(match: re.Match[str]) -> str:
        return tex_to_text(match[1] if match[1] is not None else match[2])

    text = _MATH.sub(plain, text)
    return _DOLLAR_MATH.sub(plain, text) if dollars else text


def clean_search_index(path: Path) -> int:
    """Rewrite Material's search index without TeX; return how many entries changed."""
    data = json.loads(path.read_text(encoding="utf-8"))
    changed = 0
    for entry in data.get("docs", []):
        for key in ("title", "text"):
            value = entry.get(key)
            notebook = str(entry.get("location", "")).startswith("notebooks/")
            if isinstance(value, str) and ("\\(" in value or "\\[" in value or (notebook and "$" in value)):
                entry[key] = strip_math(value, dollars=notebook)
                changed += 1
    path.write_text(json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")), encoding="utf-8")
    return changed
