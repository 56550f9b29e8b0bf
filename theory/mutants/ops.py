"""Mutation operators on Python source, located with :mod:`ast` (issue 15's "small, plausible mistakes").

Each :class:`Mutant` replaces one source segment (line/column span of an AST node) by a new text:

- ``const*2``: a numeric constant that is an operand of arithmetic (not an index, shape or keyword) doubled;
- ``drop-sqrt``: ``sqrt(x)`` (math/numpy/torch, or ``x ** 0.5``) replaced by ``x``;
- ``drop-divisor``: ``a / b`` with a non-constant ``b`` replaced by ``a`` (a missing 1/m or 1/√n);
- ``exponent+1``: ``a ** k`` with a constant ``k`` replaced by ``a ** (k + 1)``;
- ``off-by-one``: ``a ± 1`` replaced by ``a``;
- ``flip-sign``: a unary minus removed.

Never inside an index, a keyword argument or an f-string (message text).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

OPERATORS = ("const*2", "drop-sqrt", "drop-divisor", "exponent+1", "off-by-one", "flip-sign")
_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.FloorDiv)


@dataclass(frozen=True)
class Mutant:
    path: str          # relative to the repository root
    function: str      # enclosing function (qualified within the module), "" at module level
    op: str
    line: int
    col: int
    end_line: int
    end_col: int
    old: str
    new: str

    @property
    def key(self) -> str:
        return f"{self.path}:{self.line}:{self.col}:{self.op}"

    def apply(self, source: str) -> str:
        lines = source.splitlines(keepends=True)
        start = sum(len(x) for x in lines[: self.line - 1]) + _byte_to_char(lines[self.line - 1], self.col)
        end = sum(len(x) for x in lines[: self.end_line - 1]) + _byte_to_char(lines[self.end_line - 1], self.end_col)
        if source[start:end] != self.old:
            raise ValueError(f"{self.key}: source changed under the mutant ({source[start:end]!r} != {self.old!r})")
        return source[:start] + self.new + source[end:]


def _byte_to_char(line: str, col: int) -> int:
    return len(line.encode("utf-8")[:col].decode("utf-8", errors="ignore"))


def _is_sqrt_call(n: ast.AST) -> bool:
    return (isinstance(n, ast.Call) and len(n.args) == 1 and not n.keywords
            and ((isinstance(n.func, ast.Attribute) and n.func.attr == "sqrt")
                 or (isinstance(n.func, ast.Name) and n.func.id == "sqrt")))


def _number(n: ast.AST) -> bool:
    return isinstance(n, ast.Constant) and type(n.value) in (int, float)


class _Finder(ast.NodeVisitor):
    def __init__(self, path: str, source: str):
        self.path, self.src, self.out, self.stack = path, source, [], []
        self.parents: dict[int, ast.AST] = {}

    def seg(self, n: ast.AST) -> str:
        return ast.get_source_segment(self.src, n) or ""

    def add(self, n: ast.AST, op: str, new: str) -> None:
        old = self.seg(n)
        if old and new != old:
            self.out.append(Mutant(self.path, ".".join(self.stack), op, n.lineno, n.col_offset, n.end_lineno,
                                   n.end_col_offset, old, new))

    def generic_visit(self, node):
        for child in ast.iter_child_nodes(node):
            self.parents[id(child)] = node
        super().generic_visit(node)

    def _scope(self, node):
        self.stack.append(node.name)
        self.generic_visit(node)
        self.stack.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scope

    def visit_BinOp(self, n: ast.BinOp):
        if not self.stack:  # module-level constants are configuration, covered through their users
            return self.generic_visit(n)
        L, R = self.seg(n.left), self.seg(n.right)
        for side in (n.left, n.right):
            if _number(side) and side.value not in (0, 1, -1) and not isinstance(n.op, ast.Pow):
                self.add(side, "const*2", repr(side.value * 2))
        if isinstance(n.op, ast.Div) and not _number(n.right):
            self.add(n, "drop-divisor", f"({L})")
        if isinstance(n.op, ast.Pow) and _number(n.right):
            if n.right.value == 0.5:
                self.add(n, "drop-sqrt", f"({L})")
            else:
                self.add(n, "exponent+1", f"({L}) ** ({R} + 1)")
        if isinstance(n.op, (ast.Add, ast.Sub)) and _number(n.right) and n.right.value == 1:
            self.add(n, "off-by-one", f"({L})")
        self.generic_visit(n)

    def visit_Call(self, n: ast.Call):
        if self.stack and _is_sqrt_call(n):
            self.add(n, "drop-sqrt", f"({self.seg(n.args[0])})")
        self.generic_visit(n)

    def visit_UnaryOp(self, n: ast.UnaryOp):
        if self.stack and isinstance(n.op, ast.USub) and not _number(n.operand):
            parent = self.parents.get(id(n))
            if not isinstance(parent, (ast.Subscript, ast.Slice, ast.keyword)):
                self.add(n, "flip-sign", f"({self.seg(n.operand)})")
        self.generic_visit(n)


def mutants(path: str, source: str) -> list[Mutant]:
    """Every mutant of one file (``path`` relative to the repository root), in source order."""
    tree = ast.parse(source)
    f = _Finder(path, source)
    f.visit(tree)
    inside_index = _index_spans(tree)
    keep = [m for m in f.out if (m.line, m.col) not in inside_index]
    return sorted(set(keep), key=lambda m: (m.line, m.col, m.op))


def _index_spans(tree: ast.AST) -> set[tuple[int, int]]:
    """Start positions of nodes inside subscripts or keyword arguments (indices, shapes, dims, options) and inside
    f-strings (a message's text: a mutant there is equivalent for every numerical check)."""
    out = set()
    for n in ast.walk(tree):
        roots = ([n.slice] if isinstance(n, ast.Subscript) else [k.value for k in n.keywords] if isinstance(n, ast.Call)
                 else [n] if isinstance(n, ast.JoinedStr) else [])
        for r in roots:
            for m in ast.walk(r):
                if hasattr(m, "lineno"):
                    out.add((m.lineno, m.col_offset))
    return out
