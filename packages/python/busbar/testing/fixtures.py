"""The pytest side of `busbar.testing`: one broker for the whole session by default, reset
before each test that asks for it; a broker of its own for a test that asks for one; the
broker's log attached to the report of a test that failed."""

import pytest

from .broker import Broker


@pytest.fixture(scope="session")
def busbar_options():
    """Options of the session's broker (`Broker`'s keywords); override it in a conftest.py,
    e.g. to return `{"config": {...}}` or `{"storage": "file"}`."""
    return {}


@pytest.fixture(scope="session")
def busbar_session(busbar_options):
    """The broker shared by the whole test session, stopped at its end."""
    with Broker(**busbar_options) as broker:
        yield broker


@pytest.fixture
def busbar(busbar_session, request):
    """The session's broker, reset first: the configured entities, no messages."""
    busbar_session.reset()
    _used_by(request.node).append(busbar_session)
    return busbar_session


@pytest.fixture
def busbar_factory(request):
    """Starts brokers of the test's own (`busbar_factory(storage="file", config=...)`), all
    stopped when the test ends, however it ends."""
    started = []

    def start(**options):
        broker = Broker(**options)
        started.append(broker)
        _used_by(request.node).append(broker)
        return broker

    yield start
    for broker in started:
        broker.stop()


def _used_by(item):
    """The brokers a test used, kept on its item for the report hook."""
    if not hasattr(item, "busbar_brokers"):
        item.busbar_brokers = []
    return item.busbar_brokers


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Attaches the log of each broker the test used to its report when it failed."""
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for number, broker in enumerate(getattr(item, "busbar_brokers", ()), 1):
            report.sections.append((f"busbar log {number}", broker.log()))
