"""A failure's kind on OpenTelemetry spans and metrics, as the attribute ``error.type``.

OpenTelemetry's semantic conventions name ``error.type`` as the class of an error and ask that it stay low
cardinality, since backends index it and metrics split on it. Whatever a producer passes as the kind,
these helpers set `failure_kinds.metric_label` of it, never the value itself: a registered or
declared kind is itself, an older label its replacement's kind, anything unexpected ``"_other"``, so
``error.type`` takes no more distinct values than metric_label gives. The value is also given to
`failure_kinds.validate_failure_kind`, which warns once about a wrong one; nothing here raises for
a bad kind.

This is the only module of the package that imports OpenTelemetry, and it needs only its API: the
``otel`` extra (``pip install ".[otel]"`` in a clone). Which SDK and exporter record the spans and the
counts is the application's choice, as OpenTelemetry intends for libraries.
"""

from __future__ import annotations

from opentelemetry.trace import Status, StatusCode

from failure_kinds import metric_label, validate_failure_kind

TYPE_CHECKING = False
if TYPE_CHECKING:
    from opentelemetry.metrics import Counter, Meter
    from opentelemetry.trace import Span
    from opentelemetry.util.types import Attributes

ERROR_TYPE = "error.type"
"""The attribute that holds the failure's kind, the semantic conventions' name for an error's class."""


def record_failure(span: Span, kind: object, reason: str | None = None) -> str:
    """Mark ``span`` as failed with ``kind``: the attribute ``error.type`` set to ``metric_label(kind)``
    and the status ERROR, described by ``reason`` (the occurrence's free text, which belongs in the status
    and never in an attribute a backend groups by). Returns the label it set."""
    label = metric_label(validate_failure_kind(kind))
    span.set_attribute(ERROR_TYPE, label)
    span.set_status(Status(StatusCode.ERROR, reason))
    return label


class FailureCounter:
    """An OpenTelemetry counter of failures by kind, as made by `failure_counter`."""

    def __init__(self, counter: Counter) -> None:
        self.counter = counter
        """The OpenTelemetry instrument the counts go to."""

    def add(self, kind: object, amount: float = 1, attributes: Attributes = None) -> None:
        """Count ``amount`` failures of ``kind``, with ``error.type`` set to ``metric_label(kind)`` and the
        other ``attributes`` given; an ``error.type`` among them is replaced, so it stays bounded."""
        label = metric_label(validate_failure_kind(kind))
        self.counter.add(amount, {**(attributes or {}), ERROR_TYPE: label})


def failure_counter(
    meter: Meter,
    name: str = "failure_kinds.failures",
    unit: str = "{failure}",
    description: str = "Failed rollouts, by failure kind (error.type).",
) -> FailureCounter:
    """A counter of failures by kind, created on ``meter`` as ``meter.create_counter`` would."""
    return FailureCounter(meter.create_counter(name, unit=unit, description=description))


__all__ = ["ERROR_TYPE", "FailureCounter", "failure_counter", "record_failure"]
