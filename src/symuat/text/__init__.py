"""How statements and values are written, for every layer that shows them: :mod:`~symuat.text.printing`
(LaTeX of a statement), :mod:`~symuat.text.plain_text` (LaTeX → Unicode for the terminal) and
:mod:`~symuat.text.values` (an exact value as one line of Unicode or as LaTeX). Below the kernel's
explanations (:mod:`symuat.kernel.why`) and the renderers (:mod:`symuat.render`), which both use them."""
