"""Busbar for test suites: `Broker` starts a broker on free ports with its test controls, and,
when pytest is installed, this module is a pytest plugin (registered by the wheel) with the
fixtures `busbar` (the session's broker, reset before the test), `busbar_factory` (brokers of
the test's own) and `busbar_options` (override it to configure the session's broker)."""

from .broker import Broker
from .controls import ControlError

__all__ = ["Broker", "ControlError"]

try:
    import pytest  # noqa: F401
except ImportError:  # used without pytest: the broker alone
    pass
else:
    from .fixtures import busbar, busbar_factory, busbar_options, busbar_session
    from .fixtures import pytest_runtest_makereport

    __all__ += ["busbar", "busbar_factory", "busbar_options", "busbar_session"]
