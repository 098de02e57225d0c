"""Parsing, verifying and printing Strata IR with every dialect Strata knows."""

from __future__ import annotations

from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, math, memref, scf, vector
from xdsl.dialects.builtin import (
    ComplexType,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    IntAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Operation
from xdsl.irdl import VerificationContext, IRDLOperation
from xdsl.parser import Parser
from xdsl.utils.mlir_lexer import MLIRTokenKind
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException

from strata.dialects.graph import Graph
from strata.dialects.tile import Tile
from strata.dialects.token import Token
from strata.dialects.vsla import Vsla
from strata.support.dtypes import compact_splat
from strata.support.errors import IRError
from strata.support.locations import location_prefix

STRATA_DIALECTS = {"graph": lambda: Graph, "tile": lambda: Tile, "token": lambda: Token, "vsla": lambda: Vsla}


def make_context() -> Context:
    """A context with the upstream dialects Strata's levels use and Strata's own."""
    ctx = Context()
    for dialect in (builtin.Builtin, func.Func, arith.Arith, math.Math, memref.MemRef, scf.Scf, vector.Vector):
        ctx.load_dialect(dialect)
    for factory in STRATA_DIALECTS.values():
        ctx.load_dialect(factory())
    return ctx


class LocatingParser(Parser):
    """A parser that records each op's source position as a FileLineColLoc, so
    verifier diagnostics can say where the offending op is."""

    def __init__(self, ctx: Context, text: str | bytes, name: str, line_offset: int = 0):
        super().__init__(ctx, text, name)
        self.line_offset = line_offset

    def parse_operation(self) -> Operation:
        start = self._current_token.span.get_location()
        op = super().parse_operation()
        if not isinstance(op.location, FileLineColLoc):
            op.location = FileLineColLoc(
                StringAttr(start.file),
                IntAttr(start.line + self.line_offset),
                IntAttr(start.col),
            )
        return op

    def parse_dense_int_or_fp_elements_attr(self, type):
        """`dense<...>` as xDSL parses it, except that a splat (`dense<1.0> :
        tensor<50000000xf32>`, or one element given in hex) stays one stored element
        (support.dtypes.is_compact_splat) instead of being filled out: xDSL 0.74 builds
        a Python list of every element, then packs it (gigabytes and tens of seconds for
        a 110-byte input)."""
        start = self.pos
        splat = self._parse_optional_splat(type)
        if splat is not None:
            return splat
        self._resume_from(start)
        return super().parse_dense_int_or_fp_elements_attr(type)

    def _parse_optional_splat(self, type) -> DenseIntOrFPElementsAttr | None:
        """A compact splat, or None (the caller rewinds and parses the general way)."""
        self.parse_punctuation("<", " in dense attribute")
        token = self._current_token
        if token.kind == MLIRTokenKind.L_SQUARE or token.kind == MLIRTokenKind.GREATER:
            return None  # a literal list or an empty literal
        if token.kind == MLIRTokenKind.STRING_LIT:
            if len(token.text) > 2 * MAX_ELEMENT_BYTES + 4:  # "0x" and quotes
                return None  # more than one element: not a splat (and not decoded twice)
            hex_string = self.parse_str_literal()
            element = None
        else:
            element = self._parse_tensor_literal_element()
        if self.parse_optional_punctuation(">") is None:
            return None
        if type is None:
            self.parse_punctuation(":", " in dense attribute")
            type = self._parse_dense_literal_type()
        element_type = type.get_element_type()
        if isinstance(element_type, ComplexType) or prod(type.get_shape()) <= 1:
            return None
        if element is None:
            try:
                data = bytes.fromhex(hex_string[2:])
            except ValueError:
                return None
            return compact_splat(type, data) if len(data) == element_type.compile_time_size else None
        value = element.to_type(self, element_type)
        if isinstance(element_type, IntegerType):
            value = element_type.get_normalized_value(value)
        return compact_splat(type, element_type.pack([value]))


MAX_ELEMENT_BYTES = 16
"""The largest element a dense literal holds (complex f64)."""


def parse_module(text: str, name: str = "<input>") -> ModuleOp:
    """Parse and verify a module; any problem is an IRError with a located diagnostic."""
    try:
        module = LocatingParser(make_context(), text, name).parse_module()
    except ParseError as e:
        raise IRError(str(e)) from None
    verify(module)
    return module


def property_error(op: Operation) -> str | None:
    """A property that breaks its declared constraint, named (xDSL's own message
    says what is wrong but not which property)."""
    if not isinstance(op, IRDLOperation):
        return None
    for name, definition in type(op).get_irdl_definition().properties.items():
        if name in op.properties:
            try:
                definition.constr.verify(op.properties[name], VerificationContext())
            except VerifyException as e:
                return f"property '{name}' = {op.properties[name]} is invalid: {e}"
    return None


def verification_error(module: ModuleOp) -> str | None:
    """The first op that fails to verify, as a diagnostic naming the op and its location.

    xDSL's verifier checks every property's constraint too; only when an op fails is
    `property_error` asked which property is at fault (its message wins, as it names the
    property), so valid IR is not checked twice."""
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except (VerifyException, DiagnosticException) as e:
            message = property_error(op) or str(e)
        except Exception:
            # A verifier tripping over an invalid property: report the property.
            if (message := property_error(op)) is None:
                raise
        else:
            continue
        if f"'{op.name}'" not in message:
            message = f"'{op.name}': {message}"
        return f"{location_prefix(op)}error: {message}"
    return None


def verify(module: ModuleOp) -> None:
    if (error := verification_error(module)) is not None:
        raise IRError(error)


def as_module(module_or_text: ModuleOp | str) -> ModuleOp:
    if isinstance(module_or_text, ModuleOp):
        verify(module_or_text)
        return module_or_text
    return parse_module(module_or_text)
