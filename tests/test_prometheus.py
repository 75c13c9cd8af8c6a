"""failure_kinds.prometheus, read back through prometheus_client's own exposition server over HTTP."""

from __future__ import annotations

import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator

import pytest

pytest.importorskip("prometheus_client")

from helpers import KIND_CASES, LABEL_BOUND, garbage_kinds, warnings_of
from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.parser import text_string_to_metric_families

import failure_kinds as fk
from failure_kinds.prometheus import FailureCounter, failure_counter

Scrape = Callable[[], dict[str, float]]


@pytest.fixture(scope="module")
def registry() -> CollectorRegistry:
    return CollectorRegistry()


# One server for the module: shutting one down waits for its loop's half-second poll.
@pytest.fixture(scope="module")
def scrape(registry: CollectorRegistry) -> Iterator[Scrape]:
    """Reads the counter's samples from /metrics of an exposition server on 127.0.0.1, by label value."""
    server, thread = start_http_server(0, addr="127.0.0.1", registry=registry)

    def read() -> dict[str, float]:
        url = f"http://127.0.0.1:{server.server_port}/metrics"
        with urllib.request.urlopen(url, timeout=30) as response:
            text = response.read().decode("utf-8")
        (family,) = [family for family in text_string_to_metric_families(text) if family.name == "failures"]
        return {sample.labels["failure_kind"]: sample.value for sample in family.samples
                if sample.name == "failures_total"}  # fmt: skip

    yield read
    server.shutdown()
    server.server_close()
    thread.join(timeout=30)


@pytest.fixture
def counter(registry: CollectorRegistry) -> Iterator[FailureCounter]:
    fk.declare_namespace("swe_env", ["patch_apply_failed"])
    counter = failure_counter("failures", "Failed rollouts by kind.", registry=registry)
    yield counter
    registry.unregister(counter.counter)


@pytest.mark.parametrize(("kind", "label", "warns"), KIND_CASES)
def test_a_kind_is_counted_under_its_bounded_label(
    kind: object,
    label: str,
    warns: bool,
    counter: FailureCounter,
    scrape: Scrape,
    caplog: pytest.LogCaptureFixture,
) -> None:
    counter.inc(kind)
    counter.inc(kind, 2.5)
    assert scrape() == {label: 3.5}
    assert len(warnings_of(caplog)) == warns


def test_garbage_gives_at_most_the_documented_series_and_kinds_count_exactly(
    counter: FailureCounter, scrape: Scrape
) -> None:
    garbage = garbage_kinds(10_000)
    expected = Counter[str]()
    for index, value in enumerate(garbage):
        kind = list(fk.FailureKind)[index % len(fk.FailureKind)]
        counter.inc(kind)
        counter.inc(value)
        expected[kind.value] += 1
    series = scrape()
    assert len(series) <= LABEL_BOUND
    assert series[fk.OTHER_LABEL] > 0
    assert {value: series[value] for value in expected} == expected
    assert sum(series.values()) == 2 * len(garbage)


def test_the_default_registry_is_prometheus_clients() -> None:
    from prometheus_client import REGISTRY

    counter = failure_counter("failure_kinds_test_failures", "Counted in the default registry.")
    try:
        counter.inc("cancelled")
        sample = REGISTRY.get_sample_value("failure_kinds_test_failures_total", {"failure_kind": "cancelled"})
        assert sample == 1
    finally:
        REGISTRY.unregister(counter.counter)
