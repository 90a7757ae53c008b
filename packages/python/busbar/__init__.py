"""Busbar, the Azure Service Bus broker, as a Python package.

The wheel installs the `busbar` binary into the environment's scripts directory (so it is on the
PATH of an activated virtual environment) and `busbar.testing`, a test kit that is also a pytest
plugin. `binary()` tells where the binary is.
"""

import os
import shutil
import sysconfig
from importlib import metadata

try:
    __version__ = metadata.version("busbar")
except metadata.PackageNotFoundError:  # run from the source tree (BUSBAR_BIN names the binary)
    __version__ = "0+source"

_NAME = "busbar.exe" if os.name == "nt" else "busbar"


def binary():
    """The path of the `busbar` binary: `BUSBAR_BIN` if set, else the one this package installed
    beside the interpreter's scripts, else the first on the PATH."""
    chosen = os.environ.get("BUSBAR_BIN")
    if chosen:
        return chosen
    installed = os.path.join(sysconfig.get_path("scripts"), _NAME)
    if os.access(installed, os.X_OK):
        return installed
    found = shutil.which(_NAME)
    if found:
        return found
    raise FileNotFoundError(
        f"no busbar binary: not in {os.path.dirname(installed)}, not on the PATH, "
        "and BUSBAR_BIN is not set"
    )
