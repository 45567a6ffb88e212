"""Structural fixes to datamodel-code-generator's output, as libcst transforms (never regexes)."""

from __future__ import annotations

import libcst as cst


class DropTopLevel(cst.CSTTransformer):
    """Remove top-level classes and assignments with the given names (e.g. the document-root model)."""

    def __init__(self, names: set[str]) -> None:
        self.names = names

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        body = [stmt for stmt in updated.body if _defined_name(stmt) not in self.names]
        return updated.with_changes(body=body)


class StripHeaderComments(cst.CSTTransformer):
    """Drop the tool's own header comment; the pipeline writes ours."""

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        return updated.with_changes(header=[])


class TypedExtras(cst.CSTTransformer):
    """`__annotations__ = {'__pydantic_extra__': T}` -> `__pydantic_extra__: T = Field(init=False)`.

    Replacing a class's `__annotations__` wholesale hides the fields from type checkers; the
    annotated attribute is pydantic's documented way to type extra keys.
    """

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine:
        if len(updated.body) != 1 or not isinstance(updated.body[0], cst.Assign):
            return updated
        assign = updated.body[0]
        target = assign.targets[0].target
        if not (isinstance(target, cst.Name) and target.value == "__annotations__"):
            return updated
        value = assign.value
        if not isinstance(value, cst.Dict) or len(value.elements) != 1:
            return updated
        element = value.elements[0]
        if not isinstance(element, cst.DictElement):
            return updated
        extra_type = _modern_dict(element.value)
        annotated = cst.AnnAssign(
            target=cst.Name("__pydantic_extra__"),
            annotation=cst.Annotation(extra_type),
            value=cst.parse_expression("Field(init=False)"),
        )
        return updated.with_changes(body=[annotated])


class RebuildEveryModel(cst.CSTTransformer):
    """Replace the tool's partial `X.model_rebuild()` list with one rebuild of every model, in order.

    A model that refers to a later one is left incomplete by pydantic until rebuilt, and would then
    be built on first use; rebuilding all of them at import (a no-op for the complete ones) means
    none is.
    """

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        body = [stmt for stmt in updated.body if not _is_rebuild_call(stmt)]
        models = [stmt.name.value for stmt in body if isinstance(stmt, cst.ClassDef)]
        if not models:
            return updated.with_changes(body=body)
        names = ", ".join(models)
        loop = cst.parse_statement(f"for _model in ({names},):\n    _model.model_rebuild()\n")
        return updated.with_changes(body=[*body, loop])


def _is_rebuild_call(stmt: cst.CSTNode) -> bool:
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return False
    expr = stmt.body[0]
    return (
        isinstance(expr, cst.Expr)
        and isinstance(expr.value, cst.Call)
        and isinstance(expr.value.func, cst.Attribute)
        and expr.value.func.attr.value == "model_rebuild"
    )


def _modern_dict(expr: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name) and expr.value.value == "Dict":
        return expr.with_changes(value=cst.Name("dict"))
    return expr


def _defined_name(stmt: cst.CSTNode) -> str | None:
    if isinstance(stmt, cst.ClassDef):
        return stmt.name.value
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        small = stmt.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            target = small.targets[0].target
            if isinstance(target, cst.Name):
                return target.value
        if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
            return small.target.value
    return None


def top_level_names(module: cst.Module) -> list[str]:
    return [name for name in (_defined_name(stmt) for stmt in module.body) if name is not None]


def apply(source: str, *transforms: cst.CSTTransformer) -> cst.Module:
    module = cst.parse_module(source)
    for transform in transforms:
        module = module.visit(transform)
    return module
