"""Soundness fuzzer for symuat's kernel (``decide.check_identity``).

Random typed matrix expressions over every node the kernel accepts — matrix symbols, identity
(size 1 included), zero and ones matrices, transpose, sums, products (and powers), scalar
coefficients (rationals, a dimension, a free scalar ``alpha``, ``1/sqrt(n)``), Kronecker
products, ``Vec``/``Unvec`` in both orders, the commutation matrix, ``Diamond`` (matrix ⋄ vector,
vector ⋄ matrix, matrix ⋄ matrix under both D5 definitions), σ, and head families (``HeadSum``,
``HeadMatrix``, ``Selector``, ``BlockSymbol``), and spec §9's nodes through typed templates
(:func:`structured_pair`, a fifth of the pairs: head-axis maps ``repeat_interleave``/tile, blocks of
one axis ``AxisBlock``, RoPE ``PairRotation`` in both layouts with the converter's permutation,
``Diag`` scalings, partial rotary) — are paired two ways:

* **equal pairs**: the expression against itself after known-true rewrites ((AB)ᵀ = BᵀAᵀ,
  distributivity, the Kronecker mixed product, the vec lemma, vec_r = K vec_c, ⋄ → its
  definition, unvec∘vec = id, identities and zeros, head-sum linearity, …);
* **unequal pairs**: the expression against a mutant (a dropped or added transpose, swapped
  Kronecker factors, the other flattening, a reversed product, the other ⋄ definition, another
  leaf, another coefficient, a dropped term or σ).

Each pair is judged by :func:`judge_equal`, an evaluator written here from the definitions (it
shares no code with ``symuat.kernel.evaluate``), with its own σ (``2t² − t + 3``). The kernel's
verdict is then classified: a positive status (proved, proved-at-sizes, numeric-only) on a pair
the judge shows unequal is a **false positive**; ``refuted`` on an equal pair is a **false
refutation** (its counterexample is also re-evaluated by the judge); an exception other than a
clear ``UnsupportedExpressionError`` is a **crash**.

Banded (sliding-window) masks and soft-capping are decided by their own procedures; they are
fuzzed apart (:func:`fuzz_bands` against masks materialised here, :func:`fuzz_softcap` against a
float64 softmax).

Run ``python tools/fuzz.py --pairs 5000 --out benchmarks/results/fuzz.md`` (or several seeds in
parallel with ``--json`` and combine them with ``--merge``).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from fractions import Fraction
from pathlib import Path

import numpy as np
import sympy as sp
from sympy import Identity, MatrixSymbol, OneMatrix, ZeroMatrix
from sympy.matrices.expressions import KroneckerProduct, MatAdd, MatMul, MatPow, MatrixExpr, Transpose

ROOT = Path(__file__).resolve().parents[1] / "src"  # the package's parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from symuat.expr.diamond import Diamond  # noqa: E402
from symuat.expr.elementwise import Sigma  # noqa: E402
from symuat.expr.heads import BlockSymbol, HeadMatrix, HeadSum, Selector  # noqa: E402
from symuat.expr.vec import Commutation, Unvec, Vec  # noqa: E402
from symuat.expr.decoder import Diag  # noqa: E402
from symuat.kernel.decide.instances import TOLERANCE  # noqa: E402
from symuat.kernel.head_maps import AxisBlock, repeat_interleave_map, rope_permutation, tile_map  # noqa: E402
from symuat.kernel.rotary import PairRotation  # noqa: E402

n, m, p, h = sp.symbols("n m p h", positive=True, integer=True)
ALPHA = sp.Symbol("alpha")
DIMS = (n, m, p)
#: the share of pairs drawn from spec §9's structured templates (:func:`structured_pair`)
STRUCTURED_SHARE = 0.2
COEFFS = (2, -1, sp.Rational(1, 2), 3, ALPHA, n, 2, -1, ALPHA, 1 / sp.sqrt(n))

# ------------------------------------------------------------------------------------------------
# the generator: expressions of a given shape; a shape is (row atoms, column atoms), sorted tuples
# of dimension symbols whose product is the length (the empty tuple is length 1)
# ------------------------------------------------------------------------------------------------


def _len(atoms) -> sp.Expr:
    out = sp.Integer(1)
    for a in atoms:
        out *= a
    return out


def _srt(atoms) -> tuple:
    return tuple(sorted(atoms, key=str))


class Gen:
    def __init__(self, rng: random.Random, max_depth: int = 3):
        self.rng = rng
        self.max_depth = max_depth
        self.heads = 0

    def leaf(self, shape):
        r, c = shape
        tag = "".join(a.name for a in r) + "_" + "".join(a.name for a in c)
        name = f"{self.rng.choice('ABC')}{tag}"
        if self.rng.random() < 0.15 and (len(r) > 1 or len(c) > 1):
            return BlockSymbol("Q" + tag, r or (1,), c or (1,))
        return MatrixSymbol(name, _len(r), _len(c))

    def split(self, atoms):
        """A random split of ``atoms`` into two sorted parts."""
        atoms = list(atoms)
        self.rng.shuffle(atoms)
        k = self.rng.randint(0, len(atoms))
        return _srt(atoms[:k]), _srt(atoms[k:])

    def inner(self):
        return self.rng.choice([(n,), (m,), (p,), (), (n,)])

    def __call__(self, shape, depth=0):
        r, c = shape
        rng = self.rng
        if depth >= self.max_depth or rng.random() < 0.25:
            roll = rng.random()
            if r == c and roll < 0.12:
                return Identity(_len(r))
            if roll < 0.135:
                return ZeroMatrix(_len(r), _len(c))
            if roll < 0.16:
                return OneMatrix(_len(r), _len(c))
            return self.leaf(shape)
        d = depth + 1
        choices = ["T", "add", "mul", "mul", "coef", "sigma", "diamond", "diamond"]
        if len(r) + len(c) >= 2:
            choices += ["kron", "kron"]
        if not c and r:
            choices += ["vec", "vec"]
        if len(r) == 2:
            choices += ["K"]
        choices += ["unvec", "headsum", "pow"] if r == c else ["unvec", "headsum"]
        kind = rng.choice(choices)
        if kind == "T":
            return Transpose(self((c, r), d))
        if kind == "add":
            return MatAdd(self(shape, d), self(shape, d))
        if kind == "mul":
            k = self.inner()
            return MatMul(self((r, k), d), self((k, c), d))
        if kind == "pow":
            return MatPow(self((r, r), d), rng.choice([2, 3]))
        if kind == "coef":
            return MatMul(rng.choice(COEFFS), self(shape, d))
        if kind == "sigma":
            return Sigma(self(shape, d))
        if kind == "diamond":
            k = self.inner()
            if not c and rng.random() < 0.5:  # W ⋄ x (k×r ⋄ k×1) or x ⋄ W
                W, x = self((k, r), d), self((k, ()), d)
                if sp.sympify(W.shape[1]) == 1:
                    return Diamond(W, x) if rng.random() < 0.5 else MatMul(Transpose(W), x)
                return Diamond(W, x) if rng.random() < 0.5 else Diamond(x, W)
            if not c or not r and False:
                pass
            mm = rng.choice(["C-col", "C-prod"])
            if mm == "C-col":
                A, B = self((k, r), d), self((k, c), d)
            else:
                A, B = self((r, k), d), self((k, c), d)
            if sp.sympify(A.shape[1]) == 1 or sp.sympify(B.shape[1]) == 1:
                return MatMul(Transpose(A), B) if mm == "C-col" else MatMul(A, B)
            return Diamond(A, B, mm)
        if kind == "kron":
            r1, r2 = self.split(r)
            c1, c2 = self.split(c)
            return KroneckerProduct(self((r1, c1), d), self((r2, c2), d))
        if kind == "vec":
            a, b = self.split(r)
            order = rng.choice(["row", "col"])
            return Vec(self((a, b) if order == "row" else (b, a), d), order)
        if kind == "K":
            a, b = r
            return MatMul(Commutation(a, b), self(((b, a) if False else _srt((a, b)), c), d))
        if kind == "unvec":
            order = rng.choice(["row", "col"])
            return Unvec(self((_srt(r + c), ()), d), _len(r), _len(c), order)
        if kind == "headsum":
            i = sp.Symbol(f"i{self.heads}", integer=True)
            self.heads += 1
            k = self.inner()
            tag = "".join(a.name for a in r) + "_" + "".join(a.name for a in k)
            if rng.random() < 0.5:  # Σ_i H_i Y
                body = MatMul(HeadMatrix(f"H{tag}", i, h, _len(r), _len(k)), self((k, c), d))
            else:  # Σ_i G_i (e_iᵀ ⊗ I) Y: block i of Y, selected
                body = MatMul(HeadMatrix(f"G{tag}", i, h, _len(r), _len(k)),
                              KroneckerProduct(Transpose(Selector(i, h)), Identity(_len(k))),
                              self((_srt((h,) + k), c), d))
            return HeadSum(i, h, body)
        raise AssertionError(kind)


# ------------------------------------------------------------------------------------------------
# rewrites (true) and mutations (usually false), applied at a random node
# ------------------------------------------------------------------------------------------------


def _rows(e):
    return sp.sympify(e.shape[0])


def _cols(e):
    return sp.sympify(e.shape[1])


def _mats(e):
    return [a for a in e.args if isinstance(a, MatrixExpr)]


def _coeff(e):
    out = sp.Integer(1)
    for a in e.args:
        if not isinstance(a, MatrixExpr):
            out *= a
    return out


def true_rewrites(e):
    """Known-true rewrites applicable at the root of ``e`` (each returns an equal expression)."""
    out = []
    try:
        r, c = _rows(e), _cols(e)
    except Exception:
        return out
    out.append(lambda: Transpose(Transpose(e)))
    out.append(lambda: MatMul(Identity(r), e))
    out.append(lambda: MatMul(e, Identity(c)))
    out.append(lambda: MatAdd(e, ZeroMatrix(r, c)))
    out.append(lambda: MatMul(2, MatMul(sp.Rational(1, 2), e)))
    out.append(lambda: Unvec(Vec(e, "row"), r, c, "row"))
    out.append(lambda: Unvec(Vec(e, "col"), r, c, "col"))
    if isinstance(e, Transpose) and isinstance(e.arg, MatMul):
        mats, coeff = _mats(e.arg), _coeff(e.arg)
        out.append(lambda: MatMul(coeff, *[Transpose(a) for a in reversed(mats)]))
    if isinstance(e, Transpose) and isinstance(e.arg, MatAdd):
        out.append(lambda: MatAdd(*[Transpose(a) for a in e.arg.args]))
    if isinstance(e, Transpose) and isinstance(e.arg, KroneckerProduct):
        out.append(lambda: KroneckerProduct(*[Transpose(a) for a in e.arg.args]))
    if isinstance(e, Transpose) and isinstance(e.arg, Sigma):
        out.append(lambda: Sigma(Transpose(e.arg.arg)))
    if isinstance(e, MatAdd):
        out.append(lambda: MatAdd(*reversed(e.args)))
    if isinstance(e, MatMul):
        mats, coeff = _mats(e), _coeff(e)
        if len(mats) >= 2:
            out.append(lambda: MatMul(coeff, MatMul(*mats[:-1]), mats[-1]))
            out.append(lambda: MatMul(*mats[:-1], MatMul(coeff, mats[-1])))
            if isinstance(mats[-1], MatAdd):
                out.append(lambda: MatAdd(*[MatMul(coeff, *mats[:-1], t) for t in mats[-1].args]))
            if isinstance(mats[0], MatAdd):
                out.append(lambda: MatAdd(*[MatMul(coeff, t, *mats[1:]) for t in mats[0].args]))
            a, b = mats[-2], mats[-1]
            if isinstance(a, KroneckerProduct) and isinstance(b, KroneckerProduct) and len(a.args) == len(b.args) == 2 \
                    and all(_cols(x) == _rows(y) for x, y in zip(a.args, b.args)):
                out.append(lambda: MatMul(coeff, *mats[:-2],
                                          KroneckerProduct(MatMul(a.args[0], b.args[0]), MatMul(a.args[1], b.args[1]))))
        if len(mats) == 1 and coeff != 1 and isinstance(mats[0], MatAdd):
            out.append(lambda: MatAdd(*[MatMul(coeff, t) for t in mats[0].args]))
    if isinstance(e, MatPow):
        out.append(lambda: MatMul(*[e.base] * int(e.exp)))
    if isinstance(e, Diamond):
        out.append(lambda: e.doit(deep=False))
    if isinstance(e, Vec) and e.order == "row":
        X = e.arg
        out.append(lambda: MatMul(Commutation(_rows(X), _cols(X)), Vec(X, "col")))
        if isinstance(X, MatMul) and len(_mats(X)) >= 2:
            mats, coeff = _mats(X), _coeff(X)
            A, rest = mats[0], mats[1:]
            Y = rest[0] if len(rest) == 1 else MatMul(*rest)
            out.append(lambda: MatMul(coeff, KroneckerProduct(A, Identity(_cols(Y))), Vec(Y, "row")))
    if isinstance(e, Vec) and e.order == "col":
        X = e.arg
        if isinstance(X, MatMul) and len(_mats(X)) >= 2:
            mats, coeff = _mats(X), _coeff(X)
            A, rest = mats[0], mats[1:]
            Y = rest[0] if len(rest) == 1 else MatMul(*rest)
            out.append(lambda: MatMul(coeff, KroneckerProduct(Identity(_cols(Y)), A), Vec(Y, "col")))
    if isinstance(e, Vec) and isinstance(e.arg, MatAdd):
        out.append(lambda: MatAdd(*[Vec(t, e.order) for t in e.arg.args]))
    if isinstance(e, HeadSum) and isinstance(e.body, MatAdd):
        out.append(lambda: MatAdd(*[HeadSum(e.args[0], e.args[1], t) for t in e.body.args]))
    if isinstance(e, HeadSum) and isinstance(e.body, MatMul):
        mats = _mats(e.body)
        i = e.args[0]
        if len(mats) >= 2 and i not in mats[-1].free_symbols:
            out.append(lambda: MatMul(HeadSum(i, e.args[1], MatMul(_coeff(e.body), *mats[:-1])), mats[-1]))
    return out


def mutations(e, gen: Gen):
    """Small changes at the root of ``e`` that usually change its value."""
    out = []
    try:
        r, c = _rows(e), _cols(e)
    except Exception:
        return out
    if isinstance(e, Transpose):
        out.append(lambda: e.arg)
    if r == c:
        out.append(lambda: Transpose(e))
    if isinstance(e, KroneckerProduct):
        out.append(lambda: KroneckerProduct(*reversed(e.args)))
    if isinstance(e, Vec):
        out.append(lambda: Vec(e.arg, "col" if e.order == "row" else "row"))
    if isinstance(e, Unvec):
        out.append(lambda: Unvec(e.args[0], e.args[1], e.args[2], "col" if e.order == "row" else "row"))
    if isinstance(e, MatMul):
        mats, coeff = _mats(e), _coeff(e)
        if len(mats) >= 2:
            out.append(lambda: MatMul(coeff, *reversed(mats)))
        if coeff != 1:
            out.append(lambda: MatMul(coeff + 1, *mats))
            out.append(lambda: MatMul(*mats) if len(mats) > 1 else mats[0])
        else:
            out.append(lambda: MatMul(3, *mats))
    if isinstance(e, MatAdd):
        out.append(lambda: e.args[0])
        out.append(lambda: MatAdd(e.args[0], MatMul(-1, e.args[1]), *e.args[2:]))
    if isinstance(e, Diamond) and e.mm is not None:
        out.append(lambda: Diamond(e.left, e.right, "C-prod" if e.mm == "C-col" else "C-col"))
    if isinstance(e, Diamond):
        out.append(lambda: Diamond(e.right, e.left, e.mm) if e.mm else Diamond(e.right, e.left))
    if isinstance(e, Sigma):
        out.append(lambda: e.arg)
    if isinstance(e, Identity):
        out.append(lambda: ZeroMatrix(r, c))
    if isinstance(e, (MatrixSymbol, BlockSymbol)):
        out.append(lambda: MatMul(2, e))
        out.append(lambda: MatAdd(e, OneMatrix(r, c)))
    if isinstance(e, HeadSum):
        out.append(lambda: e.body.subs(e.args[0], 0) if False else MatMul(e.args[1], e))
    out.append(lambda: MatAdd(e, gen((gen_shape(e)), 1)))
    return out


def gen_shape(e):
    """A generator shape with the same lengths as ``e`` (row/column atoms recovered from the
    shape's factors)."""
    def atoms(x):
        x = sp.sympify(x)
        if x == 1:
            return ()
        out = []
        for f, k in sp.factor_list(x)[1]:
            out += [f] * k
        return _srt(out)

    return atoms(e.shape[0]), atoms(e.shape[1])


def _nodes(e, path=()):
    yield path, e
    if isinstance(e, MatrixExpr) and not isinstance(e, (MatrixSymbol, BlockSymbol, HeadMatrix, Selector, AxisBlock,
                                                           PairRotation)):
        for k, a in enumerate(e.args):
            if isinstance(a, MatrixExpr):
                yield from _nodes(a, path + (k,))


def _replace(e, path, new):
    if not path:
        return new
    args = list(e.args)
    args[path[0]] = _replace(args[path[0]], path[1:], new)
    return e.func(*args)


def apply_random(e, rng: random.Random, make) -> tuple:
    """Apply one option of ``make(node)`` at a random node; returns (new expression, rule name)."""
    nodes = list(_nodes(e))
    rng.shuffle(nodes)
    for path, node in nodes:
        options = make(node)
        if options:
            f = rng.choice(options)
            try:
                return _replace(e, path, f()), f"{type(node).__name__}@{len(path)}"
            except Exception:
                continue
    return None, None


# ------------------------------------------------------------------------------------------------
# the judge: an evaluator written from the definitions, independent of symuat.kernel.evaluate
# ------------------------------------------------------------------------------------------------


def judge_sigma(t):
    return 2 * t * t - t + 3


def _zeros(r, c):
    out = np.empty((r, c), dtype=object)
    out[...] = Fraction(0)
    return out


def _num(x, sizes, scalars):
    x = sp.sympify(x)
    x = x.subs({s: sizes[s.name] for s in x.free_symbols if s.name in sizes})
    x = x.subs({sp.Symbol(k): v for k, v in scalars.items()})
    x = sp.nsimplify(x)
    if x.is_Rational:
        return Fraction(int(x.p), int(x.q))
    return x  # an algebraic number such as sqrt(2)/2


class Judge:
    def __init__(self, sizes: dict, values: dict, scalars: dict, sigma=judge_sigma):
        self.sizes = {str(k): v for k, v in sizes.items()}
        self.symsizes = {k: v for k, v in sizes.items() if isinstance(k, sp.Symbol)}
        self.values = values
        self.scalars = scalars
        self.sigma = sigma
        self.heads: dict = {}

    def dim(self, x) -> int:
        x = sp.sympify(x)
        v = x.subs(self.symsizes) if self.symsizes else x
        if v.free_symbols:
            v = v.subs({s: self.sizes[s.name] for s in v.free_symbols if s.name in self.sizes})
        return int(v)

    def __call__(self, e) -> np.ndarray:
        if isinstance(e, MatrixSymbol):
            return self.values[e.name]
        if isinstance(e, BlockSymbol):
            return self.values[e.name]
        if isinstance(e, HeadMatrix):
            return self.values[e.name][self.heads[e.args[1]]]
        if isinstance(e, Selector):
            out = _zeros(self.dim(e.args[1]), 1)
            out[self.heads[e.args[0]], 0] = Fraction(1)
            return out
        if isinstance(e, Identity):
            k = self.dim(e.shape[0])
            out = _zeros(k, k)
            for a in range(k):
                out[a, a] = Fraction(1)
            return out
        if isinstance(e, ZeroMatrix):
            return _zeros(self.dim(e.shape[0]), self.dim(e.shape[1]))
        if isinstance(e, OneMatrix):
            out = _zeros(self.dim(e.shape[0]), self.dim(e.shape[1]))
            out[...] = Fraction(1)
            return out
        if isinstance(e, Transpose):
            return self(e.arg).T.copy()
        if isinstance(e, MatAdd):
            parts = [self(a) for a in e.args]
            if len({q.shape for q in parts}) != 1:
                raise ValueError("sum of different shapes")
            total = parts[0]
            for q in parts[1:]:
                total = total + q
            return total
        if isinstance(e, MatMul):
            coeff = Fraction(1)
            out = None
            for a in e.args:
                if not isinstance(a, MatrixExpr):
                    coeff = coeff * _num(a, self.sizes, self.scalars)
                    continue
                v = self(a)
                if out is not None and out.shape[1] != v.shape[0]:
                    raise ValueError("product of non-conformable factors")
                out = v if out is None else _matmul(out, v)
            return out * coeff if coeff != 1 else out
        if isinstance(e, MatPow):
            v = self(e.base)
            out = v
            for _ in range(int(e.exp) - 1):
                out = _matmul(out, v)
            return out
        if isinstance(e, KroneckerProduct):
            out = self(e.args[0])
            for a in e.args[1:]:
                b = self(a)
                res = _zeros(out.shape[0] * b.shape[0], out.shape[1] * b.shape[1])
                for i in range(out.shape[0]):
                    for j in range(out.shape[1]):
                        res[i * b.shape[0]:(i + 1) * b.shape[0], j * b.shape[1]:(j + 1) * b.shape[1]] = out[i, j] * b
                out = res
            return out
        if isinstance(e, Vec):
            X = self(e.arg)
            r, c = X.shape
            out = _zeros(r * c, 1)
            for i in range(r):
                for j in range(c):
                    out[i * c + j if e.order == "row" else j * r + i, 0] = X[i, j]
            return out
        if isinstance(e, Unvec):
            v = self(e.args[0])
            r, c = self.dim(e.args[1]), self.dim(e.args[2])
            if v.shape != (r * c, 1):
                raise ValueError("unvec of a wrong length")
            out = _zeros(r, c)
            for i in range(r):
                for j in range(c):
                    out[i, j] = v[i * c + j if e.order == "row" else j * r + i, 0]
            return out
        if isinstance(e, Commutation):
            a, b = self.dim(e.args[0]), self.dim(e.args[1])
            out = _zeros(a * b, a * b)
            for i in range(a):
                for j in range(b):
                    out[i * b + j, j * a + i] = Fraction(1)  # vec_r(X) = K vec_c(X), X a×b
            return out
        if isinstance(e, Diamond):
            A, B = self(e.left), self(e.right)
            kind = e.kind
            if kind == "vm":
                A, B = B, A
            if kind in ("mv", "vm") or e.mm == "C-col":
                if A.shape[0] != B.shape[0]:
                    raise ValueError("diamond rows differ")
                return _matmul(A.T.copy(), B)
            if A.shape[1] != B.shape[0]:
                raise ValueError("C-prod not conformable")
            return _matmul(A, B)
        if isinstance(e, Sigma):
            v = self(e.arg)
            out = np.empty(v.shape, dtype=object)
            for idx, x in np.ndenumerate(v):
                out[idx] = self.sigma(x)
            return out
        if isinstance(e, AxisBlock):  # [u = o + j]
            rows, o, m = self.dim(e.shape[0]), self.dim(e.args[1]), self.dim(e.shape[1])
            out = _zeros(rows, m)
            for j in range(m):
                out[o + j, j] = Fraction(1)
            return out
        if isinstance(e, PairRotation):  # block k (rows 2k, 2k+1 of the leaf) on pair k of the layout
            k2 = self.dim(e.args[1])
            blocks = self.values[e.name]
            out = _zeros(2 * k2, 2 * k2)
            for k in range(k2):
                for t in range(2):
                    for t2 in range(2):
                        i, j = ((t * k2 + k, t2 * k2 + k) if e.layout == "half" else (2 * k + t, 2 * k + t2))
                        out[i, j] = blocks[2 * k + t, t2]
            return out
        if isinstance(e, Diag):
            v = self(e.arg)
            out = _zeros(v.shape[0], v.shape[0])
            for k in range(v.shape[0]):
                out[k, k] = v[k, 0]
            return out
        if isinstance(e, HeadSum):
            i = e.args[0]
            total = None
            for k in range(self.dim(e.args[1])):
                self.heads[i] = k
                part = self(e.body)
                total = part if total is None else total + part
            del self.heads[i]
            return total
        raise TypeError(f"judge: no rule for {type(e).__name__}")


def _matmul(a, b):
    out = _zeros(a.shape[0], b.shape[1])
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            s = Fraction(0)
            for k in range(a.shape[1]):
                s = s + a[i, k] * b[k, j]
            out[i, j] = s
    return out


def _leaves(*exprs) -> dict:
    out = {}
    for e in exprs:
        for node in sp.preorder_traversal(e):
            if isinstance(node, MatrixSymbol):
                out[node.name] = (node.rows, node.cols)
            elif isinstance(node, BlockSymbol):
                out[node.name] = node.shape
            elif isinstance(node, HeadMatrix):
                out[node.name] = (node.args[2], node.args[3], node.args[4])
            elif isinstance(node, PairRotation):
                out[node.name] = (2 * node.args[1], 2)
    return out


def _same(x, y) -> bool:
    if x == y:
        return True
    return sp.simplify(sp.sympify(x) - sp.sympify(y)) == 0


def judge_at(lhs, rhs, sizes: dict, values: dict, scalars: dict, sigma=judge_sigma):
    """``True`` equal, ``False`` different (or one side undefined), ``None`` both undefined."""
    outs = []
    for e in (lhs, rhs):
        try:
            outs.append(Judge(sizes, values, scalars, sigma)(e))
        except (ValueError, IndexError):
            outs.append(None)
    a, b = outs
    if a is None and b is None:
        return None
    if a is None or b is None or a.shape != b.shape:
        return False
    return all(_same(x, y) for x, y in zip(a.flat, b.flat))


def judge_equal(lhs, rhs, seed: int = 0, tries: int = 6) -> bool | None:
    """The judge's own verdict: ``False`` if some size and random values make the sides differ,
    ``True`` if they agree everywhere tried, ``None`` if undefined everywhere."""
    rng = np.random.default_rng(seed)
    shapes = _leaves(lhs, rhs)
    dims_all = sorted({s for e in (lhs, rhs) for s in sp.preorder_traversal(e)
                       if isinstance(s, sp.Symbol) and s.is_positive and s.is_integer}, key=str)
    seen = False
    for t in range(tries):
        sizes = {s: int(rng.integers(1, 4)) for s in dims_all}
        if t == 0:
            sizes = {s: 2 + k % 2 for k, s in enumerate(dims_all)}
        values = {}
        for name, shape in shapes.items():
            dims_ = tuple(int(sp.sympify(x).subs(sizes)) for x in shape)
            values[name] = np.vectorize(Fraction, otypes=[object])(rng.integers(-3, 4, size=dims_))
        scalars = {"alpha": Fraction(int(rng.choice([-2, -1, 2, 3])))}
        res = judge_at(lhs, rhs, sizes, values, scalars)
        if res is False:
            return False
        seen = seen or res is True
    return True if seen else None


# ------------------------------------------------------------------------------------------------
# running the kernel on pairs
# ------------------------------------------------------------------------------------------------


def make_pair(rng: random.Random, equal: bool, max_depth: int = 3):
    if rng.random() < STRUCTURED_SHARE:
        return structured_pair(rng, equal)
    gen = Gen(rng, max_depth)
    for _ in range(50):
        shape = (rng.choice([(n,), (m,), (), (n, m)]), rng.choice([(n,), (m,), (), (p,)]))
        e = gen(shape)
        if equal:
            out, rule = e, None
            rules = []
            for _ in range(rng.randint(1, 3)):
                new, rule = apply_random(out, rng, true_rewrites)
                if new is not None:
                    out, rules = new, rules + [rule]
            if rules:
                return e, out, "+".join(rules)
        else:
            new, rule = apply_random(e, rng, lambda node: mutations(node, gen))
            if new is not None:
                return e, new, rule
    raise RuntimeError("could not build a pair")


# ------------------------------------------------------------------------------------------------
# spec §9's kernel nodes: structured pairs over head maps, blocks of one axis, RoPE pair rotations,
# diagonal scalings (typed templates with random dimensions and leaves; equal forms by known identities,
# unequal by the shipped kind of mistake), plus banded masks and soft-capping (decided apart)
# ------------------------------------------------------------------------------------------------

STRUCTURED = ("axis-block", "head-map", "rope", "diag", "partial-rotary")


def _pick2(rng):
    a, b = rng.sample(list(DIMS), 2)
    return a, b


def structured_pair(rng: random.Random, equal: bool, kind: str | None = None):
    """``(lhs, rhs, rule)`` over one of :data:`STRUCTURED` (random dimensions, leaves, wrappers)."""
    kind = kind or rng.choice(STRUCTURED)
    tag = f"{kind}#{rng.randrange(10**6)}"
    if kind == "axis-block":  # WP6: split ∘ assemble of a per-group layout, with optional outer axes
        r, K = _pick2(rng)
        outer = rng.choice([(), (h,)])
        wrap = (lambda E: KroneckerProduct(Identity(_len(outer)), E)) if outer else (lambda E: E)
        Eq, Ek, Ev = AxisBlock(r + 2, 0, r), AxisBlock(r + 2, r, 1), AxisBlock(r + 2, r + 1, 1)
        leaf = lambda name, cols: BlockSymbol(name, (K,), outer + cols) if outer else MatrixSymbol(name, K, _len(cols))
        Q, Kk, V = leaf("Yq" + tag[-2:], (r,)), leaf("Yk" + tag[-2:], ()), leaf("Yv" + tag[-2:], ())
        F = MatAdd(MatMul(Q, Transpose(wrap(Eq))), MatMul(Kk, Transpose(wrap(Ek))), MatMul(V, Transpose(wrap(Ev))))
        if equal:
            part, W = rng.choice([(Eq, Q), (Ek, Kk), (Ev, V)])
            return MatMul(F, wrap(part)), W, "split∘assemble"
        part, W, rule = rng.choice([(Ev, Kk, "V read for K"), (AxisBlock(r + 2, 1, r), Q, "Q shifted by one"),
                                    (AxisBlock(r + 2, r - 1, 1), Kk, "K one block early"), (Ek, V, "K read for V")])
        return MatMul(F, wrap(part)), W, rule
    if kind == "head-map":  # WP5: repeat_interleave vs tiling of the head axis
        g, r = _pick2(rng)
        c = rng.choice([(), (p,) if p not in (g, r) else (n,)])
        RI, TI = repeat_interleave_map(g, r), tile_map(g, r)
        Y = MatrixSymbol("Yh" + tag[-2:], g, _len(c))
        if equal:
            Rm = rng.choice([RI, TI])
            return MatMul(Transpose(Rm), Rm, Y), MatMul(r, Y), "RᵀR = r·I"
        return rng.choice([(MatMul(RI, Y), MatMul(TI, Y), "tile for repeat_interleave"),
                           (MatMul(Transpose(RI), RI, Y), Y, "RᵀR without its r"),
                           (MatMul(Transpose(RI), TI, Y), MatMul(r, Y), "RᵀT ≠ r·I")])
    if kind == "rope":  # WP7: the converter's permutation against the two pair layouts
        hh, e = _pick2(rng)
        q = BlockSymbol("q" + tag[-2:], (1,), (hh, 2, e))
        P = rope_permutation(hh, e)
        Ri = KroneckerProduct(Identity(hh), PairRotation("rho", e, "interleaved"))
        Rh = KroneckerProduct(Identity(hh), PairRotation("rho", e, "half"))
        if equal:
            return rng.choice([(MatMul(q, P, Ri), MatMul(q, Rh, P), "(qP)Rint = (qRhalf)P"),
                               (MatMul(P, Ri, Transpose(P)), Rh, "P Rint Pᵀ = Rhalf")])
        Ri2 = KroneckerProduct(Identity(hh), Transpose(PairRotation("rho", e, "interleaved")))
        Rj = KroneckerProduct(Identity(hh), PairRotation("rho2", e, "interleaved"))
        return rng.choice([(MatMul(q, P, Ri2), MatMul(q, Rh, P), "the rotation transposed"),
                           (MatMul(q, P, Rj), MatMul(q, Rh, P), "another rotation"),
                           (MatMul(P, Ri, Transpose(P)), Transpose(Rh), "Rhalfᵀ")])
    if kind == "diag":  # WP1: a diagonal scaling on either side
        N_, M_ = _pick2(rng)
        s, gam = MatrixSymbol("s" + tag[-2:], N_, 1), MatrixSymbol("g" + tag[-2:], M_, 1)
        X = MatrixSymbol("X" + tag[-2:], N_, M_)
        W = MatrixSymbol("W" + tag[-2:], M_, M_)
        if equal:
            return rng.choice([(MatMul(Diag(s), X, Diag(gam), W), MatMul(Diag(s), MatMul(X, MatMul(Diag(gam), W))),
                                "associativity"),
                               (Transpose(MatMul(Diag(s), X, Diag(gam))), MatMul(Diag(gam), Transpose(X), Diag(s)),
                                "diag is symmetric")])
        return rng.choice([(MatMul(Diag(s), X, Diag(gam), W), MatMul(Diag(s), X, W, Diag(gam)), "wrong side"),
                           (Transpose(MatMul(Diag(s), X, Diag(gam))), MatMul(Transpose(X), Diag(s)), "a scale dropped")])
    if kind == "partial-rotary":  # WP8: the rotated block [0, 2e) and the rest [2e, 2e+p) of a head
        e, pp = _pick2(rng)
        J, Jp = AxisBlock(2 * e + pp, 0, (2, e)), AxisBlock(2 * e + pp, 2 * e, pp)
        A, B = PairRotation("rho", e, "half"), PairRotation("rho2", e, "half")
        part = lambda X: MatAdd(MatMul(J, X, Transpose(J)), MatMul(Jp, Transpose(Jp)))
        if equal:
            return MatMul(Transpose(part(A)), part(B)), part(MatMul(Transpose(A), B)), "RᵀR' blockwise"
        return rng.choice([(MatMul(Transpose(part(A)), part(B)), part(MatMul(A, Transpose(B))), "product reversed"),
                           (MatMul(part(A), part(B)), part(MatMul(Transpose(A), B)), "a transpose dropped")])
    raise ValueError(kind)


def fuzz_structured(pairs: int, seed: int = 0) -> dict:
    """Structured pairs over spec §9's nodes, judged like the others (:func:`run_pair`)."""
    rng = random.Random(seed)
    counts = {"equal": Counter(), "unequal": Counter()}
    kinds, problems = Counter(), []
    for k in range(pairs):
        equal = k % 2 == 0
        kind = STRUCTURED[(k // 2) % len(STRUCTURED)]
        lhs, rhs, rule = structured_pair(rng, equal, kind)
        outcome, detail = run_pair(lhs, rhs, equal, seed=k)
        counts["equal" if equal else "unequal"][outcome] += 1
        kinds[kind] += 1
        if outcome in ("false-refuted", "false-positive", "crash", "generator-bug"):
            problems.append((k, kind, outcome, rule, detail))
    return {"counts": counts, "kinds": kinds, "problems": problems}


def fuzz_bands(pairs: int, seed: int = 0) -> list:
    """Random pairs of sliding-window conventions (offset bands in a symbolic ``w``): the kernel's
    :func:`symuat.kernel.decide.bands.check_same_mask` against materialised masks built here. Returns the
    problems (a proved pair whose masks differ somewhere, a refuted one whose witness masks agree, a
    condition ``N ≤ b`` that the masks contradict)."""
    from symuat.kernel.decide import bands
    from symuat.kernel.status import Status

    rng = random.Random(seed)
    w = bands.WINDOW
    los = [None, 0, 0, 1, -w, -(w - 1), 1 - w]
    his = [None, w - 1, w, w + 1, 0, 2 * w]
    problems = []

    def own_mask(N, lo, hi, W):
        keep = np.zeros((N, N), dtype=int)
        for a in range(N):
            for b in range(N):
                off = a - b
                ok = (lo is None or off >= int(sp.sympify(lo).subs(w, W))) and \
                     (hi is None or off <= int(sp.sympify(hi).subs(w, W)))
                keep[a, b] = int(ok)
        return keep

    for k in range(pairs):
        (l1, h1), (l2, h2) = [(rng.choice(los), rng.choice(his)) for _ in range(2)]
        v = bands.check_same_mask(bands.Band(l1, h1, "a"), bands.Band(l2, h2, "b"))
        same = {(N, W): np.array_equal(own_mask(N, l1, h1, W), own_mask(N, l2, h2, W))
                for N in range(1, 9) for W in range(1, 6)}
        if v.status is Status.PROVED and not all(same.values()):
            problems.append((k, "proved but the masks differ", (l1, h1), (l2, h2)))
        if v.status is Status.REFUTED:
            cex = v.counterexample.sizes
            if same[(cex["N"], cex["w"])]:
                problems.append((k, "refuted at a size where the masks agree", (l1, h1), (l2, h2)))
            bound = v.quantities["agree iff"].split("<=")[1].strip()
            for (N, W), ok in same.items():
                b = sp.sympify(bound)
                b = b.subs({x: W for x in b.free_symbols})
                if ok != bool(N <= b):
                    problems.append((k, f"condition N <= {bound} wrong at N={N}, w={W}", (l1, h1), (l2, h2)))
                    break
    return problems


def fuzz_softcap(pairs: int, seed: int = 0) -> list:
    """Random exact instances of the capped shift (WP3): ``refuted`` must be a float64 difference of the
    probabilities, ``numeric-only`` none (judged here with math.tanh and a softmax written out)."""
    import math

    from symuat.kernel.decide import softcap
    from symuat.kernel.status import Status

    rng = random.Random(seed)
    problems = []

    def probs(z):
        top = max(z)
        ex = [math.exp(t - top) for t in z]
        return [x / sum(ex) for x in ex]

    for k in range(pairs):
        z = [rng.randint(-3, 3) for _ in range(rng.randint(2, 4))]
        shift, c = rng.randint(-2, 2), rng.choice([None, 1, 2, 5])
        v = softcap.check_capped_shift(z, shift, c)
        cap = (lambda t: t) if c is None else (lambda t: c * math.tanh(t / c))
        gap = max(abs(a - b) for a, b in zip(probs([cap(t - shift) for t in z]), probs([cap(t) for t in z])))
        if v.status is Status.REFUTED and not gap > TOLERANCE:
            problems.append((k, "refuted, yet float64 sees no difference", z, shift, c))
        if v.status is not Status.REFUTED and gap > 1e-9:
            problems.append((k, f"{v.status}, yet the probabilities differ by {gap:.3g}", z, shift, c))
    return problems


def run_pair(lhs, rhs, equal: bool, seed: int) -> tuple[str, str]:
    """Classify the kernel's verdict on one pair: (outcome, detail)."""
    from symuat.expr.elementwise import sigma_alternative, sigma_exact
    from symuat.errors import KernelInconsistencyError, SymuatError, UnsupportedExpressionError
    from symuat.kernel import decide
    from symuat.kernel.status import Status

    truth = True if equal else judge_equal(lhs, rhs, seed)
    if equal and judge_equal(lhs, rhs, seed) is False:
        return "generator-bug", f"an 'equal' pair the judge shows unequal: {lhs} vs {rhs}"
    try:
        verdict = decide.check_identity(lhs, rhs)
    except UnsupportedExpressionError as exc:
        return "unsupported", str(exc)[:120]
    except KernelInconsistencyError as exc:  # two of the kernel's methods disagree: a bug
        return "crash", f"KernelInconsistencyError: {str(exc)[:200]} | {lhs} vs {rhs}"
    except SymuatError as exc:  # a clear error about the input (named operands), not a crash
        return "clear-error", f"{type(exc).__name__}: {str(exc)[:120]}"
    except Exception as exc:  # every other exception is a crash to report
        return "crash", f"{type(exc).__name__}: {str(exc)[:200]} | {lhs} vs {rhs}"
    status = verdict.status
    positive = status in (Status.PROVED, Status.PROVED_AT_SIZES, Status.NUMERIC_ONLY)
    if status is Status.REFUTED:
        cex = verdict.counterexample
        sigma = sigma_alternative if cex and "t² + 3t + 2" in (cex.reason or "") else sigma_exact
        if cex is not None and cex.values:
            sizes = {sp.Symbol(k, positive=True, integer=True): v for k, v in cex.sizes.items()}
            values = {k: (np.vectorize(Fraction, otypes=[object])(np.asarray(v, dtype=object))
                          if np.ndim(v) else v) for k, v in cex.values.items()}
            scalars = {k: Fraction(v) for k, v in cex.values.items() if np.ndim(v) == 0}
            rechk = judge_at(lhs, rhs, sizes, values, scalars, sigma)
            if rechk is True:
                return "false-refuted", f"the judge finds the counterexample equal: {lhs} vs {rhs} at {cex.sizes}"
        if truth is True:
            return "false-refuted", f"{lhs} vs {rhs}: {verdict.method}; {cex.reason if cex else ''}"[:300]
        return "refuted", ""
    if positive and truth is False:
        return "false-positive", f"{status.value}: {lhs} vs {rhs}"
    if positive:
        return status.value if truth else f"{status.value} (judge: undefined)", ""
    return f"other:{status.value}", ""


def fuzz(pairs: int, seed: int = 0, max_depth: int = 3, log=None, checkpoint=None) -> dict:
    rng = random.Random(seed)
    counts = {"equal": Counter(), "unequal": Counter()}
    problems = []
    start = time.perf_counter()
    for k in range(pairs):
        equal = k % 2 == 0
        lhs, rhs, rule = make_pair(rng, equal, max_depth)
        outcome, detail = run_pair(lhs, rhs, equal, seed=k)
        if not equal and outcome == "refuted":
            pass
        counts["equal" if equal else "unequal"][outcome] += 1
        if outcome in ("false-refuted", "false-positive", "crash", "generator-bug"):
            problems.append((k, "equal" if equal else "unequal", outcome, rule, detail))
        if log and (k + 1) % 100 == 0:
            log(f"{k + 1}/{pairs} pairs, {time.perf_counter() - start:.0f} s, problems {len(problems)}")
        if checkpoint and (k + 1) % 50 == 0:
            checkpoint({"counts": counts, "problems": problems, "seconds": time.perf_counter() - start,
                        "pairs": k + 1, "seed": seed, "max_depth": max_depth})
    return {"counts": counts, "problems": problems, "seconds": time.perf_counter() - start,
            "pairs": pairs, "seed": seed, "max_depth": max_depth}


def report_md(res: dict) -> str:
    c = res["counts"]
    lines = [
        "# Kernel soundness fuzz (`tools/fuzz.py`)",
        "",
        f"{res['pairs']} pairs (seed {res['seed']}, expression depth ≤ {res['max_depth']}), "
        f"{res['seconds']:.0f} s of CPU. Equal pairs: an expression and its image under known-true rewrites; "
        "unequal pairs: an expression and a mutant. Each pair judged by an evaluator written in "
        "`tools/fuzz.py` from the definitions (its own σ = 2t² − t + 3), independent of "
        "`symuat.kernel.evaluate`; every `refuted` counterexample re-evaluated by it.",
        "",
        "| pairs | outcome | count |",
        "|---|---|---:|",
    ]
    for kind in ("equal", "unequal"):
        for outcome, k in sorted(c[kind].items()):
            lines.append(f"| {kind} | {outcome} | {k} |")
    bad = Counter(p[2] for p in res["problems"])
    lines += [
        "",
        f"**false proved / proved-at-sizes / numeric-only: {bad['false-positive']}; "
        f"false refuted: {bad['false-refuted']}; crashes: {bad['crash']}; generator bugs: {bad['generator-bug']}; "
        f"clear `unsupported` errors: {c['equal']['unsupported'] + c['unequal']['unsupported']}; "
        f"other clear input errors: {c['equal']['clear-error'] + c['unequal']['clear-error']}.**",
        "",
        "An unequal pair the judge could not tell apart (a mutation that happens to be an identity, "
        "e.g. swapping the factors of a Kronecker product with a size-1 factor) is counted under its "
        "kernel status, not as a false positive.",
    ]
    if res["problems"]:
        lines += ["", "## Problems", ""]
        for k, kind, outcome, rule, detail in res["problems"][:50]:
            lines.append(f"- pair {k} ({kind}, {rule}): {outcome}: `{detail}`")
    return "\n".join(lines) + "\n"


def merge(results: list[dict]) -> dict:
    """One result from several runs (different seeds, e.g. one per core)."""
    out = {"counts": {"equal": Counter(), "unequal": Counter()}, "problems": [], "seconds": 0.0,
           "pairs": 0, "seed": ",".join(str(r["seed"]) for r in results),
           "max_depth": ",".join(sorted({str(r["max_depth"]) for r in results}))}
    for r in results:
        for kind in ("equal", "unequal"):
            out["counts"][kind].update(r["counts"][kind])
        out["problems"] += r["problems"]
        out["seconds"] += r["seconds"]
        out["pairs"] += r["pairs"]
    return out


def main(argv=None) -> int:
    import json

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--out", type=Path, help="write the Markdown report here")
    ap.add_argument("--json", type=Path, help="write the raw counts here (for --merge)")
    ap.add_argument("--merge", type=Path, nargs="+", help="merge raw counts of several runs instead of running")
    args = ap.parse_args(argv)
    if args.merge:
        res = merge([json.loads(p.read_text()) for p in args.merge])
    else:
        def save(partial):  # a long run leaves its counts so far on disk
            if args.json:
                args.json.write_text(json.dumps(partial, default=str))

        res = fuzz(args.pairs, args.seed, args.depth, log=lambda s: print(s, file=sys.stderr, flush=True),
                   checkpoint=save)
    if args.json:
        args.json.write_text(json.dumps(res, default=str))
    text = report_md(res)
    if args.out:
        args.out.write_text(text)
    print(text)
    bad = [p for p in res["problems"] if p[2] != "generator-bug"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
