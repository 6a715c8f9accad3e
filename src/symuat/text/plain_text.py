r"""LaTeX → Unicode plain text, for the terminal and the derived why lines.

Not a LaTeX parser: enough for symuat's statements. Below the kernel's explanations
(:mod:`symuat.kernel.why`) and the renderers (:mod:`symuat.render.report`), which both use it.

>>> pretty(r"\mathbf R_n^{T}\mathbf R_{n'}=\mathbf R_{n'-n}")
"RₙᵀR_(n')=R_(n'-n)"
"""

from __future__ import annotations

import re

_SYMBOLS = {
    r"\diamond": "⋄", r"\otimes": "⊗", r"\oplus": "⊕", r"\sigma": "σ", r"\alpha": "α", r"\beta": "β",
    r"\theta": "θ", r"\gamma": "γ", r"\Gamma": "Γ", r"\rho": "ρ", r"\tau": "τ", r"\phi": "φ",
    r"\omega": "ω", r"\eta": "η", r"\top": "T", r"\varepsilon": "ε", r"\epsilon": "ε", r"\delta": "δ", r"\lambda": "λ",
    r"\Lambda": "Λ", r"\Delta": "Δ", r"\nu": "ν", r"\xi": "ξ", r"\psi": "ψ", r"\Omega": "Ω", r"\Sigma": "Σ", r"\sum": "Σ", r"\prod": "Π", r"\leq": "≤", r"\le": "≤",
    r"\geq": "≥", r"\ge": "≥", r"\neq": "≠", r"\ne": "≠", r"\notin": "∉", r"\in": "∈",
    r"\mapsto": "↦", r"\rightarrow": "→", r"\to": "→", r"\Rightarrow": "⇒", r"\partial": "∂",
    r"\cdots": "⋯", r"\ldots": "…", r"\dots": "…", r"\cdot": "·", r"\forall": "∀", r"\exists": "∃",
    r"\cup": "∪", r"\cap": "∩", r"\emptyset": "∅", r"\infty": "∞", r"\approx": "≈", r"\equiv": "≡",
    r"\subseteq": "⊆", r"\times": "×", r"\ast": "*", r"\neg": "¬", r"\circ": "∘", r"\pi": "π",
    r"\mu": "μ", r"\nabla": "∇", r"\|": "‖", r"\{": "{", r"\}": "}", r"\#": "#", r"\%": "%", r"\_": "_",
    r"\dim": "dim ", r"\min": "min", r"\max": "max", r"\det": "det", r"\log": "log",
    r"\exp": "exp", r"\quad": "  ", r"\qquad": "   ", r"\,": " ", r"\;": " ", r"\ ": " ", r"\!": "",
}
_SUB = dict(zip("0123456789+-=()aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ"))
_SUP = dict(zip("0123456789+-=()inT", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁱⁿᵀ"))
_ACCENT = {"hat": "\u0302", "mathring": "\u030a", "tilde": "\u0303", "bar": "\u0304",
           "overline": "\u0305", "underline": "", "vec": "\u20d7"}
_DROP_WITH_ARG = ("mathbf", "boldsymbol", "mathrm", "mathit", "text", "texttt", "operatorname",
                  "mathcal", "textbf", "textit", "rm")


def _script(body: str, table: dict, mark: str) -> str:
    if body.strip(",") and all(ch in table or ch == "," for ch in body):  # W'_{3,1} → W'₃,₁
        return "".join(table.get(ch, ch) for ch in body)
    wrapped = len(body) == 1 or (body.startswith("(") and body.endswith(")") and body.count("(") == 1)
    return mark + (body if wrapped else f"({body})")


def pretty(tex: str) -> str:
    r"""A small LaTeX → Unicode prettifier for terminal output (not a LaTeX parser: enough for
    symuat's statements).

    >>> pretty(r"\mathbf W\diamond\mathbf x=\mathbf W^{T}\mathbf x")
    'W⋄x=Wᵀx'
    >>> pretty(r"(\mathbf W'_{HVO})^{T}\mathbf x'=\mathring{\mathbf H}'")
    "(W'_(HVO))ᵀx'=H̊'"
    >>> pretty(r"\operatorname{density}(W'_{HV})=\frac{1}{h}")
    "density(W'_(HV))=1/h"
    >>> pretty(r"\mathbf W^{s}=\frac12(\mathbf W+\mathbf W^{T})")
    'W^s=1/2(W+Wᵀ)'
    """
    s = tex.replace(r"\{", "\x01").replace(r"\}", "\x02").replace("$", "")
    s = re.sub(r"\\(left|right|big|Big|bigg|Bigg)(?=[\\()\[\]|.\x01\x02])\.?", "", s)
    s = s.replace(r"\textstyle", "").replace(r"\displaystyle", "").replace(r"\limits", "")
    s = re.sub(r"\\mathbb\s*\{?R\}?", "ℝ", s)
    s = re.sub(r"\\mathbf\s*([01])", r"\1", s)
    s = re.sub(r"\\frac\s*([0-9A-Za-z])\s*([0-9A-Za-z])", r"\\frac{\1}{\2}", s)  # \frac12
    for k in sorted(_SYMBOLS, key=len, reverse=True):
        if k in (r"\{", r"\}"):
            continue
        s = re.sub(re.escape(k) + (r"(?![A-Za-z])" if k[-1].isalpha() else ""), _SYMBOLS[k], s)
    s = re.sub(r"\\(mathbf|boldsymbol|mathrm|rm|mathit)\s*(?=[A-Za-z0-9\\α-ω])", "", s)
    for _ in range(8):  # innermost groups first
        before = s
        s = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}",
                   lambda m: (m[1] if re.fullmatch(r"[\w']+", m[1]) else f"({m[1]})") + "/" +
                   (m[2] if re.fullmatch(r"[\w']+", m[2]) else f"({m[2]})"), s)
        s = re.sub(r"\\sqrt\{([^{}]*)\}", lambda m: "√" + (m[1] if len(m[1]) == 1 else f"({m[1]})"), s)
        s = re.sub(r"\\overset\{([^{}]*)\}\{([^{}]*)\}", lambda m: f"{m[2]}⁽{m[1]}⁾", s)
        s = re.sub(r"\\(" + "|".join(_ACCENT) + r")\{([^{}]*)\}",
                   lambda m: m[2] + _ACCENT[m[1]] if len(m[2]) == 1 else m[2], s)
        s = re.sub(r"\\operatorname\{([^{}]*)\}(?=[A-Za-z0-9\\])", r"\1 ", s)
        s = re.sub(r"\\(" + "|".join(_DROP_WITH_ARG) + r")\s*\{([^{}]*)\}", r"\2", s)
        s = re.sub(r"_\{([^{}]*)\}", lambda m: _script(m[1], _SUB, "_"), s)
        s = re.sub(r"\^\{([^{}]*)\}", lambda m: _script(m[1], _SUP, "^"), s)
        if s == before:
            break
    s = re.sub(r"\\(" + "|".join(_ACCENT) + r")\s*\\?(\w)", lambda m: m[2] + _ACCENT[m[1]], s)
    s = re.sub(r"\^T(?![A-Za-z])", "ᵀ", s)
    s = re.sub(r"\^([0-9in])(?![A-Za-z0-9])", lambda m: _SUP[m[1]], s)
    s = re.sub(r"_([0-9])(?![0-9])", lambda m: _SUB[m[1]], s)
    s = re.sub(r"_([a-z])(?![A-Za-z0-9])", lambda m: _SUB.get(m[1], "_" + m[1]), s)
    s = re.sub(r"\\([A-Za-z]+)(?![A-Za-z])\s*(?=[A-Za-z0-9])", r"\1 ", s)
    s = re.sub(r"\\([A-Za-z]+)", r"\1", s)
    s = s.replace("{", "").replace("}", "").replace("\x01", "{").replace("\x02", "}")
    return re.sub(r"  +", " ", s).strip()

