"""A Prometheus counter of failures by kind, whose label value is always ``metric_label(kind)``.

Each distinct label value is a time series Prometheus keeps, so a label that takes whatever producers
send can grow without end. This counter's label takes only what `failure_kinds.metric_label`
gives: one series per registered kind, per declared kind and for ``"_other"``, and at most 512 more for
the namespaced values of servers that declare nothing (the first ones the process labels), whatever is
counted. The kind is also given to `failure_kinds.validate_failure_kind`, which warns once about a
wrong one; nothing here raises for a bad kind.

This is the only module of the package that imports ``prometheus_client``: the ``prometheus`` extra
(``pip install ".[prometheus]"`` in a clone).
"""

from __future__ import annotations

from prometheus_client import REGISTRY, CollectorRegistry, Counter

from failure_kinds import metric_label, validate_failure_kind


class FailureCounter:
    """A counter with one label, the failure kind, as made by `failure_counter`."""

    def __init__(self, counter: Counter) -> None:
        self.counter = counter
        """The ``prometheus_client`` counter, labelled by the kind alone."""

    def inc(self, kind: object, amount: float = 1) -> None:
        """Count ``amount`` failures of ``kind`` in the series labelled ``metric_label(kind)``."""
        self.counter.labels(metric_label(validate_failure_kind(kind))).inc(amount)


def failure_counter(
    name: str,
    documentation: str,
    registry: CollectorRegistry | None = REGISTRY,
    labelname: str = "failure_kind",
) -> FailureCounter:
    """A counter ``name`` labelled ``labelname``, registered in ``registry`` as ``prometheus_client``'s own
    ``Counter`` is: the default registry unless another is given, none with ``registry=None``."""
    return FailureCounter(Counter(name, documentation, [labelname], registry=registry))


__all__ = ["FailureCounter", "failure_counter"]
