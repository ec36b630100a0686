"""The check registry: ``@check`` records a check's name and arguments so its verdict can be re-run.

A spec is plain JSON: ``{"check": "updated", "args": {"table": "orders", "where": {...}, "to": {...}}}``.
Values JSON cannot hold are tagged: ``{"$decimal": "45.50"}``, ``{"$datetime": "..."}``,
``{"$date": "..."}``, a list whose order does not matter ``{"$unordered": [...]}``, a nested check
``{"$check": spec}``, a module-level function ``{"$callable": "module:qualname"}``.

Third-party checks are found through the entry-point group ``passhat.checks`` (entry-point name = check name).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import functools
import importlib
import inspect
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from importlib.metadata import entry_points
from typing import Any, ParamSpec, overload

from passhat.checks._values import Unordered, unordered
from passhat.checks._verdict import ROLES, Check, CheckContext, Claim, Diagnostic, Verdict

ENTRY_POINT_GROUP = "passhat.checks"

P = ParamSpec("P")


class SpecError(ValueError):
    """A check spec cannot be written or re-built (the message says which check and which argument)."""


class BuiltCheck:
    """A check built by a registered factory: callable like any check, and it knows its own spec."""

    def __init__(
        self, name: str, arguments: dict[str, Any], inner: Callable[..., Any], role: str | None = None
    ) -> None:
        self.name = name
        self.arguments = arguments
        self._inner = inner
        self.role = role or getattr(inner, "role", None)

    def __repr__(self) -> str:
        return f"<check {self.name}>"

    def __call__(self, ctx: CheckContext, /) -> Verdict:
        verdict = evaluate(self._inner, ctx, name=self.name)
        if verdict.check != self.name:
            verdict = Verdict(verdict.passed, self.name, [], [verdict], error=None, role=self.role)
        elif verdict.role is None and self.role is not None:
            verdict = dataclasses.replace(verdict, role=self.role)
        try:
            spec: dict[str, Any] | None = self.spec
        except SpecError:
            spec = None
        return dataclasses.replace(verdict, spec=spec)

    def claims(self, ctx: CheckContext) -> set[Claim]:
        """What this check accounts for: rows and columns ``no_other_writes`` in the same ``all_of`` allows."""
        return claims_of(self._inner, ctx)

    def matches(self, ctx: CheckContext) -> set[tuple[str, str]]:
        """Rows this check found exactly as expected (among the rows it claims)."""
        return matches_of(self._inner, ctx)

    @property
    def spec(self) -> dict[str, Any]:
        """The JSON-serialisable spec that rebuilds this check with ``build_check``."""
        return {"check": self.name, "args": {name: encode(value) for name, value in self.arguments.items()}}


def claims_of(candidate: object, ctx: CheckContext) -> set[Claim]:
    """What a check accounts for, right or near misses (whole rows and single columns); none for a plain callable."""
    method = getattr(candidate, "claims", None)
    return {tuple(claim) for claim in method(ctx)} if callable(method) else set()


def matches_of(candidate: object, ctx: CheckContext) -> set[tuple[str, str]]:
    """The rows a check found exactly as expected; the rows of its claims when it does not say."""
    method = getattr(candidate, "matches", None)
    if callable(method):
        return set(method(ctx))
    return {(claim[0], claim[1]) for claim in claims_of(candidate, ctx)}


def check_name(candidate: object) -> str:
    name = getattr(candidate, "name", None)
    if isinstance(name, str):
        return name
    return str(getattr(candidate, "__name__", type(candidate).__name__))


def evaluate(candidate: Callable[..., Any], ctx: CheckContext, *, name: str | None = None) -> Verdict:
    """Run any check (a built check or a plain callable returning a Verdict or a bool), never raising.

    A check that raises or returns something else gives a failing verdict with ``error`` set: a broken check
    is reported as such, not as the agent's failure.
    """
    label = name or check_name(candidate)
    role = getattr(candidate, "role", None)
    try:
        result = candidate(ctx)
    except Exception as exc:  # a check's own bug must not take the grader down
        error = f"the check {label} raised {type(exc).__name__}: {exc}"
        return Verdict(False, label, [Diagnostic(label, error)], error=error)
    if isinstance(result, Verdict):
        if result.role is None and isinstance(role, str):
            return dataclasses.replace(result, role=role)
        return result
    if isinstance(result, bool):
        diagnostics = [] if result else [Diagnostic(label, f"{label} returned False")]
        return Verdict(result, label, diagnostics, role=role if isinstance(role, str) else None)
    error = f"the check {label} returned {type(result).__name__}; a check returns a Verdict or a bool"
    return Verdict(False, label, [Diagnostic(label, error)], error=error)


_REGISTRY: dict[str, Callable[..., Any]] = {}


def _where(function: Callable[..., Any]) -> str:
    return f"{function.__module__}:{function.__qualname__}"


@overload
def check(factory: Callable[P, Any], /) -> Callable[P, BuiltCheck]: ...
@overload
def check(
    *, name: str | None = None, role: str | None = None
) -> Callable[[Callable[P, Any]], Callable[P, BuiltCheck]]: ...
def check(
    factory: Callable[P, Any] | None = None, /, *, name: str | None = None, role: str | None = None
) -> Callable[P, BuiltCheck] | Callable[[Callable[P, Any]], Callable[P, BuiltCheck]]:
    """Register a check factory: a function that builds a check from the scenario's parameters.

    ``@check`` or ``@check(name="acme.refund_issued", role="required_write")``. Calling the factory returns a
    ``BuiltCheck`` that records the name and arguments, so its verdict carries a spec and ``build_check(spec)``
    rebuilds it. ``role`` declares what the check checks (one of ``ROLES``: the failure classifier names a
    failure from the roles of the checks that failed, so a team's own check is classified like a built-in one).
    """
    if role is not None and role not in ROLES:
        raise ValueError(f"@check(role={role!r}): a role is one of {', '.join(ROLES)}")

    def register(function: Callable[P, Any]) -> Callable[P, BuiltCheck]:
        registered_name = name or function.__name__
        existing = _REGISTRY.get(registered_name)
        if existing is not None and _where(existing) != _where(function):
            raise ValueError(
                f"a check named {registered_name!r} is already registered by {_where(existing)}; "
                "give this one another name with @check(name=...)"
            )
        signature = inspect.signature(function)

        @functools.wraps(function)
        def build(*args: P.args, **kwargs: P.kwargs) -> BuiltCheck:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as exc:
                raise TypeError(f"check {registered_name}: {exc}") from None
            arguments: dict[str, Any] = {}
            for parameter_name, value in bound.arguments.items():
                kind = signature.parameters[parameter_name].kind
                if kind is inspect.Parameter.VAR_POSITIONAL:
                    arguments[parameter_name] = list(value)
                elif kind is inspect.Parameter.VAR_KEYWORD:
                    arguments.update(value)
                else:
                    arguments[parameter_name] = value
            inner = function(*args, **kwargs)
            if not callable(inner):
                raise TypeError(
                    f"check factory {registered_name} returned {type(inner).__name__}; "
                    "it must return a check (a callable taking a CheckContext)"
                )
            return BuiltCheck(registered_name, arguments, inner, role)

        build.__passhat_check_name__ = registered_name  # type: ignore[attr-defined]
        _REGISTRY[registered_name] = build
        return build

    if factory is not None:
        return register(factory)
    return register


def _load_entry_point(name: str) -> Callable[..., Any] | None:
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if entry.name != name:
            continue
        try:
            loaded = entry.load()
        except Exception as exc:
            raise SpecError(
                f"the check {name!r} is provided by {entry.value} (entry point group {ENTRY_POINT_GROUP!r}) "
                f"but importing it failed: {type(exc).__name__}: {exc}"
            ) from exc
        if not callable(loaded):
            raise SpecError(f"entry point {name!r} ({entry.value}) is not a check factory")
        if getattr(loaded, "__passhat_check_name__", None) is None:
            loaded = check(name=name)(loaded)
        factory: Callable[..., Any] = loaded
        _REGISTRY.setdefault(name, factory)
        return factory
    return None


def lookup(name: str) -> Callable[..., BuiltCheck]:
    """The factory registered for a check name (in-process first, then ``passhat.checks`` entry points)."""
    factory = _REGISTRY.get(name) or _load_entry_point(name)
    if factory is None:
        known = ", ".join(sorted(registered_checks())) or "none"
        raise SpecError(
            f"no check named {name!r}: register it with @check or install the package that provides it "
            f"(entry point group {ENTRY_POINT_GROUP!r}); known checks: {known}"
        )
    return factory


def registered_checks() -> dict[str, str]:
    """Every known check name and where it comes from (``module:function`` or the entry point's value)."""
    known = {entry.name: entry.value for entry in entry_points(group=ENTRY_POINT_GROUP)}
    known.update({name: _where(factory) for name, factory in _REGISTRY.items()})
    return dict(sorted(known.items()))


def encode(value: Any) -> Any:
    """A check argument as JSON (tagged where JSON has no type for it)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Decimal):
        return {"$decimal": format(value, "f")}
    if isinstance(value, _dt.datetime):
        return {"$datetime": value.isoformat()}
    if isinstance(value, _dt.date):
        return {"$date": value.isoformat()}
    if isinstance(value, BuiltCheck):
        return {"$check": value.spec}
    if isinstance(value, Unordered):
        return {"$unordered": [encode(item) for item in value.items]}
    if isinstance(value, Mapping):
        if not all(isinstance(name, str) for name in value):
            raise SpecError(f"a check argument mapping has a non-string key: {dict(value)!r}")
        return {name: encode(item) for name, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [encode(item) for item in value]
    if callable(value):
        module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", "")
        if module and qualname and "<" not in qualname:
            return {"$callable": f"{module}:{qualname}"}
        raise SpecError(
            f"{value!r} is a lambda or a nested function, so a spec cannot name it; define it at module "
            "level or register it with @check"
        )
    raise SpecError(f"a check argument of type {type(value).__name__} cannot be written to a spec: {value!r}")


def _import_callable(reference: str) -> Any:
    module_name, _, qualname = reference.partition(":")
    try:
        target: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise SpecError(f"cannot import the check function {reference!r}: {exc}") from None
    return target


def decode(value: Any) -> Any:
    """The inverse of ``encode``."""
    if isinstance(value, list):
        return [decode(item) for item in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        ((tag, payload),) = value.items()
        if tag == "$decimal":
            return Decimal(payload)
        if tag == "$datetime":
            return _dt.datetime.fromisoformat(payload)
        if tag == "$date":
            return _dt.date.fromisoformat(payload)
        if tag == "$check":
            return build_check(payload)
        if tag == "$unordered":
            return unordered(decode(payload))
        if tag == "$callable":
            return _import_callable(payload)
    return {name: decode(item) for name, item in value.items()}


def build_check(spec: Mapping[str, Any]) -> BuiltCheck:
    """Rebuild a check from its spec (as stored with a verdict)."""
    if not isinstance(spec, Mapping) or not isinstance(spec.get("check"), str):
        raise SpecError(f'a check spec looks like {{"check": name, "args": {{...}}}}, got {spec!r}')
    factory = lookup(spec["check"])
    raw_arguments = spec.get("args", {})
    if not isinstance(raw_arguments, Mapping):
        raise SpecError(f"the args of check {spec['check']!r} must be an object, got {raw_arguments!r}")
    arguments = {name: decode(value) for name, value in raw_arguments.items()}
    parameters = list(inspect.signature(factory).parameters.values())
    # Parameters before a *args must be passed by position too, or Python reports them given twice.
    star = next((i for i, p in enumerate(parameters) if p.kind is inspect.Parameter.VAR_POSITIONAL), -1)
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    for index, parameter in enumerate(parameters):
        if parameter.name not in arguments:
            continue
        value = arguments.pop(parameter.name)
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            positional.extend(value)
        elif parameter.kind is inspect.Parameter.POSITIONAL_ONLY or index < star:
            positional.append(value)
        else:
            keywords[parameter.name] = value
    keywords.update(arguments)  # whatever is left went to **kwargs
    try:
        return factory(*positional, **keywords)
    except TypeError as exc:
        raise SpecError(f"check {spec['check']!r} cannot be rebuilt from {dict(raw_arguments)!r}: {exc}") from None


def rerun(spec: Mapping[str, Any], ctx: CheckContext) -> Verdict:
    """Rebuild a check from its spec and run it on a context."""
    return build_check(spec)(ctx)


def as_checks(checks: Iterable[Any]) -> list[Check]:
    """Validate the members of ``all_of`` / ``any_of``: each must be callable."""
    members: list[Check] = []
    for member in checks:
        if not callable(member):
            raise TypeError(f"{member!r} is not a check: a check is a callable taking a CheckContext")
        members.append(member)
    return members
