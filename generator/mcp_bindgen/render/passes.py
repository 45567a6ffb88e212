"""Structural fixes to datamodel-code-generator's output, as libcst transforms (never regexes)."""

from __future__ import annotations

import json
import re

import libcst as cst

from ..errors import BindgenError


class _ModuleOnly(cst.CSTTransformer):
    """A pass that rewrites only the module's list of statements (in `leave_Module`): libcst need not
    walk the tree below them, which is most of the generator's time when it does."""

    def visit_Module(self, node: cst.Module) -> bool:
        return False


class _StatementsOnly(cst.CSTTransformer):
    """A pass that rewrites statements and never looks inside an expression: libcst skips every
    expression subtree (most nodes of a models module), still calling the pass's `leave_` methods."""

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.BaseExpression):
            return False
        return super().on_visit(node)


class DropTopLevel(_ModuleOnly):
    """Remove top-level classes and assignments with the given names (e.g. the document-root model)."""

    def __init__(self, names: set[str]) -> None:
        self.names = names

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        body = [stmt for stmt in updated_node.body if _defined_name(stmt) not in self.names]
        return updated_node.with_changes(body=body)


class StripHeaderComments(_ModuleOnly):
    """Drop the tool's own header comment; the pipeline writes ours."""

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return updated_node.with_changes(header=[])


class TypedExtras(_StatementsOnly):
    """`__annotations__ = {'__pydantic_extra__': T}` -> `__pydantic_extra__: T = Field(init=False)`.

    Replacing a class's `__annotations__` wholesale hides the fields from type checkers; the
    annotated attribute is pydantic's documented way to type extra keys.
    """

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine:
        if len(updated_node.body) != 1 or not isinstance(updated_node.body[0], cst.Assign):
            return updated_node
        assign = updated_node.body[0]
        target = assign.targets[0].target
        if not (isinstance(target, cst.Name) and target.value == "__annotations__"):
            return updated_node
        value = assign.value
        if not isinstance(value, cst.Dict) or len(value.elements) != 1:
            return updated_node
        element = value.elements[0]
        if not isinstance(element, cst.DictElement):
            return updated_node
        extra_type = _modern_dict(element.value)
        annotated = cst.AnnAssign(
            target=cst.Name("__pydantic_extra__"),
            annotation=cst.Annotation(extra_type),
            value=cst.parse_expression("Field(init=False)"),
        )
        return updated_node.with_changes(body=[annotated])


class RecursiveAliasesFirst(_ModuleOnly):
    """Put a self-recursive type alias before the aliases that refer back to it.

    The tool emits `JSONArray = TypeAliasType("JSONArray", list["JSONValue"])` before `JSONValue`,
    a mutual recursion pyright cannot resolve. Defining the recursive alias first, with the bodies of
    the aliases it refers to inlined (so it only refers to itself), reads the same to pydantic and
    type-checks; the other aliases then refer to it by name.
    """

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        body: list[cst.BaseStatement] = list(updated_node.body)
        aliases = {name: index for index, stmt in enumerate(body) if (name := _type_alias_name(stmt))}
        for name, index in sorted(aliases.items(), key=lambda item: item[1]):
            stmt = body[index]
            if name not in _string_refs(stmt):
                continue
            earlier = [n for n, i in aliases.items() if i < index and name in _string_refs(body[i])]
            if not earlier:
                continue
            # After inlining, the group refers only to itself: it goes first, right after the
            # imports, so no class annotation reaches it while pyright is still evaluating it.
            bodies = {n: _alias_value(body[aliases[n]]) for n in earlier}
            # A type alias statement (see _type_alias_name) stays one when names in it are replaced.
            inlined = cst.ensure_type(stmt.visit(_InlineNames(bodies)), cst.SimpleStatementLine)
            recursive = inlined.with_changes(
                leading_lines=[
                    cst.EmptyLine(
                        comment=cst.Comment(
                            "# Pyright reports this self-reference as a variable when another module of the package is"
                        )
                    ),
                    cst.EmptyLine(
                        comment=cst.Comment(
                            "# checked first (order-dependent; checked alone the file is clean), so this file opts out:"
                        )
                    ),
                    cst.EmptyLine(comment=cst.Comment("# pyright: reportInvalidTypeForm=false")),
                ]
            )
            group: list[cst.BaseStatement] = [
                recursive,
                *(
                    cst.ensure_type(body[aliases[n]].visit(_UnquoteName(name)), cst.SimpleStatementLine)
                    for n in sorted(earlier, key=aliases.__getitem__)
                ),
            ]
            moved_indexes = {index, *(aliases[n] for n in earlier)}
            remaining = [b for i, b in enumerate(body) if i not in moved_indexes]
            top = next((i for i, b in enumerate(remaining) if not _is_import(b)), len(remaining))
            body = remaining[:top] + group + remaining[top:]
            aliases = {n: i for i, s in enumerate(body) if (n := _type_alias_name(s))}
        return updated_node.with_changes(body=body)


class _InlineNames(cst.CSTTransformer):
    """Replace references (bare or quoted) to the given aliases with their bodies."""

    def __init__(self, bodies: dict[str, cst.BaseExpression]) -> None:
        self.bodies = bodies

    def leave_Name(self, original_node: cst.Name, updated_node: cst.BaseExpression) -> cst.BaseExpression:
        if isinstance(updated_node, cst.Name) and updated_node.value in self.bodies:
            return self.bodies[updated_node.value]
        return updated_node

    def leave_SimpleString(
        self, original_node: cst.SimpleString, updated_node: cst.BaseExpression
    ) -> cst.BaseExpression:
        value = original_node.evaluated_value
        if isinstance(value, str) and value in self.bodies:
            return self.bodies[value]
        return updated_node


class _UnquoteName(cst.CSTTransformer):
    """`"JSONValue"` -> `JSONValue` once JSONValue is defined above."""

    def __init__(self, name: str) -> None:
        self.name = name

    def leave_SimpleString(
        self, original_node: cst.SimpleString, updated_node: cst.BaseExpression
    ) -> cst.BaseExpression:
        return cst.Name(self.name) if original_node.evaluated_value == self.name else updated_node


def _imports_name(stmt: cst.CSTNode, name: str) -> bool:
    """`stmt` is a `from ... import` that binds `name` (e.g. `from typing import Any, Annotated`)."""
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    for small in stmt.body:
        if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
            if any((alias.evaluated_alias or alias.evaluated_name) == name for alias in small.names):
                return True
    return False


def _is_import(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in stmt.body
    )


def _alias_value(stmt: cst.CSTNode) -> cst.BaseExpression:
    assign = stmt.body[0]  # type: ignore[attr-defined]
    return assign.value.args[1].value


def _type_alias_name(stmt: cst.CSTNode) -> str | None:
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return None
    assign = stmt.body[0]
    if not (isinstance(assign, cst.Assign) and isinstance(assign.value, cst.Call)):
        return None
    func = assign.value.func
    if isinstance(func, cst.Name) and func.value == "TypeAliasType":
        target = assign.targets[0].target
        return target.value if isinstance(target, cst.Name) else None
    return None


def _string_refs(stmt: cst.CSTNode) -> set[str]:
    """Identifiers inside string literals of a statement (forward references), minus its name string."""
    found: set[str] = set()

    class Collect(cst.CSTVisitor):
        def visit_SimpleString(self, node: cst.SimpleString) -> None:
            found.update(
                re.findall(
                    r"[A-Za-z_][A-Za-z0-9_]*", node.evaluated_value if isinstance(node.evaluated_value, str) else ""
                )
            )

    assign = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) else None
    if isinstance(assign, cst.Assign) and isinstance(assign.value, cst.Call) and len(assign.value.args) > 1:
        assign.value.args[1].visit(Collect())
    return found


class DropRebuildCalls(_ModuleOnly):
    """Remove the tool's `X.model_rebuild()` calls: models are built lazily, each on first use.

    `_base.py` sets `defer_build`, so importing models.py builds no validator at all; pydantic
    builds a model's validator and serializer the first time it validates or dumps one. A process
    pays (in import time and memory) only for the types its traffic uses, and the rebuild calls the
    tool emits for forward references would only force that work up front.
    """

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return updated_node.with_changes(body=[stmt for stmt in updated_node.body if not _is_rebuild_call(stmt)])


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


class RejectNullForOptional(_StatementsOnly):
    """An optional field whose schema type has no `null` must not accept an explicit null.

    The tool renders such fields `X | None = None` (None stands for "absent" in Python); this adds
    `AfterValidator(not_null)` so a JSON `null` is refused with the field's path, like the schema.
    `fields` maps a class name to the Python names of its optional, non-nullable fields (from the IR).
    """

    def __init__(self, fields: dict[str, set[str]]) -> None:
        self.fields = fields
        self._class: list[str] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._class.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self._class.pop()
        return updated_node

    def leave_AnnAssign(self, original_node: cst.AnnAssign, updated_node: cst.AnnAssign) -> cst.AnnAssign:
        if not self._class or not isinstance(updated_node.target, cst.Name):
            return updated_node
        if updated_node.target.value not in self.fields.get(self._class[-1], ()):
            return updated_node
        validator = cst.SubscriptElement(cst.Index(cst.parse_expression("AfterValidator(not_null)")))
        annotation = updated_node.annotation.annotation
        if (
            isinstance(annotation, cst.Subscript)
            and isinstance(annotation.value, cst.Name)
            and annotation.value.value == "Annotated"
        ):
            elements = [
                *annotation.slice[:-1],
                annotation.slice[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT),
                validator,
            ]
            new = annotation.with_changes(slice=[e.with_changes(comma=cst.MaybeSentinel.DEFAULT) for e in elements])
        else:
            new = cst.Subscript(
                value=cst.Name("Annotated"),
                slice=[cst.SubscriptElement(cst.Index(annotation)), validator],
            )
        return updated_node.with_changes(annotation=updated_node.annotation.with_changes(annotation=new))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        added = [cst.parse_statement("from pydantic import AfterValidator")]
        body = list(updated_node.body)
        if not any(_imports_name(stmt, "Annotated") for stmt in body):  # the wrappers above need it
            added.insert(0, cst.parse_statement("from typing import Annotated"))
        added.append(cst.parse_statement("from ._base import not_null"))
        first_import = next((i for i, b in enumerate(body) if _is_import(b)), 0)
        last_import = max((i for i, b in enumerate(body) if _is_import(b)), default=first_import)
        body[last_import + 1 : last_import + 1] = added
        return updated_node.with_changes(body=body)


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


# Module-level helper the `WriteRequiredNulls` serializers call (one copy per models.py that needs it).
_REQUIRED_NULLS_HELPER = '''
def _with_required_nulls(
    model: object, data: dict[str, Any], info: SerializationInfo, fields: tuple[tuple[str, str], ...]
) -> dict[str, Any]:
    """`data` (the model as serialized) with each of `fields` (attribute, wire name) that is None
    written as null: the schema requires the key and allows null, so `exclude_none` must not drop
    it. An explicit `include`/`exclude` of the field still applies."""
    if info.exclude_none:
        for name, alias in fields:
            if (
                getattr(model, name) is None
                and (info.include is None or name in info.include)
                and (info.exclude is None or name not in info.exclude)
            ):
                data[alias if info.by_alias is not False else name] = None
    return data
'''


class WriteRequiredNulls(_StatementsOnly):
    """A required field that may be null is written as null even when nulls are excluded.

    The runtime serialises with `exclude_none` (None stands for "absent" in Python), which would drop
    a required `ttl: int | None` that is None and send a message the schema rejects. Each class with
    such fields gets a wrap `model_serializer` that puts them back (under the wire name when dumping
    by alias); classes without them are untouched, so their serialisation stays in pydantic-core.
    `fields` maps a class name to its (Python name, wire name) pairs (from the IR).
    """

    def __init__(self, fields: dict[str, tuple[tuple[str, str], ...]]) -> None:
        self.fields = fields
        self._changed = False

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        pairs = self.fields.get(updated_node.name.value)
        if not pairs:
            return updated_node
        self._changed = True
        listed = ", ".join(f"({json.dumps(name)}, {json.dumps(wire)})" for name, wire in pairs)
        names = ", ".join(f"`{name}`" for name, _ in pairs)
        method = cst.parse_statement(
            '@model_serializer(mode="wrap")\n'
            # No return annotation: pydantic would take it for the serialised schema (a bare object).
            "def _write_required_nulls(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo):\n"
            f'    """{names}: required, may be null; written even when nulls are excluded."""\n'
            f"    return _with_required_nulls(self, handler(self), info, ({listed},))\n"
        )
        body = cst.ensure_type(updated_node.body, cst.IndentedBlock)
        return updated_node.with_changes(body=body.with_changes(body=[*body.body, method]))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if not self._changed:
            return updated_node
        body: list[cst.BaseStatement] = list(updated_node.body)
        added: list[cst.BaseStatement] = []
        if not any(_imports_name(stmt, "Any") for stmt in body):
            added.append(cst.parse_statement("from typing import Any"))
        added.append(
            cst.parse_statement(
                "from pydantic import SerializationInfo, SerializerFunctionWrapHandler, model_serializer"
            )
        )
        last_import = max((i for i, b in enumerate(body) if _is_import(b)), default=-1)
        helper = cst.parse_module(_REQUIRED_NULLS_HELPER).body
        body[last_import + 1 : last_import + 1] = [*added, *helper]
        return updated_node.with_changes(body=body)


class EagerAnnotations(_ModuleOnly):
    """Drop `from __future__ import annotations`; quote only the forward references.

    With the future import every field annotation is a string, and pydantic compiles and evaluates
    each one when the class is created: about half of importing a version's models (543 `compile`
    calls for 2025-11-25). Evaluated by the interpreter as the class body runs, the annotations cost
    next to nothing; only a reference to a definition further down the module (or to the class
    itself) must stay a string, which pydantic resolves when the model is first used (`defer_build`).

    A forward name is quoted where it stands (`list["Task"]`), or with the whole `|` union around it
    (`"Task | None"`: a string does not support `|`); `Annotated` metadata and `Literal` values are
    left alone.

    `references` maps a class name to the names its fields refer to (from the IR): a class that
    refers to nothing defined at or after it is left as it is without walking its annotations.
    """

    def __init__(self, references: dict[str, set[str]]) -> None:
        self.references = references

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        body = [stmt for stmt in updated_node.body if not _is_future_import(stmt)]
        defined_at = {name: index for index, stmt in enumerate(body) if (name := _defined_name(stmt)) is not None}
        out: list[cst.BaseStatement] = []
        for index, stmt in enumerate(body):
            if isinstance(stmt, cst.ClassDef):
                name = stmt.name.value
                refers_to = self.references.get(name)  # unknown to the IR: look at every annotation
                later = {n for n, at in defined_at.items() if at >= index}
                if refers_to is None or refers_to & later:
                    stmt = cst.ensure_type(stmt.visit(_QuoteForwardFields(later)), cst.ClassDef)
            out.append(stmt)
        return updated_node.with_changes(body=out)


def _is_future_import(stmt: cst.CSTNode) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.ImportFrom)
        and isinstance(stmt.body[0].module, cst.Name)
        and stmt.body[0].module.value == "__future__"
    )


class _QuoteForwardFields(_StatementsOnly):
    """Within one class: the annotations of its fields (not of its methods) with `later` quoted."""

    def __init__(self, later: set[str]) -> None:
        self.later = later
        self._depth = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # a method's annotations are not fields (and name only imported types)

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self._depth += 1
        return self._depth == 1  # nested classes are not emitted by the tool; leave any alone

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self._depth -= 1
        return updated_node

    def leave_AnnAssign(self, original_node: cst.AnnAssign, updated_node: cst.AnnAssign) -> cst.AnnAssign:
        annotation = _quote_forward(updated_node.annotation.annotation, self.later)
        return updated_node.with_changes(annotation=updated_node.annotation.with_changes(annotation=annotation))


def _names_in(expr: cst.CSTNode) -> set[str]:
    found: set[str] = set()

    class Collect(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            found.add(node.value)

    expr.visit(Collect())
    return found


def _quote_forward(expr: cst.BaseExpression, later: set[str]) -> cst.BaseExpression:
    if not _names_in(expr) & later:
        return expr
    if isinstance(expr, cst.Name):
        return cst.SimpleString(f'"{expr.value}"')
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.BitOr):
        code = cst.Module(body=[]).code_for_node(expr)
        if '"' in code and "'" in code:
            raise BindgenError(f"cannot quote the annotation {code!r}: it holds both kinds of quote")
        return cst.SimpleString(f"'{code}'" if '"' in code else f'"{code}"')
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name):
        head = expr.value.value
        if head == "Literal":
            return expr
        elements = list(expr.slice)
        # Annotated[T, metadata...]: only T is a type; the metadata are ordinary values.
        indexes = range(1) if head == "Annotated" else range(len(elements))
        for i in indexes:
            element = elements[i]
            if isinstance(element.slice, cst.Index):
                elements[i] = element.with_changes(
                    slice=element.slice.with_changes(value=_quote_forward(element.slice.value, later))
                )
        return expr.with_changes(slice=elements)
    code = cst.Module(body=[]).code_for_node(expr)
    raise BindgenError(f"cannot quote a forward reference inside the annotation {code!r}")


# The tool's constrained-type calls and the type each constrains.
_CONSTRAINED = {"conint": "int", "confloat": "float", "constr": "str"}


class ConstrainedAsAnnotated(cst.CSTTransformer):
    """`conint(ge=0, strict=True)` (what the tool writes for a constrained member of a union) ->
    `Annotated[int, Field(ge=0, strict=True)]`: a call is no type expression for a type checker;
    the `Annotated` form validates the same. The tool's import of the function is dropped."""

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        func = updated_node.func
        if not isinstance(func, cst.Name) or func.value not in _CONSTRAINED:
            return updated_node
        field = cst.Call(func=cst.Name("Field"), args=updated_node.args)
        return cst.Subscript(
            value=cst.Name("Annotated"),
            slice=[
                cst.SubscriptElement(cst.Index(cst.Name(_CONSTRAINED[func.value]))),
                cst.SubscriptElement(cst.Index(field)),
            ],
        )

    def leave_ImportFrom(
        self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom
    ) -> cst.ImportFrom | cst.RemovalSentinel:
        if isinstance(updated_node.names, cst.ImportStar):
            return updated_node
        kept = [a for a in updated_node.names if not (isinstance(a.name, cst.Name) and a.name.value in _CONSTRAINED)]
        if len(kept) == len(updated_node.names):
            return updated_node
        if not kept:
            return cst.RemoveFromParent()
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated_node.with_changes(names=kept)
