"""failure_kinds.otel against the real OpenTelemetry SDK: its in-memory span exporter and metric reader."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest

pytest.importorskip("opentelemetry.sdk")

from helpers import KIND_CASES, LABEL_BOUND, garbage_kinds, warnings_of
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, NumberDataPoint
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode, Tracer

import failure_kinds as fk
from failure_kinds.otel import ERROR_TYPE, FailureCounter, failure_counter, record_failure

Traced, Counted = tuple[Tracer, InMemorySpanExporter], tuple[FailureCounter, InMemoryMetricReader]


@pytest.fixture
def traced() -> Iterator[Traced]:
    """A tracer and the exporter that holds its finished spans."""
    exporter, provider = InMemorySpanExporter(), TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider.get_tracer("tests"), exporter
    provider.shutdown()


@pytest.fixture
def counted() -> Iterator[Counted]:
    """A failure counter, with swe_env declared, and the reader of what it counts."""
    fk.declare_namespace("swe_env", ["patch_apply_failed"])
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    yield failure_counter(provider.get_meter("tests")), reader
    provider.shutdown()


def points(reader: InMemoryMetricReader) -> list[NumberDataPoint]:
    """The data points of the failure counter, the one metric the tests record."""
    data = reader.get_metrics_data()
    assert data is not None
    (metric,) = [metric for resource in data.resource_metrics for scope in resource.scope_metrics
                 for metric in scope.metrics]  # fmt: skip
    assert (metric.name, metric.unit) == ("failure_kinds.failures", "{failure}")
    return [point for point in metric.data.data_points if isinstance(point, NumberDataPoint)]


@pytest.mark.parametrize(("kind", "label", "warns"), KIND_CASES)
def test_a_kind_is_its_bounded_label_on_the_span_and_the_counter(
    kind: object, label: str, warns: bool, traced: Traced, counted: Counted, caplog: pytest.LogCaptureFixture
) -> None:
    (tracer, exporter), (counter, reader) = traced, counted
    with tracer.start_as_current_span("rollout") as span:
        assert record_failure(span, kind, "no verdict after 3 tries") == label
    (recorded,) = exporter.get_finished_spans()
    assert recorded.attributes == {ERROR_TYPE: label}
    assert (recorded.status.status_code, recorded.status.description) == (
        StatusCode.ERROR,
        "no verdict after 3 tries",
    )
    counter.add(kind)
    counter.add(kind, 2, attributes={"region": "eu", ERROR_TYPE: "a raw value"})
    counted = {tuple(sorted((point.attributes or {}).items())): point.value for point in points(reader)}
    assert counted == {((ERROR_TYPE, label),): 1, ((ERROR_TYPE, label), ("region", "eu")): 2}
    # Reported once (record_failure), as validate_failure_kind reports a value, and never raised.
    assert len(warnings_of(caplog)) == warns


def test_garbage_keeps_error_type_bounded_and_kinds_counted_exactly(traced: Traced, counted: Counted) -> None:
    (tracer, exporter), (counter, reader) = traced, counted
    garbage = garbage_kinds(10_000)
    expected = Counter[str]()
    for index, value in enumerate(garbage):
        kind = list(fk.FailureKind)[index % len(fk.FailureKind)]
        counter.add(kind)
        counter.add(value)
        expected[kind.value] += 1
        with tracer.start_as_current_span("rollout") as span:
            record_failure(span, value)
    spans = exporter.get_finished_spans()
    labelled = {str(span.attributes[ERROR_TYPE]) for span in spans if span.attributes}
    assert len(spans) == len(garbage)
    assert fk.OTHER_LABEL in labelled
    assert len(labelled) <= LABEL_BOUND
    recorded = points(reader)
    # The SDK folds what passes its own limit (2,000 sets) into an overflow point: none here.
    assert all(ERROR_TYPE in (point.attributes or {}) for point in recorded)
    counted = {str((point.attributes or {})[ERROR_TYPE]): point.value for point in recorded}
    assert len(counted) <= LABEL_BOUND
    assert {value: counted[value] for value in expected} == expected
    assert sum(counted.values()) == 2 * len(garbage)
